#include "backends/vm/bytecode/assembler.h"

#include <algorithm>
#include <iterator>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "graphrt/error.h"
#include "backends/vm/bytecode/decoder.h"
#include "backends/vm/bytecode/opcodes.h"
#include "backends/vm/host/signature.h"

namespace graphrt {
namespace vm {
namespace {

// ---------------------------------------------------------------- lexing
struct Token {
  enum Kind { kWord, kString, kPunct } kind;
  std::string text;
};
using Line = std::vector<Token>;

[[noreturn]] void syntax(int line, const std::string& why) {
  throw Error("vm assembler: " + why).with("line", std::to_string(line));
}

bool is_punct(char c) { return std::strchr("()[],:=", c) != nullptr; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

size_t lex_string(const std::string& s, size_t i, int line, std::string* out) {
  for (++i; i < s.size() && s[i] != '"'; ++i) {
    if (s[i] != '\\') {
      *out += s[i];
      continue;
    }
    if (++i >= s.size()) break;
    switch (s[i]) {
      case 'n': *out += '\n'; break;
      case 't': *out += '\t'; break;
      case '\\': *out += '\\'; break;
      case '"': *out += '"'; break;
      case 'x': {
        const int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
        const int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) syntax(line, "bad \\x escape");
        *out += static_cast<char>(hi * 16 + lo);
        i += 2;
        break;
      }
      default: syntax(line, std::string("unknown escape \\") + s[i]);
    }
  }
  if (i >= s.size()) syntax(line, "unterminated string");
  return i + 1;
}

Line lex_line(const std::string& s, int line) {
  Line tokens;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '#' || c == ';') break;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '"') {
      Token t{Token::kString, ""};
      i = lex_string(s, i, line, &t.text);
      tokens.push_back(t);
    } else if (is_punct(c)) {
      tokens.push_back(Token{Token::kPunct, std::string(1, c)});
      ++i;
    } else {
      size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])) && !is_punct(s[j]) && s[j] != '"' &&
             s[j] != '#' && s[j] != ';') {
        ++j;
      }
      tokens.push_back(Token{Token::kWord, s.substr(i, j - i)});
      i = j;
    }
  }
  return tokens;
}

// ---------------------------------------------------------------- numbers
int64_t parse_int(const std::string& text, int line, int64_t lo, int64_t hi) {
  errno = 0;
  char* end = nullptr;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  int64_t v = 0;
  if (hex) {
    // Hex spells raw bits: 0xFFFFFFFF is -1 for an i32 immediate.
    const uint64_t u = std::strtoull(text.c_str(), &end, 16);
    v = static_cast<int64_t>(u);
    if (hi == INT32_MAX && u <= UINT32_MAX) v = static_cast<int32_t>(static_cast<uint32_t>(u));
  } else {
    v = std::strtoll(text.c_str(), &end, 10);
  }
  if (text.empty() || errno != 0 || *end != '\0') syntax(line, "bad integer '" + text + "'");
  if (v < lo || v > hi) syntax(line, "integer out of range '" + text + "'");
  return v;
}

// Overflow is refused, not rounded to infinity: only "inf" spells infinity.
double parse_float(const std::string& text, int line) {
  if (text == "nan") return std::nan("");
  if (text == "-nan") return -std::nan("");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') syntax(line, "bad float '" + text + "'");
  const bool inf_literal = text.find_first_of("iI") != std::string::npos;
  if (std::isinf(v) && !inf_literal) syntax(line, "float out of range '" + text + "'");
  return v;
}

float parse_f32(const std::string& text, int line) {
  const double v = parse_float(text, line);
  // At least halfway above FLT_MAX would round to infinity.
  if (std::isfinite(v) && std::fabs(v) >= 0x1.ffffffp127) syntax(line, "f32 immediate out of range '" + text + "'");
  return static_cast<float>(v);
}

// Operand lists are u16-counted in the bytecode.
uint16_t count16(size_t n, int line, const char* what) {
  if (n > 0xFFFF) syntax(line, std::string("too many ") + what + " (" + std::to_string(n) + ", at most 65535)");
  return static_cast<uint16_t>(n);
}

// A signature written in the text; a malformed one is reported at its line.
Signature parse_signature_at(const std::string& cconv, int line) {
  try {
    return parse_signature(cconv);
  } catch (Error& e) {
    syntax(line, e.message());
  }
}

// ---------------------------------------------------------------- parsing
class Cursor {
 public:
  Cursor(const Line& tokens, int line) : t_(tokens), line_(line) {}
  bool done() const { return i_ >= t_.size(); }
  int line() const { return line_; }
  const Token& peek() const {
    if (done()) syntax(line_, "unexpected end of line");
    return t_[i_];
  }
  bool peek_punct(const char* p) const { return !done() && t_[i_].kind == Token::kPunct && t_[i_].text == p; }
  bool peek_word(const char* w) const { return !done() && t_[i_].kind == Token::kWord && t_[i_].text == w; }
  std::string word() {
    if (peek().kind != Token::kWord) syntax(line_, "expected a name or number, got '" + peek().text + "'");
    return t_[i_++].text;
  }
  std::string string() {
    if (peek().kind != Token::kString) syntax(line_, "expected a string literal");
    return t_[i_++].text;
  }
  void punct(const char* p) {
    if (!peek_punct(p)) syntax(line_, std::string("expected '") + p + "', got '" + peek().text + "'");
    ++i_;
  }
  bool accept_punct(const char* p) {
    if (!peek_punct(p)) return false;
    ++i_;
    return true;
  }
  void end() {
    if (!done()) syntax(line_, "unexpected '" + t_[i_].text + "'");
  }

 private:
  const Line& t_;
  size_t i_ = 0;
  int line_;
};

struct Fixup {
  size_t at;
  std::string label;
  int line;
};

class Assembler {
 public:
  explicit Assembler(const std::string& source) {
    std::istringstream in(source);
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) lines_.push_back({lex_line(text, n), n});
  }

  ModuleDef run() {
    declare_headers();
    for (size_t k = 0; k < lines_.size(); ++k) {
      Cursor c(lines_[k].first, lines_[k].second);
      if (c.done()) continue;
      const std::string head = c.word();
      if (head == "func") {
        k = function_body(k);
      } else {
        directive(head, c);
      }
    }
    if (def_.name.empty()) syntax(1, "missing 'module NAME' line");
    return std::move(def_);
  }

 private:
  // Pass 1: imports and function headers, so calls may refer forward.
  void declare_headers() {
    for (const auto& line : lines_) {
      Cursor c(line.first, line.second);
      if (c.done()) continue;
      const std::string head = c.word();
      if (head == "import") import(c);
      if (head == "global") global(c);
      if (head == "func") function_header(c);
    }
  }

  void import(Cursor& c) {
    ImportDecl decl;
    decl.full_name = c.word();
    decl.signature = c.string();
    decl.optional = c.peek_word("optional") && (c.word(), true);
    c.end();
    import_signatures_.push_back(parse_signature_at(decl.signature, c.line()));
    def_.imports.push_back(decl);
  }

  // global TYPE NAME, TYPE one of i32 i64 f32 f64 ref.
  void global(Cursor& c) {
    static const char* const kTypes[kValueTypeCount] = {"i32", "i64", "f32", "f64", "ref"};
    GlobalDef g;
    const std::string type = c.word();
    const auto* at = std::find_if(std::begin(kTypes), std::end(kTypes), [&](const char* t) { return type == t; });
    if (at == std::end(kTypes)) syntax(c.line(), "unknown global type '" + type + "' (i32 i64 f32 f64 ref)");
    g.type = static_cast<ValueType>(at - std::begin(kTypes));
    g.name = c.word();
    c.end();
    def_.globals.push_back(g);
  }

  uint32_t global_ref(Cursor& c) {
    const std::string w = c.word();
    if (w.size() < 2 || w[0] != '@') syntax(c.line(), "expected @global, got " + w);
    for (size_t i = 0; i < def_.globals.size(); ++i) {
      if (def_.globals[i].name == w.substr(1)) return static_cast<uint32_t>(i);
    }
    syntax(c.line(), "unknown global " + w + " (declare it with 'global TYPE NAME')");
  }

  void function_header(Cursor& c) {
    FunctionDef fn;
    fn.name = c.word();
    fn.signature = c.string();
    std::array<int, kValueTypeCount> counts;
    counts.fill(-1);
    while (!c.done()) {
      const std::string w = c.word();
      if (w == "export") {
        fn.exported = true;
      } else if (w == "regs") {
        while (!c.done()) {
          const std::string bank = c.word();
          c.punct("=");
          ValueType type;
          if (bank.size() != 1 || !register_kind(bank[0], &type)) syntax(c.line(), "unknown register bank " + bank);
          counts[static_cast<int>(type)] = static_cast<int>(parse_int(c.word(), c.line(), 0, 0xFFFF));
        }
      } else {
        syntax(c.line(), "unexpected '" + w + "' in func header");
      }
    }
    explicit_counts_.push_back(counts);
    function_signatures_.push_back(parse_signature_at(fn.signature, c.line()));
    def_.functions.push_back(fn);
  }

  void directive(const std::string& head, Cursor& c) {
    if (head == "module") {
      def_.name = c.word();
      if (c.peek_word("version")) {
        c.word();
        def_.version = static_cast<uint32_t>(parse_int(c.word(), c.line(), 0, UINT32_MAX));
      }
      c.end();
    } else if (head == "dependency") {
      Dependency d;
      d.name = c.word();
      d.min_version = static_cast<uint32_t>(parse_int(c.word(), c.line(), 0, UINT32_MAX));
      d.optional = c.peek_word("optional") && (c.word(), true);
      if (c.peek_word("from")) {
        c.word();
        d.source = c.string();
      }
      c.end();
      def_.dependencies.push_back(d);
    } else if (head == "rodata") {
      def_.rodata.push_back(c.string());
      c.end();
    } else if (head != "import" && head != "global") {
      syntax(c.line(), "unknown directive '" + head + "'");
    }
  }

  uint32_t intern(const std::string& s) {
    auto it = std::find(def_.rodata.begin(), def_.rodata.end(), s);
    if (it != def_.rodata.end()) return static_cast<uint32_t>(it - def_.rodata.begin());
    def_.rodata.push_back(s);
    return static_cast<uint32_t>(def_.rodata.size() - 1);
  }

  // ------------------------------------------------------------ bodies
  size_t function_body(size_t k) {
    fn_ = &def_.functions[fn_index_];
    code_.clear();
    labels_.clear();
    fixups_.clear();
    used_.fill(0);
    for (ValueType t : function_signatures_[fn_index_].arg_types()) ++arg_counts_[static_cast<int>(t)];
    bool first = true;
    for (++k; k < lines_.size(); ++k) {
      Cursor c(lines_[k].first, lines_[k].second);
      if (c.done()) continue;
      const std::string head = c.word();
      if (head == "end") {
        c.end();
        finish_function(c.line());
        return k;
      }
      if (c.accept_punct(":")) {
        c.end();
        if (!labels_.emplace(head, static_cast<uint32_t>(code_.size())).second) syntax(c.line(), "duplicate label " + head);
        put<uint8_t>(static_cast<uint8_t>(Op::Block));
      } else {
        if (first) put<uint8_t>(static_cast<uint8_t>(Op::Block));
        instruction(head, c);
      }
      first = false;
    }
    syntax(lines_.back().second, "function " + fn_->name + " lacks 'end'");
  }

  void finish_function(int line) {
    for (const Fixup& f : fixups_) {
      auto it = labels_.find(f.label);
      if (it == labels_.end()) syntax(f.line, "unknown label " + f.label);
      std::memcpy(&code_[f.at], &it->second, 4);
    }
    for (int b = 0; b < kValueTypeCount; ++b) {
      const int inferred = std::max(used_[b], arg_counts_[b]);
      const int given = explicit_counts_[fn_index_][b];
      if (given >= 0 && given < used_[b]) syntax(line, "regs count below a register in use");
      if (given < 0 && inferred > 0xFFFF) syntax(line, "function " + fn_->name + " needs too many registers");
      fn_->registers[b] = static_cast<uint16_t>(given >= 0 ? given : inferred);
    }
    fn_->code = code_;
    arg_counts_.fill(0);
    ++fn_index_;
  }

  template <typename T>
  void put(T v) {
    const size_t at = code_.size();
    code_.resize(at + sizeof(T));
    std::memcpy(&code_[at], &v, sizeof(T));
  }

  uint16_t reg(Cursor& c, ValueType type) {
    const std::string w = c.word();
    ValueType got;
    if (w.size() < 3 || w[0] != '%' || !register_kind(w[1], &got)) syntax(c.line(), "expected a register, got " + w);
    if (got != type) {
      syntax(c.line(), "register " + w + " has the wrong bank (expected " + value_type_name(type) + ")");
    }
    // Register counts are u16, so the last index a bank can hold is 65534.
    const int index = static_cast<int>(parse_int(w.substr(2), c.line(), 0, 0xFFFE));
    int& used = used_[static_cast<int>(type)];
    used = std::max(used, index + 1);
    return static_cast<uint16_t>(index);
  }

  void label(Cursor& c) {
    fixups_.push_back(Fixup{code_.size(), c.word(), c.line()});
    put<uint32_t>(0);
  }

  uint32_t function_ref(Cursor& c, Signature* sig) {
    const std::string w = c.word();
    if (w.size() < 2 || w[0] != '@') syntax(c.line(), "expected @function, got " + w);
    const std::string name = w.substr(1);
    for (size_t i = 0; i < def_.imports.size(); ++i) {
      if (def_.imports[i].full_name != name) continue;
      *sig = import_signatures_[i];
      return static_cast<uint32_t>(i) | kImportBit;
    }
    for (size_t i = 0; i < def_.functions.size(); ++i) {
      if (def_.functions[i].name != name) continue;
      *sig = function_signatures_[i];
      return static_cast<uint32_t>(i);
    }
    syntax(c.line(), "unknown function " + w + " (imports must be declared)");
  }

  void reg_list(Cursor& c, const std::vector<ValueType>& types, const char* open, const char* close) {
    c.punct(open);
    put<uint16_t>(count16(types.size(), c.line(), "registers in the list"));
    for (size_t k = 0; k < types.size(); ++k) {
      if (k) c.punct(",");
      put<uint16_t>(reg(c, types[k]));
    }
    c.punct(close);
  }

  void call_results(Cursor& c, const Signature& sig) {
    const std::vector<ValueType> types = sig.result_types();
    if (c.done()) {
      if (!types.empty()) syntax(c.line(), "call results missing");
      put<uint16_t>(0);
      return;
    }
    if (c.word() != "->") syntax(c.line(), "expected '->'");
    reg_list(c, types, "(", ")");
  }

  void call(Cursor& c) {
    Signature sig;
    put<uint32_t>(function_ref(c, &sig));
    if (sig.is_variadic()) syntax(c.line(), "variadic callee needs call.variadic");
    reg_list(c, sig.arg_types(), "(", ")");
    call_results(c, sig);
  }

  // Segments are only known after parsing, so the operands are buffered.
  void variadic_call(Cursor& c) {
    Signature sig;
    put<uint32_t>(function_ref(c, &sig));
    std::vector<uint16_t> segments, regs;
    c.punct("(");
    for (size_t k = 0; k < sig.args.size(); ++k) {
      if (k) c.punct(",");
      const SignatureItem& item = sig.args[k];
      if (!item.variadic) {
        segments.push_back(1);
        regs.push_back(reg(c, item.type));
        continue;
      }
      c.punct("[");
      size_t count = 0;
      while (!c.accept_punct("]")) {
        if (count) c.punct(",");
        for (size_t t = 0; t < item.tuple.size(); ++t) {
          if (t) c.punct(",");
          regs.push_back(reg(c, item.tuple[t]));
        }
        ++count;
      }
      segments.push_back(count16(count, c.line(), "span entries"));
    }
    c.punct(")");
    put<uint16_t>(count16(segments.size(), c.line(), "call segments"));
    for (uint16_t s : segments) put<uint16_t>(s);
    put<uint16_t>(count16(regs.size(), c.line(), "call arguments"));
    for (uint16_t r : regs) put<uint16_t>(r);
    call_results(c, sig);
  }

  void branch_table(Cursor& c) {
    c.punct("[");
    std::vector<std::string> names;
    while (!c.accept_punct("]")) {
      if (!names.empty()) c.punct(",");
      names.push_back(c.word());
    }
    put<uint16_t>(count16(names.size(), c.line(), "branch table targets"));
    for (const std::string& n : names) {
      fixups_.push_back(Fixup{code_.size(), n, c.line()});
      put<uint32_t>(0);
    }
  }

  void return_list(Cursor& c) {
    const std::vector<ValueType> types = function_signatures_[fn_index_].result_types();
    put<uint16_t>(count16(types.size(), c.line(), "return values"));
    for (size_t k = 0; k < types.size(); ++k) {
      if (k) c.punct(",");
      put<uint16_t>(reg(c, types[k]));
    }
  }

  void operand(char kind, Cursor& c) {
    ValueType type;
    if (register_kind(kind, &type)) return put<uint16_t>(reg(c, type));
    switch (kind) {
      case 'n': return put<int32_t>(static_cast<int32_t>(parse_int(c.word(), c.line(), INT32_MIN, INT32_MAX)));
      case 'N': return put<int64_t>(parse_int(c.word(), c.line(), INT64_MIN, INT64_MAX));
      case 'x': return put<float>(parse_f32(c.word(), c.line()));
      case 'X': return put<double>(parse_float(c.word(), c.line()));
      case 'L': return label(c);
      case 's': return put<uint32_t>(intern(c.string()));
      case 'g': return put<uint32_t>(global_ref(c));
      case 'c': return call(c);
      case 'v': return variadic_call(c);
      case 't': return branch_table(c);
      case 'R': return return_list(c);
      default: syntax(c.line(), std::string("operand kind ") + kind);
    }
  }

  void instruction(const std::string& mnemonic, Cursor& c) {
    const int opcode = opcode_from_mnemonic(mnemonic);
    if (opcode < 0 || opcode == static_cast<int>(Op::Block)) syntax(c.line(), "unknown instruction '" + mnemonic + "'");
    put<uint8_t>(static_cast<uint8_t>(opcode));
    const char* kinds = op_info(static_cast<uint8_t>(opcode))->operands;
    for (const char* k = kinds; *k; ++k) {
      if (k != kinds && *k != 'R') c.punct(",");
      operand(*k, c);
    }
    c.end();
  }

  std::vector<std::pair<Line, int>> lines_;
  ModuleDef def_;
  std::vector<std::array<int, kValueTypeCount>> explicit_counts_;
  // Parsed once, at the line that declares them.
  std::vector<Signature> import_signatures_;
  std::vector<Signature> function_signatures_;
  size_t fn_index_ = 0;
  FunctionDef* fn_ = nullptr;
  std::vector<uint8_t> code_;
  std::map<std::string, uint32_t> labels_;
  std::vector<Fixup> fixups_;
  std::array<int, kValueTypeCount> used_{};
  std::array<int, kValueTypeCount> arg_counts_{};
};

}  // namespace

ModuleDef assemble(const std::string& source) { return Assembler(source).run(); }

}  // namespace vm
}  // namespace graphrt

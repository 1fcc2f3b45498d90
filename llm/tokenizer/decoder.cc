#include "llm/tokenizer/decoder.h"

#include "graphrt/error.h"
#include "llm/tokenizer/byte_level_table.h"
#include "llm/tokenizer/string_pattern.h"
#include "llm/tokenizer/utf8.h"

namespace graphrt::llm {
namespace {

// All tokens to their bytes through the byte-level table (a token with a character outside
// it keeps its own UTF-8 bytes), then one valid UTF-8 text.
class ByteLevelDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& token : tokens) {
      std::string token_bytes;
      if (byte_level_decode(token, token_bytes)) bytes += token_bytes;
      else bytes += token;
    }
    tokens.assign(1, utf8_lossy(bytes));
  }
};

// "<0xXX>" tokens: runs of them become their bytes when those are UTF-8, else one U+FFFD per
// byte token.
class ByteFallbackDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string run;
    size_t run_tokens = 0;
    const auto flush = [&] {
      if (run_tokens == 0) return;
      if (is_valid_utf8(run)) {
        out.push_back(run);
      } else {
        for (size_t i = 0; i < run_tokens; ++i) out.emplace_back(kReplacementCharacter);
      }
      run.clear();
      run_tokens = 0;
    };
    for (std::string& token : tokens) {
      int byte = -1;
      if (token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>') byte = hex_byte(token[3], token[4]);
      if (byte >= 0) {
        run += static_cast<char>(byte);
        ++run_tokens;
      } else {
        flush();
        out.push_back(std::move(token));
      }
    }
    flush();
    tokens.swap(out);
  }

 private:
  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  static int hex_byte(char high, char low) {
    const int h = hex_digit(high), l = hex_digit(low);
    return h < 0 || l < 0 ? -1 : h * 16 + l;
  }
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(StringPattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) token = pattern_.replace_all(token, content_);
  }

 private:
  StringPattern pattern_;
  std::string content_;
};

class FuseDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& token : tokens) all += token;
    tokens.assign(1, std::move(all));
  }
};

// Removes up to `start` leading and `stop` trailing copies of one character from each token.
class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) {
      size_t begin = 0;
      for (size_t i = 0; i < start_ && token.compare(begin, content_.size(), content_) == 0; ++i) begin += content_.size();
      size_t end = token.size();
      for (size_t i = 0; i < stop_ && end >= begin + content_.size() &&
                         token.compare(end - content_.size(), content_.size(), content_) == 0;
           ++i) {
        end -= content_.size();
      }
      token = token.substr(begin, end - begin);
    }
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

// The replacement character becomes a space, except in the first token where it is dropped
// (unless prepend_scheme is "never"), as Hugging Face's Metaspace decoder does.
class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool drop_in_first) : replacement_(std::move(replacement)), drop_in_first_(drop_in_first) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      tokens[i] = StringPattern::literal(replacement_).replace_all(tokens[i], i == 0 && drop_in_first_ ? "" : " ");
    }
  }

 private:
  std::string replacement_;
  bool drop_in_first_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> read_decoder(const JsonAt& at) {
  if (at.is_null()) return nullptr;
  const std::string type = at.member("type").string();
  if (type == "Sequence") {
    const JsonAt list = at.member("decoders");
    std::vector<std::unique_ptr<Decoder>> steps;
    for (size_t i = 0; i < list.size(); ++i) {
      auto step = read_decoder(list.element(i));
      if (step) steps.push_back(std::move(step));
    }
    return std::make_unique<SequenceDecoder>(std::move(steps));
  }
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Replace") {
    return std::make_unique<ReplaceDecoder>(read_string_pattern(at.member("pattern")), at.member("content").string());
  }
  if (type == "Strip") {
    const std::string content = at.member("content").string();
    if (content.empty() || utf8_sequence_length(content, 0) != content.size()) {
      at.member("content").fail("is " + quote_cut(content) + ", not one character");
    }
    return std::make_unique<StripDecoder>(content, static_cast<size_t>(at.member("start").integer(0, 1 << 20)),
                                          static_cast<size_t>(at.member("stop").integer(0, 1 << 20)));
  }
  if (type == "Metaspace") {
    const std::string replacement = at.string_or("replacement", "\xE2\x96\x81");
    if (replacement.empty()) at.member("replacement").fail("is empty");
    std::string scheme = at.string_or("prepend_scheme", at.bool_or("add_prefix_space", true) ? "always" : "never");
    return std::make_unique<MetaspaceDecoder>(replacement, scheme != "never");
  }
  throw Error(ErrorKind::kUnsupported, at.origin + ": '" + at.path + "' has decoder type " + quote_cut(type) +
                                           ", which graphrt does not implement")
      .with("file", at.origin)
      .with("field", at.path + ".type");
}

std::unique_ptr<Decoder> byte_level_decoder() { return std::make_unique<ByteLevelDecoder>(); }

}  // namespace graphrt::llm

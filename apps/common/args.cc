#include <iostream>
#include "args.h"
#include "flag_hint.h"

#include <cctype>

namespace graphrt_apps {

void Args::parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() > 1 && arg[0] == '-' && !(arg.size() > 1 && std::isdigit(static_cast<unsigned char>(arg[1])))) {
      std::string name = arg, value;
      bool inline_value = false;
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        inline_value = true;
      }
      const FlagSpec* spec = nullptr;
      for (const FlagSpec& s : specs_)
        if (s.name == name) spec = &s;
      if (!spec) throw UsageError("unknown option '" + name + "'");
      if (spec->takes_value) {
        if (!inline_value) {
          if (i + 1 >= argc) throw UsageError("option '" + name + "' needs a value");
          value = argv[++i];
        }
      } else if (inline_value) {
        throw UsageError("option '" + name + "' takes no value");
      }
      auto& slot = values_[name];
      if (!slot.empty() && !spec->repeatable) throw UsageError("option '" + name + "' given twice");
      slot.push_back(value);
    } else {
      positional_.push_back(arg);
    }
  }
}

std::string Args::get(const std::string& flag, const std::string& fallback) const {
  auto it = values_.find(flag);
  return it == values_.end() ? fallback : it->second.back();
}

const std::vector<std::string>& Args::all(const std::string& flag) const {
  static const std::vector<std::string> empty;
  auto it = values_.find(flag);
  return it == values_.end() ? empty : it->second;
}

long long Args::get_int(const std::string& flag, long long fallback, long long min_value, long long max_value) const {
  if (!has(flag)) return fallback;
  std::string text = get(flag);
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw UsageError("option '" + flag + "' expects an integer, got '" + text + "'");
  if (v < min_value || v > max_value)
    throw UsageError("option '" + flag + "' must be in [" + std::to_string(min_value) + ", " +
                     std::to_string(max_value) + "], got " + text);
  return v;
}

std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      if (!out.empty() && out.back() != ' ') out += "; ";
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

int run_app(const char* app_name, int (*body)(int, char**), int argc, char** argv) {
  try {
    return body(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << app_name << ": error: " << one_line(e.what()) << " (see --help)\n";
    return 2;
  } catch (const graphrt::Error& e) {
    const std::string flag = flag_hint(e);
    std::cerr << app_name << ": error: " << one_line(e.what()) << (flag.empty() ? "" : " (use " + flag + ")") << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << app_name << ": error: " << one_line(e.what()) << "\n";
    return 1;
  }
}

}  // namespace graphrt_apps

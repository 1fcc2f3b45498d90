#include "args.h"
#include "flag_hint.h"

#include <cctype>
#include <cmath>
#include <iostream>

#include "graphrt/c_api.h"
#include "graphrt/user_mistakes.h"

namespace graphrt_apps {

Args::Args(AppHelp app, std::vector<FlagSpec> specs) : app_(std::move(app)), specs_(std::move(specs)) {
  specs_.push_back({"--help", false, false, "", "print this help and exit (also -h)"});
  specs_.push_back({"-h", false, false, "", ""});
  specs_.push_back({"--version", false, false, "", "print the version of the app and of libgraphrt, and exit"});
  for (const FlagSpec& s : specs_)
    if (s.help.empty() && s.name != "-h") throw std::logic_error(app_.name + ": flag " + s.name + " has no help text");
}

std::string Args::help_text() const {
  std::string out = "usage: " + app_.name + " " + app_.synopsis + "\n\n" + app_.summary + "\n\noptions:\n";
  for (const FlagSpec& s : specs_) {
    if (s.name == "-h") continue;
    std::string head = "  " + (s.name == "--help" ? std::string("-h, --help") : s.name);
    if (s.takes_value) head += " " + (s.value_name.empty() ? std::string("VALUE") : s.value_name);
    if (s.repeatable) head += " (repeatable)";
    // The help text, wrapped under the flag: a flag's line stays readable at 100 columns.
    out += head + "\n";
    std::string line = "      ";
    size_t pos = 0;
    while (pos < s.help.size()) {
      size_t space = s.help.find(' ', pos);
      std::string word = s.help.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
      pos = space == std::string::npos ? s.help.size() : space + 1;
      if (line.size() > 6 && line.size() + word.size() > 96) {
        out += line + "\n";
        line = "      ";
      }
      line += (line.size() > 6 ? " " : "") + word;
    }
    out += line + "\n";
  }
  if (!app_.examples.empty()) out += "\nexamples:\n" + app_.examples;
  if (!out.empty() && out.back() != '\n') out += "\n";
  return out;
}

std::string version_line(const std::string& app_name) { return app_name + " from " + graphrt_version(); }

std::string Args::unknown_option(const std::string& name) const {
  std::vector<std::string> names;
  for (const FlagSpec& s : specs_) names.push_back(s.name);
  const std::string close = graphrt::closest_matches(name, names, 3);
  return "unknown option '" + name + "'" + (close.empty() ? "" : " (did you mean " + close + "?)");
}

bool Args::parse(int argc, char** argv) {
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
      if (!spec) throw UsageError(unknown_option(name));
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
  if (has("--help") || has("-h")) {
    std::cout << help_text();
    return false;
  }
  if (has("--version")) {
    std::cout << version_line(app_.name) << "\n";
    return false;
  }
  return true;
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

double Args::get_double(const std::string& flag, double fallback, double min_value, double max_value) const {
  if (!has(flag)) return fallback;
  std::string text = get(flag);
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v))
    throw UsageError("option '" + flag + "' expects a number, got '" + text + "'");
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

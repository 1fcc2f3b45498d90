// Tiny command-line parser shared by the apps: --flag, --flag VALUE, --flag=VALUE, positionals,
// in any order. Every app answers --help / -h (each flag with its default, and examples) and
// --version the same way, from the flag table it declares here.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace graphrt_apps {

// A usage mistake: the app prints it on one line and exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct FlagSpec {
  std::string name;  // "--input"
  bool takes_value;
  bool repeatable = false;
  std::string value_name;  // "NAME=FILE" in "--input NAME=FILE"; "" for a switch
  std::string help;        // what it does and its default (required: --help lists every flag)
};

// What --help says around the flag table.
struct AppHelp {
  std::string name;      // "graphrt-run"
  std::string synopsis;  // "MODEL [options]"
  std::string summary;   // a few lines on what the app does
  std::string examples;  // one command per line
};

class Args {
 public:
  // --help, -h and --version are added to `specs`. Throws std::logic_error for a flag without help.
  Args(AppHelp app, std::vector<FlagSpec> specs);
  // Parses argv (throws UsageError). Returns false when it answered --help, -h or --version on
  // stdout: the app then exits 0.
  bool parse(int argc, char** argv);
  std::string help_text() const;

  bool has(const std::string& flag) const { return values_.count(flag) != 0; }
  std::string get(const std::string& flag, const std::string& fallback = "") const;
  const std::vector<std::string>& all(const std::string& flag) const;
  // Integer value with range check; throws UsageError naming the flag.
  long long get_int(const std::string& flag, long long fallback, long long min_value, long long max_value) const;
  // Floating-point value with range check; throws UsageError naming the flag.
  double get_double(const std::string& flag, double fallback, double min_value, double max_value) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::string unknown_option(const std::string& name) const;
  AppHelp app_;
  std::vector<FlagSpec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// "graphrt-run from graphrt 0.1.0 (TVM exports: ...)": what --version prints.
std::string version_line(const std::string& app_name);

// Replaces newlines so that an error stays on one line.
std::string one_line(const std::string& text);

// Runs an app's body and turns exceptions into one stderr line and an exit
// code: 2 for usage mistakes, 1 for every other error.
int run_app(const char* app_name, int (*body)(int, char**), int argc, char** argv);

}  // namespace graphrt_apps

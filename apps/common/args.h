// Tiny command-line parser shared by the apps: --flag, --flag VALUE, --flag=VALUE, positionals.
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
};

class Args {
 public:
  explicit Args(std::vector<FlagSpec> specs) : specs_(std::move(specs)) {}
  void parse(int argc, char** argv);  // throws UsageError

  bool has(const std::string& flag) const { return values_.count(flag) != 0; }
  std::string get(const std::string& flag, const std::string& fallback = "") const;
  const std::vector<std::string>& all(const std::string& flag) const;
  // Integer value with range check; throws UsageError naming the flag.
  long long get_int(const std::string& flag, long long fallback, long long min_value, long long max_value) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::vector<FlagSpec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// Replaces newlines so that an error stays on one line.
std::string one_line(const std::string& text);

// Runs an app's body and turns exceptions into one stderr line and an exit
// code: 2 for usage mistakes, 1 for every other error.
int run_app(const char* app_name, int (*body)(int, char**), int argc, char** argv);

}  // namespace graphrt_apps

// The model repository (Triton's layout): DIR/<model>/[config.json]/<version>/,
// the version folders named by integers, the highest served by default. Loads
// and unloads swap whole models under a lock; requests keep the shared_ptr they
// took, so neither drops a request in flight.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics/metrics.h"
#include "models/served_model.h"

namespace graphrt_serve {

struct IndexEntry {
  std::string name, version, state, reason;
};

// Who may change what is served (Triton's --model-control-mode): kNone, the default, serves
// what the repository held at start and refuses load and unload; kExplicit lets clients load
// and unload; kPoll reloads changed models from the folder on its own (Repository::poll) and
// refuses the API as kNone does.
enum class ModelControlMode { kNone, kExplicit, kPoll };
// "none", "explicit", "poll"; false for anything else.
bool parse_model_control_mode(const std::string& text, ModelControlMode* mode);
const char* model_control_mode_name(ModelControlMode mode);

class Repository {
 public:
  // `params_cache_dir` (the --params-cache folder; "" for none): graph models map their params
  // from DIR/<model>-<version>.params-cache (see params_cache_file).
  Repository(std::string root, Metrics* metrics, std::string params_cache_dir = "")
      : root_(std::move(root)), metrics_(metrics), params_cache_dir_(std::move(params_cache_dir)) {}

  // Loads every model folder; a model that fails stays listed as UNAVAILABLE with its reason.
  // Throws graphrt::Error only when the repository folder cannot be read.
  void load_all();
  // Throws graphrt::Error when the repository folder cannot be read.
  void check_folder() const { model_folders(); }
  // Whether DIR/<name>/ is a model folder the repository would load.
  bool has_model_folder(const std::string& name) const;
  // Set before load_all(). In kNone the index no longer looks at the folder after start (a folder
  // planted later is not listed); load and unload are refused by the front ends (control_refusal).
  void set_control_mode(ModelControlMode mode) { control_mode_ = mode; }
  // The deadline of a request whose model's config.json sets no timeout_us (0: none). Set
  // before load_all().
  void set_default_timeout_us(int64_t us) { default_timeout_us_ = us; }
  ModelControlMode control_mode() const { return control_mode_; }
  // Why a client may not load or unload models ("" when it may): one line saying how to enable it.
  std::string control_refusal(const char* action) const;
  // Where the repository's warnings go (a folder or file others may write, seen at load); the
  // default drops them. The app prints them.
  void set_warning_sink(std::function<void(const std::string&)> sink) { warn_ = std::move(sink); }
  // Where one line per loaded model version goes (name, version, kind, device, inputs); the
  // default drops them. The app prints them.
  void set_load_log_sink(std::function<void(const std::string&)> sink) { log_ = std::move(sink); }
  // Set before load_all(): the models load_all() loads in kExplicit ("*": all; none given:
  // none, as Triton's explicit mode). Ignored in the other modes, which load every folder.
  void set_startup_models(std::vector<std::string> names) { startup_models_ = std::move(names); }
  // kPoll: loads model folders added since the last poll, reloads those whose files changed
  // (name, size, modification time, inode), unloads those removed. Returns the models it changed.
  std::vector<std::string> poll();
  // The version to serve ("" or absent: the highest). Throws graphrt::Error: not found for
  // an unknown model or version, failed precondition for a model that is not ready.
  std::shared_ptr<ServedModel> find(const std::string& name, const std::string& version) const;
  // (Re)loads DIR/<name>; on failure the versions already loaded keep serving. Throws graphrt::Error.
  void load(const std::string& name);
  // Stops serving <name>; requests in flight finish. Throws not found for an unknown model.
  void unload(const std::string& name);

  std::vector<IndexEntry> index(bool ready_only) const;
  std::vector<std::string> versions(const std::string& name) const;  // loaded ones, ascending
  // Every model that should serve does, and the server is not stopping.
  bool all_ready() const;
  // The server is stopping: readiness turns false for every front end at once.
  void set_draining() { draining_ = true; }
  // True when <name> exists and is ready (the given version, or its default).
  bool model_ready(const std::string& name, const std::string& version) const;

 private:
  struct Entry {
    std::map<int64_t, std::shared_ptr<ServedModel>> versions;
    std::string state = "UNAVAILABLE";
    std::string reason;
  };
  std::map<int64_t, std::shared_ptr<ServedModel>> load_versions(const std::string& name) const;
  std::vector<std::string> model_folders() const;
  // A fingerprint of DIR/<name>'s files (paths, sizes, mtimes, inodes), for poll().
  std::string folder_state(const std::string& name) const;
  // Warns (through warn_) about DIR, DIR/<name> and what it holds when others may write them.
  void warn_if_writable_by_others(const std::string& name) const;

  std::string root_;
  Metrics* metrics_;
  std::string params_cache_dir_;
  mutable std::mutex mutex_;  // guards models_
  std::mutex load_mutex_;     // one load or unload at a time
  std::map<std::string, Entry> models_;
  std::map<std::string, std::string> polled_state_;  // poll(): folder_state at the last load
  ModelControlMode control_mode_ = ModelControlMode::kNone;
  int64_t default_timeout_us_ = 0;
  std::function<void(const std::string&)> warn_;
  std::atomic<bool> draining_{false};
  std::function<void(const std::string&)> log_;
  std::vector<std::string> startup_models_;
  bool loads_at_start(const std::string& name) const;
  void log_loaded(const ServedModel& model, const ModelConfig& config) const;
  std::atomic<bool> loading_{true};  // until load_all() ends: not ready
};

// The params cache file of a model version in `dir`: "<dir>/<model>-<version>.params-cache" (the
// version is an integer, so no two models' names meet).
std::string params_cache_file(const std::string& dir, const std::string& model, const std::string& version);

// True for a name that may be a folder of the repository (no separators, no leading dot).
bool valid_model_name(const std::string& name);

}  // namespace graphrt_serve

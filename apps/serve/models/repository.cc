#include "models/repository.h"

#include <dirent.h>
#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>

#include "graphrt/error.h"
#include "graphrt/regular_file.h"
#include "models/model_config.h"
#include "models/served_model.h"
#include "protocol/datatype.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

// A load frees much of what it read (a factory's decoded params once a params cache replaces
// them, the bytes read for their names), and glibc keeps freed heap mapped: this hands it back
// when the load ends, so that a replica holds what it serves with (about 1 MB per squeezenet1.1
// replica, docs/serving.md).
struct HeapTrimOnExit {
  ~HeapTrimOnExit() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
  }
};

bool is_dir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> subfolders(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) throw Error(Error::kind_of_errno(errno), "cannot read the folder").with("dir", dir);
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (!n.empty() && n[0] != '.' && is_dir(dir + "/" + n)) out.push_back(n);
  }
  closedir(d);
  return out;
}

// A version folder's number, or -1 when the name is not a non-negative integer.
int64_t version_number(const std::string& name) {
  if (name.empty() || name.size() > 18) return -1;
  int64_t v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

int64_t parse_version(const std::string& name, const std::string& version) {
  const int64_t v = version_number(version);
  if (v < 0)
    throw Error(ErrorKind::kNotFound, "unknown version '" + version + "' (versions are integers)")
        .with("model", name).with("field", "version");
  return v;
}

}  // namespace

std::string params_cache_file(const std::string& dir, const std::string& model, const std::string& version) {
  return dir + "/" + model + "-" + version + ".params-cache";
}

bool parse_model_control_mode(const std::string& text, ModelControlMode* mode) {
  if (text == "none") *mode = ModelControlMode::kNone;
  else if (text == "explicit") *mode = ModelControlMode::kExplicit;
  else if (text == "poll") *mode = ModelControlMode::kPoll;
  else return false;
  return true;
}

const char* model_control_mode_name(ModelControlMode mode) {
  switch (mode) {
    case ModelControlMode::kNone: return "none";
    case ModelControlMode::kExplicit: return "explicit";
    case ModelControlMode::kPoll: return "poll";
  }
  return "none";
}

std::string Repository::control_refusal(const char* action) const {
  if (control_mode_ == ModelControlMode::kExplicit) return "";
  return std::string(action) + " is not allowed: the server runs with --model-control-mode " +
         model_control_mode_name(control_mode_) +
         (control_mode_ == ModelControlMode::kPoll ? " (it reloads changed model folders itself)" : "") +
         "; start it with --model-control-mode explicit to let clients load and unload models";
}

bool valid_model_name(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.size() > 255) return false;
  for (char c : name)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

std::vector<std::string> Repository::model_folders() const {
  std::vector<std::string> out;
  for (const std::string& n : subfolders(root_))
    if (valid_model_name(n)) out.push_back(n);
  return out;
}

namespace {

// Calls f(path, stat) for `dir` and, recursively up to `depth` folders down, what it holds
// (names starting with a dot skipped, as the loader skips them). stat follows symlinks: what
// matters is the file the loader will read.
template <typename F>
void walk(const std::string& dir, int depth, F&& f) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return;
  f(dir, st);
  if (!S_ISDIR(st.st_mode) || depth == 0) return;
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) walk(dir + "/" + n, depth - 1, f);
}

}  // namespace

std::string Repository::folder_state(const std::string& name) const {
  std::string state;
  walk(root_ + "/" + name, 2, [&](const std::string& path, const struct stat& st) {
    state += path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
             std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ino) + "\n";
  });
  return state;
}

void Repository::warn_if_writable_by_others(const std::string& name) const {
  if (!warn_) return;
  auto check = [&](const std::string& path, const struct stat& st) {
    if (st.st_mode & S_IWOTH)
      warn_("'" + path + "' is writable by other users: anyone on this host can change what model '" + name +
            "' serves (chmod o-w '" + path + "')");
  };
  struct stat st;
  if (stat(root_.c_str(), &st) == 0) check(root_, st);
  walk(root_ + "/" + name, 2, check);
}

std::map<int64_t, std::shared_ptr<ServedModel>> Repository::load_versions(const std::string& name) const {
  const std::string dir = root_ + "/" + name;
  warn_if_writable_by_others(name);
  ModelConfig config;
  if (is_file(dir + "/config.pbtxt") && warn_)
    warn_("model '" + name + "': config.pbtxt (Triton's model configuration) is not read by graphrt-serve" +
          (is_file(dir + "/config.json") ? "; config.json is used" : "; put its settings in config.json") +
          " (docs/serving.md, \"config.json\")");
  if (is_file(dir + "/config.json")) {
    try {
      config = parse_model_config(graphrt::read_regular_file(dir + "/config.json", "model config"));
    } catch (Error& e) {
      throw e.with("file", dir + "/config.json");
    }
  }
  if (config.timeout_us == 0) config.timeout_us = default_timeout_us_;
  std::map<int64_t, std::string> folders;
  for (const std::string& v : subfolders(dir)) {
    const int64_t n = version_number(v);
    if (n >= 0) folders[n] = v;
  }
  if (folders.empty())
    throw Error(ErrorKind::kNotFound, "no version folder (DIR/<model>/<integer>/)").with("dir", dir);
  HeapTrimOnExit trim;  // after `loaded` is gone too, when a version fails
  std::map<int64_t, std::shared_ptr<ServedModel>> loaded;
  for (const auto& kv : folders) {
    const std::string version = std::to_string(kv.first);
    try {
      loaded[kv.first] = ServedModel::load(
          name, version, dir + "/" + kv.second, config, metrics_->for_model(name, version),
          params_cache_dir_.empty() ? "" : params_cache_file(params_cache_dir_, name, version));
    } catch (Error& e) {
      throw e.with("version", version);
    }
    log_loaded(*loaded[kv.first], config);
  }
  return loaded;
}

void Repository::log_loaded(const ServedModel& model, const ModelConfig& config) const {
  if (!log_) return;
  std::string inputs;
  for (const TensorMetadata& t : model.inputs()) {
    inputs += (inputs.empty() ? "" : ", ") + t.name;
    if (!t.known_type) continue;
    inputs += std::string(" ") + datatype_name(t.datatype);
    if (!t.known_shape) continue;
    std::string dims;
    for (int64_t d : t.shape) dims += (dims.empty() ? "" : ",") + (d < 0 ? std::string("?") : std::to_string(d));
    inputs += "[" + dims + "]";
  }
  log_("loaded model '" + model.name() + "' version " + model.version() + ": " + model.platform() + " on " +
       config.device + (model.generator() ? ", generate" : "") + "; inputs: " + (inputs.empty() ? "-" : inputs));
}

bool Repository::has_model_folder(const std::string& name) const {
  const std::vector<std::string> folders = model_folders();
  return std::find(folders.begin(), folders.end(), name) != folders.end();
}

bool Repository::loads_at_start(const std::string& name) const {
  if (control_mode_ != ModelControlMode::kExplicit) return true;
  for (const std::string& n : startup_models_)
    if (n == "*" || n == name) return true;
  return false;
}

void Repository::load_all() {
  std::lock_guard<std::mutex> load_lock(load_mutex_);
  struct Loaded {
    std::atomic<bool>* loading;
    ~Loaded() { *loading = false; }
  } loaded{&loading_};
  for (const std::string& name : model_folders()) {
    if (!loads_at_start(name)) continue;  // listed as UNAVAILABLE by the index until loaded
    polled_state_[name] = folder_state(name);
    Entry entry;
    try {
      entry.versions = load_versions(name);
      entry.state = "READY";
    } catch (const std::exception& e) {
      entry.reason = e.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    models_[name] = std::move(entry);
  }
}

void Repository::load(const std::string& name) {
  if (!valid_model_name(name) || !is_dir(root_ + "/" + name))
    throw Error(ErrorKind::kNotFound, "no model folder '" + name + "' in the repository").with("model", name);
  std::lock_guard<std::mutex> load_lock(load_mutex_);
  std::map<int64_t, std::shared_ptr<ServedModel>> versions;
  try {
    versions = load_versions(name);
  } catch (Error& e) {
    // A model that serves keeps serving; one already listed records why it is not ready. A
    // failed first load of a new folder changes nothing (the server stays ready).
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = models_.find(name);
    if (it != models_.end() && it->second.versions.empty()) it->second.reason = e.what();
    throw e.with("model", name);
  }
  std::map<int64_t, std::shared_ptr<ServedModel>> old;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& entry = models_[name];
    old.swap(entry.versions);
    entry.versions = std::move(versions);
    entry.state = "READY";
    entry.reason.clear();
  }
  // `old` is released here, outside the lock; requests still holding a version keep it alive.
}

void Repository::unload(const std::string& name) {
  std::lock_guard<std::mutex> load_lock(load_mutex_);
  std::map<int64_t, std::shared_ptr<ServedModel>> old;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = models_.find(name);
    if (it == models_.end())
      throw Error(ErrorKind::kNotFound, "unknown model '" + name + "'").with("model", name);
    old.swap(it->second.versions);
    it->second.state = "UNAVAILABLE";
    it->second.reason = "unloaded";
  }
}

std::shared_ptr<ServedModel> Repository::find(const std::string& name, const std::string& version) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = models_.find(name);
  if (it == models_.end()) throw Error(ErrorKind::kNotFound, "unknown model '" + name + "'").with("model", name);
  const Entry& entry = it->second;
  if (entry.versions.empty())
    throw Error(ErrorKind::kFailedPrecondition,
                "model '" + name + "' is not ready" + (entry.reason.empty() ? "" : ": " + entry.reason))
        .with("model", name);
  std::shared_ptr<ServedModel> found;
  if (version.empty()) {
    found = entry.versions.rbegin()->second;
  } else {
    auto v = entry.versions.find(parse_version(name, version));
    if (v == entry.versions.end())
      throw Error(ErrorKind::kNotFound, "model '" + name + "' has no version " + version)
          .with("model", name).with("field", "version");
    found = v->second;
  }
  const std::string broken = found->broken();
  if (!broken.empty())
    throw Error(ErrorKind::kFailedPrecondition, "model '" + name + "' is not ready: " + broken).with("model", name);
  return found;
}

std::vector<IndexEntry> Repository::index(bool ready_only) const {
  std::vector<IndexEntry> out;
  std::map<std::string, Entry> known;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    known = models_;
  }
  // Models added to the folder since start are listed too when the load API may load them
  // (with model control off the folder is not read again after start).
  if (control_mode_ != ModelControlMode::kNone)
    for (const std::string& name : model_folders())
      if (!known.count(name))
        known[name].reason = control_mode_ == ModelControlMode::kExplicit
                                 ? "not loaded (explicit model control: POST /v2/repository/models/" + name +
                                       "/load, or start with --load-model " + name + ")"
                                 : "not loaded";
  for (const auto& kv : known) {
    if (kv.second.versions.empty()) {
      if (!ready_only) out.push_back(IndexEntry{kv.first, "", kv.second.state, kv.second.reason});
      continue;
    }
    for (const auto& v : kv.second.versions) {
      const std::string broken = v.second->broken();  // its params cache changed under the server
      if (broken.empty())
        out.push_back(IndexEntry{kv.first, v.second->version(), "READY", ""});
      else if (!ready_only)
        out.push_back(IndexEntry{kv.first, v.second->version(), "UNAVAILABLE", broken});
    }
  }
  return out;
}

std::vector<std::string> Repository::versions(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  auto it = models_.find(name);
  if (it != models_.end())
    for (const auto& v : it->second.versions) out.push_back(v.second->version());
  return out;
}

bool Repository::all_ready() const {
  if (draining_ || loading_) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& kv : models_) {
    if (kv.second.versions.empty() && kv.second.reason != "unloaded") return false;
    for (const auto& v : kv.second.versions)
      if (!v.second->broken().empty()) return false;
  }
  return true;
}

std::vector<std::string> Repository::poll() {
  // polled_state_ is poll()'s own (and load_all's, which runs before any poll).
  std::vector<std::string> changed;
  const std::vector<std::string> folders = model_folders();
  for (const std::string& name : folders) {
    const std::string state = folder_state(name);
    auto it = polled_state_.find(name);
    if (it != polled_state_.end() && it->second == state) continue;
    polled_state_[name] = state;
    changed.push_back(name);
    try {
      load(name);
    } catch (const std::exception& e) {
      // A new folder that fails is listed with its reason; a model that serves keeps serving.
      std::lock_guard<std::mutex> lock(mutex_);
      Entry& entry = models_[name];
      if (entry.versions.empty()) entry.reason = e.what();
    }
  }
  std::vector<std::string> gone;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& kv : models_)
      if (std::find(folders.begin(), folders.end(), kv.first) == folders.end() && !kv.second.versions.empty())
        gone.push_back(kv.first);
  }
  for (const std::string& name : gone) {
    polled_state_.erase(name);
    changed.push_back(name);
    try {
      unload(name);
    } catch (const std::exception&) {
    }
  }
  return changed;
}

bool Repository::model_ready(const std::string& name, const std::string& version) const {
  try {
    return find(name, version) != nullptr;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace graphrt_serve

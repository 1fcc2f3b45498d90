// The params cache (src/params_cache.cc): executors over a mapped cache give
// the outputs of executors over decoded params, bit for bit; a cache is written
// once and mapped by every later load; a stale, truncated or damaged cache is
// never used but rewritten; the reader refuses hostile bytes.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "fixture_cases.h"
#include "mapped_file_of.h"
#include "scratch_dir.h"
#include "src/layer_api/params_cache.h"
#include "graphrt/log.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string copy_fixture(const std::string& relative, const std::string& to) {
  std::vector<uint8_t> bytes = read_file(fixture_path(relative));
  write_bytes(to, std::string(bytes.begin(), bytes.end()));
  return to;
}

ino_t inode_of(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// Warnings the library logs while an instance lives.
class CapturedWarnings {
 public:
  CapturedWarnings() { set_log_callback(&CapturedWarnings::on_log, this); }
  ~CapturedWarnings() { set_log_callback(nullptr, nullptr); }
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(messages_);
  }

 private:
  static void on_log(LogLevel, const char* message, void* self) {
    auto* me = static_cast<CapturedWarnings*>(self);
    std::lock_guard<std::mutex> lock(me->mutex_);
    me->messages_.push_back(message);
  }
  std::mutex mutex_;
  std::vector<std::string> messages_;
};

std::shared_ptr<GraphExecutor> from_factory(const Module& root) {
  Module m = call_function(root->get_function("create_with_options"),
                           ArgList().add_string("").add_int(0).add_device(cpu()))
                 .as_module();
  return graph_executor_of(m);
}

std::string use_cache(const Module& factory, const std::string& cache, const std::string& model) {
  return call_function(factory->get_function("use_params_cache"), ArgList().add_string(cache).add_string(model))
      .as_string();
}

std::string output_bytes(GraphExecutor& ex) {
  std::string all;
  for (int i = 0; i < ex.num_outputs(); ++i) {
    NDArray out = ex.get_output(i);
    all.append(static_cast<const char*>(out->data), out.nbytes());
  }
  return all;
}

std::string tvm_outputs_differ(GraphExecutor& ex, const std::string& name) {
  const double tolerance = case_json(name).value("tolerance", 0.0);
  std::string diff;
  for (int i = 0; i < ex.num_outputs(); ++i)
    diff += compare_output(ex.get_output(i), fixture_path(name + "/output_" + std::to_string(i) + ".npy"), tolerance);
  return diff;
}

ParamList params_of_file(const std::string& path) { return load_param_dict(read_text(path), path); }

bool same_values(const ParamList& a, const ParamList& b) { return save_param_dict(a) == save_param_dict(b); }

ParamList decode_file(const std::string& path, int* calls) {
  ++*calls;
  return params_of_file(path);
}

}  // namespace

// Executors made after the factory maps its cache bind the mapped arrays
// themselves (no copy) and give the outputs of executors over the decoded
// params, bit for bit, and TVM's.
TEST(ParamsCache, FactoryOutputsAreBitExactWithTheCache) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const std::string name : {"mlp", "squeezenet1.1", "multi_io"}) {
    ScratchDir dir("params_cache");
    // A copy of its own: a library loaded elsewhere in this process would share its factory.
    const std::string model = copy_fixture(name + "/deploy_factory.so", dir.path() + "/model.so");
    const std::string cache = dir.path() + "/model.cache";
    Module root = load_module(model);
    auto decoded = from_factory(root);
    EXPECT_EQ(use_cache(root, cache, model), "written") << name;
    auto mapped = from_factory(root);
    int bound = 0;
    for (const std::string& p : mapped->param_names()) {
      const void* data = mapped->get_input(mapped->input_index(p))->data;
      if (mapped_file_of(data) == cache) ++bound;
      EXPECT_NE(data, decoded->get_input(decoded->input_index(p))->data) << name << " " << p;
    }
    // multi_io has no params: its cache holds none and it runs as before.
    if (name != std::string("multi_io")) {
      EXPECT_GT(bound, 0) << name << ": no param views the cache's mapping";
    }
    EXPECT_EQ(bound, static_cast<int>(mapped->param_names().size())) << name << ": params copied, not mapped";
    set_case_inputs(*decoded, name);
    set_case_inputs(*mapped, name);
    decoded->run();
    mapped->run();
    EXPECT_EQ(output_bytes(*decoded), output_bytes(*mapped)) << name;
    EXPECT_EQ("", tvm_outputs_differ(*mapped, name)) << name;
    EXPECT_EQ(dir.files(), (std::vector<std::string>{"model.cache", "model.so"})) << name;
  }
}

// A second load maps the file the first wrote (same inode, not rewritten),
// with the values of the params file.
TEST(ParamsCache, SecondLoadMapsTheFileTheFirstWrote) {
  GRAPHRT_REQUIRE_FIXTURES();
  ScratchDir dir("params_cache");
  const std::string source = fixture_path("squeezenet1.1/deploy_params.params");
  const std::string cache = dir.path() + "/squeezenet.cache";
  int decodes = 0;
  ParamsCacheUse use;
  ParamList first = map_params_cache(cache, source, [&] { return decode_file(source, &decodes); }, &use);
  EXPECT_EQ(use, ParamsCacheUse::kWritten);
  const ino_t written = inode_of(cache);
  ParamList second = map_params_cache(cache, source, [&] { return decode_file(source, &decodes); }, &use);
  EXPECT_EQ(use, ParamsCacheUse::kMapped);
  EXPECT_EQ(decodes, 1);
  EXPECT_EQ(inode_of(cache), written) << "the cache was rewritten";
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(mapped_file_of(first[i].second->data), cache) << first[i].first;
    EXPECT_EQ(mapped_file_of(second[i].second->data), cache) << second[i].first;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(second[i].second->data) % 64, 0u) << second[i].first;
  }
  EXPECT_TRUE(same_values(second, params_of_file(source)));

  // Executors over either load give TVM's outputs.
  Module lib = load_module(fixture_path("squeezenet1.1/deploy_lib.so"));
  const std::string graph = read_text(fixture_path("squeezenet1.1/deploy_graph.json"));
  for (const ParamList* params : {&first, &second}) {
    auto ex = GraphExecutor::create_with_params(graph, lib, {cpu()}, {}, *params);
    set_case_inputs(*ex, "squeezenet1.1");
    ex->run();
    EXPECT_EQ("", tvm_outputs_differ(*ex, "squeezenet1.1"));
  }
}

// Loads starting together write the cache once; the others wait for it and map it.
TEST(ParamsCache, ConcurrentLoadsWriteOnce) {
  GRAPHRT_REQUIRE_FIXTURES();
  ScratchDir dir("params_cache");
  const std::string source = fixture_path("mlp/deploy_params.params");
  const std::string cache = dir.path() + "/mlp.cache";
  std::atomic<int> decodes{0}, written{0};
  std::vector<ParamList> loads(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < loads.size(); ++i) {
    threads.emplace_back([&, i] {
      ParamsCacheUse use;
      loads[i] = map_params_cache(cache, source, [&] {
        ++decodes;
        return params_of_file(source);
      }, &use);
      if (use != ParamsCacheUse::kMapped) ++written;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(decodes.load(), 1);
  EXPECT_EQ(written.load(), 1);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"mlp.cache"}) << "temporary files left behind";
  for (const ParamList& l : loads) EXPECT_TRUE(same_values(l, params_of_file(source)));
}

// A writer killed mid-write leaves "<cache>.tmp.XXXXXX". With the folder's lock free no live
// writer owns it: it goes on the next load, also when the cache itself is valid (mapped without
// rewriting), however fresh; while another process holds the lock (a writer at work) it stays.
TEST(ParamsCache, TemporaryOfAKilledWriterGoesBesideAValidCache) {
  GRAPHRT_REQUIRE_FIXTURES();
  ScratchDir dir("params_cache");
  const std::string source = fixture_path("mlp/deploy_params.params");
  const std::string cache = dir.path() + "/mlp.cache";
  const auto decode = [&] { return params_of_file(source); };
  ParamsCacheUse use;
  map_params_cache(cache, source, decode, &use);
  ASSERT_EQ(use, ParamsCacheUse::kWritten);
  const std::string left = cache + ".tmp.k1LLed";
  const std::string other = dir.path() + "/other.cache.tmp.abcdef";  // another cache's: not this one's
  write_bytes(left, std::string(4096, '\0'));
  write_bytes(other, "x");

  // A writer at work holds the folder's lock: its temporary stays, the valid cache maps.
  const int held = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  ParamList mapped = map_params_cache(cache, source, decode, &use);
  EXPECT_EQ(use, ParamsCacheUse::kMapped);
  EXPECT_EQ(::access(left.c_str(), F_OK), 0) << "a live writer's temporary was removed";
  ::close(held);

  std::vector<std::string> warnings;
  {
    CapturedWarnings captured;
    mapped = map_params_cache(cache, source, decode, &use);
    warnings = captured.take();
  }
  EXPECT_EQ(use, ParamsCacheUse::kMapped);
  EXPECT_NE(::access(left.c_str(), F_OK), 0) << "the dead writer's temporary stayed beside the valid cache";
  EXPECT_EQ(::access(other.c_str(), F_OK), 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("mlp.cache.tmp.k1LLed"), std::string::npos) << warnings[0];
  EXPECT_TRUE(same_values(mapped, params_of_file(source)));
}

// A source file that changed (same size, same modification time, other
// bytes) makes the cache stale: it is rewritten, with a warning.
TEST(ParamsCache, StaleCacheIsRewritten) {
  GRAPHRT_REQUIRE_FIXTURES();
  ScratchDir dir("params_cache");
  const std::string source = copy_fixture("mlp/deploy_params.params", dir.path() + "/mlp.params");
  const std::string cache = dir.path() + "/mlp.cache";
  int decodes = 0;
  map_params_cache(cache, source, [&] { return decode_file(source, &decodes); });
  struct stat before;
  ASSERT_EQ(stat(source.c_str(), &before), 0);
  ParamList changed = params_of_file(source);
  static_cast<float*>(changed[0].second->data)[0] += 1.0f;
  write_bytes(source, save_param_dict(changed));
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, source.c_str(), times, 0), 0);

  CapturedWarnings warnings;
  ParamsCacheUse use;
  ParamList params = map_params_cache(cache, source, [&] { return decode_file(source, &decodes); }, &use);
  EXPECT_EQ(use, ParamsCacheUse::kRebuilt);
  EXPECT_EQ(decodes, 2);
  EXPECT_TRUE(same_values(params, changed));
  std::vector<std::string> logged = warnings.take();
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("stale params cache"), std::string::npos) << logged[0];
  EXPECT_NE(logged[0].find(cache), std::string::npos) << logged[0];
  map_params_cache(cache, source, [&] { return decode_file(source, &decodes); }, &use);
  EXPECT_EQ(use, ParamsCacheUse::kMapped);
}

// A truncated, damaged or foreign cache file is refused and rewritten; the
// params are always the source's.
TEST(ParamsCache, TruncatedOrDamagedCacheIsRewritten) {
  GRAPHRT_REQUIRE_FIXTURES();
  ScratchDir dir("params_cache");
  const std::string source = fixture_path("mlp/deploy_params.params");
  const std::string cache = dir.path() + "/mlp.cache";
  const ParamList expected = params_of_file(source);
  int decodes = 0;
  map_params_cache(cache, source, [&] { return decode_file(source, &decodes); });
  const std::string good = read_text(cache);
  struct Damage {
    const char* what;
    std::string bytes;
    const char* reason;
  };
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x40;  // a weight's byte
  std::vector<Damage> damages = {
      {"truncated", good.substr(0, good.size() - 100), "truncated or damaged"},
      {"cut inside its header", good.substr(0, 40), "less than its header"},
      {"a flipped data byte", flipped, "do not match its hash"},
      {"another format", "GRTPCACX" + good.substr(8), "bad magic"},
      {"empty", "", "less than its header"},
  };
  for (const Damage& d : damages) {
    write_bytes(cache, d.bytes);
    CapturedWarnings warnings;
    ParamsCacheUse use;
    ParamList params = map_params_cache(cache, source, [&] { return decode_file(source, &decodes); }, &use);
    EXPECT_EQ(use, ParamsCacheUse::kRebuilt) << d.what;
    EXPECT_TRUE(same_values(params, expected)) << d.what;
    std::vector<std::string> logged = warnings.take();
    ASSERT_EQ(logged.size(), 1u) << d.what;
    EXPECT_NE(logged[0].find(d.reason), std::string::npos) << d.what << ": " << logged[0];
    EXPECT_EQ(read_text(cache), good) << d.what;
  }
}

// A factory whose cache holds other params than its own (a cache made for
// another model, keyed to this file) does not use it.
TEST(ParamsCache, FactoryRefusesACacheOfOtherParams) {
  GRAPHRT_REQUIRE_FIXTURES();
  ScratchDir dir("params_cache");
  const std::string model = copy_fixture("mlp/deploy_factory.so", dir.path() + "/model.so");
  const std::string cache = dir.path() + "/model.cache";
  ParamList other = params_of_file(fixture_path("mlp/deploy_params.params"));
  static_cast<float*>(other[0].second->data)[0] += 1.0f;
  map_params_cache(cache, model, [&] { return other; });
  Module root = load_module(model);
  CapturedWarnings warnings;
  EXPECT_EQ(use_cache(root, cache, model), "rebuilt");
  std::vector<std::string> logged = warnings.take();
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("differs from the model's params"), std::string::npos) << logged[0];
  auto ex = from_factory(root);
  set_case_inputs(*ex, "mlp");
  ex->run();
  EXPECT_EQ("", tvm_outputs_differ(*ex, "mlp"));
  EXPECT_EQ(use_cache(root, cache, model), "mapped");
}

// The mapping is read-only: a param written through set_input gives that
// executor its own copy; the other executor, and the file, keep the values.
TEST(ParamsCache, WritingAMappedParamCopiesIt) {
  GRAPHRT_REQUIRE_FIXTURES();
  ScratchDir dir("params_cache");
  const std::string model = copy_fixture("mlp/deploy_factory.so", dir.path() + "/model.so");
  const std::string cache = dir.path() + "/model.cache";
  Module root = load_module(model);
  use_cache(root, cache, model);
  auto a = from_factory(root);
  auto b = from_factory(root);
  int index = -1;
  for (const std::string& name : a->param_names()) {
    int i = a->input_index(name);
    if (index < 0 || a->get_input(i).nbytes() > a->get_input(index).nbytes()) index = i;
  }
  ASSERT_GE(index, 0);
  EXPECT_EQ(a->get_input(index)->data, b->get_input(index)->data);
  NDArray zeros = NDArray::empty(a->get_input(index).shape(), a->get_input(index).dtype(), cpu());
  std::memset(zeros->data, 0, zeros.nbytes());
  a->set_input(index, zeros.handle());
  EXPECT_NE(mapped_file_of(a->get_input(index)->data), cache);
  EXPECT_EQ(mapped_file_of(b->get_input(index)->data), cache);
  set_case_inputs(*a, "mlp");
  set_case_inputs(*b, "mlp");
  a->run();
  b->run();
  EXPECT_EQ("", tvm_outputs_differ(*b, "mlp"));
  EXPECT_NE("", tvm_outputs_differ(*a, "mlp"));
  EXPECT_EQ(use_cache(root, cache, model), "mapped") << "the write reached the file";
}

TEST(ParamsCache, ErrorsNameTheFolderAndTheSource) {
  GRAPHRT_REQUIRE_FIXTURES();
  ScratchDir dir("params_cache");
  const std::string source = fixture_path("mlp/deploy_params.params");
  std::string missing_dir = error_of([&] {
    map_params_cache(dir.path() + "/no/such/folder/x.cache", source, [&] { return params_of_file(source); });
  });
  EXPECT_NE(missing_dir.find("params cache folder"), std::string::npos) << missing_dir;
  EXPECT_NE(missing_dir.find(dir.path() + "/no/such/folder"), std::string::npos) << missing_dir;
  std::string missing_source = error_of([&] {
    map_params_cache(dir.path() + "/x.cache", dir.path() + "/absent.params", [] { return ParamList(); });
  });
  EXPECT_NE(missing_source.find("absent.params"), std::string::npos) << missing_source;
  EXPECT_EQ(dir.files(), std::vector<std::string>{});
}

namespace {
// Cache bytes for `params`, then `edit` applied, then the trailing hash made
// to match again, so that the reader's later checks are reached.
std::string edited_cache(const ParamList& params, const std::function<void(std::string*)>& edit) {
  std::string bytes;
  write_params_cache(ParamsCacheKey{}, params, [&](const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); });
  edit(&bytes);
  if (bytes.size() >= 8) {
    const uint64_t h = params_cache_hash(bytes.data(), bytes.size() - 8);
    std::memcpy(&bytes[bytes.size() - 8], &h, 8);
  }
  return bytes;
}

template <typename T>
void poke(std::string* bytes, size_t at, T value) {
  std::memcpy(&(*bytes)[at], &value, sizeof value);
}

std::string read_error(const std::string& bytes) {
  return error_of([&] {
    read_params_cache(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), nullptr, "test.cache", nullptr);
  });
}
}  // namespace

// Every offset, length and shape is checked against the file; the hash alone is not trusted.
TEST(ParamsCache, ReaderRefusesHostileBytes) {
  ParamList params;
  NDArray w = NDArray::empty({3, 5}, DLDataType{kDLFloat, 32, 1}, cpu());
  for (int i = 0; i < 15; ++i) static_cast<float*>(w->data)[i] = static_cast<float>(i);
  params.emplace_back("w", w);
  params.emplace_back("scalar", NDArray::empty({}, DLDataType{kDLInt, 64, 1}, cpu()));
  // Index layout of "w": name length at 64, name at 72, dtype at 73, ndim at 77, dims at 81 and 89,
  // offset at 97, bytes at 105.
  const std::string good = edited_cache(params, [](std::string*) {});
  ParamList back = read_params_cache(reinterpret_cast<const uint8_t*>(good.data()), good.size(), nullptr, "t", nullptr);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].first, "w");
  EXPECT_EQ(back[0].second.shape(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(std::memcmp(back[0].second->data, w->data, 60), 0);
  EXPECT_EQ(back[1].second.shape(), std::vector<int64_t>{});

  struct Case {
    const char* what;
    std::function<void(std::string*)> edit;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"version 2", [](std::string* b) { poke<uint32_t>(b, 8, 2); }, "format version 2"},
      {"count past the index", [](std::string* b) { poke<uint64_t>(b, 40, 1000); }, "lists 1000 params"},
      {"index past the file", [](std::string* b) { poke<uint64_t>(b, 48, uint64_t(1) << 62); }, "runs past the file"},
      {"name past the index", [](std::string* b) { poke<uint64_t>(b, 64, 1 << 20); }, "param name"},
      {"ndim 65", [](std::string* b) { poke<uint32_t>(b, 77, 65); }, "65 dimensions"},
      {"negative dimension", [](std::string* b) { poke<int64_t>(b, 81, -3); }, "negative dimension"},
      {"shape overflows", [](std::string* b) { poke<int64_t>(b, 81, int64_t(1) << 62); }, "w"},
      {"bytes unlike the shape", [](std::string* b) { poke<uint64_t>(b, 105, 64); }, "takes 60"},
      {"unaligned offset", [](std::string* b) { poke<uint64_t>(b, 97, 200); }, "64-byte aligned range"},
      {"offset in the header", [](std::string* b) { poke<uint64_t>(b, 97, 0); }, "64-byte aligned range"},
      {"offset past the end", [](std::string* b) { poke<uint64_t>(b, 97, uint64_t(1) << 63); }, "64-byte aligned range"},
      {"dtype of 3 bits", [](std::string* b) { poke<uint8_t>(b, 74, 3); }, "w"},
      {"file bytes unlike its size", [](std::string* b) { poke<uint64_t>(b, 56, 9999); }, "truncated or damaged"},
  };
  for (const Case& c : cases) {
    std::string message = read_error(edited_cache(params, c.edit));
    EXPECT_NE(message.find(c.reason), std::string::npos) << c.what << ": " << message;
    EXPECT_NE(message.find("test.cache"), std::string::npos) << c.what << ": " << message;
  }
  std::string stale = error_of([&] {
    ParamsCacheKey key{1, 2, 3};
    read_params_cache(reinterpret_cast<const uint8_t*>(good.data()), good.size(), &key, "t", nullptr);
  });
  EXPECT_NE(stale.find("stale params cache"), std::string::npos) << stale;
}

// Allocation failure anywhere in loading a model or creating its executor ends
// in a clean error (an exception, or an error code through the C API) with
// nothing leaked. This binary replaces the global operator new with one that
// fails the N-th allocation, for every N until the whole step succeeds.
#include <atomic>
#include <cstdlib>
#include <new>

#include "fixture_cases.h"
#include "graphrt/c_api.h"

namespace {
std::atomic<long> g_fail_in{-1};  // allocations left before one fails; -1: never
std::atomic<long> g_live{0};      // allocations not yet freed
std::atomic<bool> g_failed{false};

void* allocate(size_t n, size_t align = 0) {
  if (g_fail_in.load(std::memory_order_relaxed) >= 0 && g_fail_in.fetch_sub(1) == 0) {
    g_failed = true;
    return nullptr;
  }
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                              : std::malloc(n ? n : 1);
  if (p) g_live++;
  return p;
}
void release(void* p) {
  if (!p) return;
  g_live--;
  std::free(p);
}
}  // namespace

void* operator new(size_t n) {
  if (void* p = allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) {
  if (void* p = allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new(size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new(size_t n, std::align_val_t a) {
  if (void* p = allocate(n, static_cast<size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n, std::align_val_t a) {
  if (void* p = allocate(n, static_cast<size_t>(a))) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, size_t) noexcept { release(p); }
void operator delete[](void* p, size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { release(p); }

using namespace graphrt;
using namespace graphrt_test;

namespace {

// Loads the case with `loader`; true when done, false when an allocation
// failed and an exception reported it.
bool load(const std::string& path, const std::string& loader) {
  try {
    LoadOptions options;
    options.loader = loader;
    Module root = load_module(path, options);
    return root->get_function("default") != nullptr;
  } catch (const std::bad_alloc&) {
    return false;
  } catch (const Error&) {
    return false;
  }
}

// Fails allocation 0, 1, 2, ... of `attempt` until it succeeds; each failed
// attempt must report the failure and leave no allocation behind.
template <typename Attempt>
void fail_every_allocation(const std::string& label, Attempt attempt) {
  ASSERT_TRUE(attempt()) << label << ": warm-up run";  // lazily built runtime state exists from here on
  for (long n = 0;; ++n) {
    const long live_before = g_live.load();
    g_failed = false;
    g_fail_in = n;
    const bool ok = attempt();
    g_fail_in = -1;
    if (ok) {
      EXPECT_FALSE(g_failed.load()) << label << ": allocation " << n << " failed but the load reported success";
      EXPECT_GT(n, 10) << label;
      return;
    }
    ASSERT_TRUE(g_failed.load()) << label << ": failed without a failed allocation at " << n;
    ASSERT_EQ(g_live.load(), live_before) << label << ": allocations leaked after failing allocation " << n;
  }
}

}  // namespace

TEST(AllocationFailure, LoadWithEveryLoader) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = fixture_path("multi_io/deploy_factory.so");
  for (const char* loader : {"dlopen", "elf"})
    fail_every_allocation(std::string("multi_io/") + loader, [&] { return load(path, loader); });
}

TEST(AllocationFailure, CApiReturnsAnErrorCode) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = fixture_path("multi_io/deploy_factory.so");
  fail_every_allocation("C API", [&] {
    TVMModuleHandle mod = nullptr;
    if (TVMModLoadFromFile(path.c_str(), "so", &mod) != 0) return false;
    TVMModFree(mod);
    return true;
  });
}

// Executor creation from a loaded factory: graph JSON, plans, storage, bound
// params and prepared calls, each allocation failing in turn.
TEST(AllocationFailure, CreateExecutor) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const char* name : {"multi_io", "mlp"}) {
    Module root = load_module(fixture_path(std::string(name) + "/deploy_factory.so"));
    PackedFunc make = root->get_function("default");
    ASSERT_TRUE(make);
    fail_every_allocation(std::string(name) + " executor", [&] {
      try {
        Module ex = call_function(make, ArgList().add_device(DLDevice{kDLCPU, 0})).as_module();
        return graph_executor_of(ex) != nullptr;
      } catch (const std::bad_alloc&) {
        return false;
      } catch (const Error&) {
        return false;
      }
    });
  }
}

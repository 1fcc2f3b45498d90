#include "threading/run_activity.h"

#include <atomic>
#include <chrono>
#include <limits>

#include "layer_api/thread_pool_run_scope.h"

namespace graphrt {

namespace {

constexpr int kSlots = 16;
constexpr std::int64_t kIdle = 0;
constexpr std::int64_t kInside = std::numeric_limits<std::int64_t>::max();

// Per slot: kIdle, kInside, or the steady-clock time (ns) until which a thread
// that left its run still counts. Written once per run, read per launch: the
// slots share two cache lines rather than spreading a launch's reads over 16.
std::atomic<std::int64_t> g_busy_until[kSlots];
std::atomic<bool> g_slot_owned[kSlots];
std::atomic<int> g_inside{0};
std::atomic<unsigned> g_next_shared_slot{0};

// A thread's slot: its own while one is free, handed back when the thread
// ends; beyond kSlots live threads, a shared one.
struct ThreadSlot {
  int index = -1;
  bool owned = false;
  ~ThreadSlot() {
    if (!owned) return;
    g_busy_until[index].store(kIdle, std::memory_order_relaxed);
    g_slot_owned[index].store(false, std::memory_order_release);
  }
};
thread_local ThreadSlot tls_slot;
thread_local int tls_depth = 0;  // nested scopes (profile calling run) count once
// Outermost scope entries so far, and what this thread's current run saw of
// them: a run overlapped another when one was inside as it began or began
// while it ran.
std::atomic<std::uint64_t> g_entries{0};
thread_local std::uint64_t tls_entries_after_mine = 0;
thread_local bool tls_began_beside_another = false;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int own_slot() {
  if (tls_slot.index >= 0) return tls_slot.index;
  for (int i = 0; i < kSlots; ++i) {
    if (!g_slot_owned[i].exchange(true, std::memory_order_acquire)) {
      tls_slot.index = i;
      tls_slot.owned = true;
      return i;
    }
  }
  tls_slot.index = static_cast<int>(g_next_shared_slot.fetch_add(1, std::memory_order_relaxed) % kSlots);
  return tls_slot.index;
}

int count_busy(int skip_slot) {
  int busy = 0;
  std::int64_t now = 0;  // read only when a slot holds a time
  for (int i = 0; i < kSlots; ++i) {
    if (i == skip_slot) continue;
    std::int64_t until = g_busy_until[i].load(std::memory_order_relaxed);
    if (until == kIdle) continue;
    if (until == kInside) {
      ++busy;
      continue;
    }
    if (now == 0) now = now_ns();
    if (until > now) {
      ++busy;
    } else {
      // Expired: later scans skip it without reading the clock.
      g_busy_until[i].compare_exchange_strong(until, kIdle, std::memory_order_relaxed);
    }
  }
  return busy;
}

}  // namespace

ThreadPoolRunScope::ThreadPoolRunScope() {
  int others_inside = g_inside.fetch_add(1, std::memory_order_relaxed);
  if (tls_depth++ > 0) return;
  tls_began_beside_another = others_inside > 0;
  tls_entries_after_mine = g_entries.fetch_add(1, std::memory_order_relaxed) + 1;
  g_busy_until[own_slot()].store(kInside, std::memory_order_relaxed);
}

// Only a run that overlapped another lingers: runs that take turns on
// different threads (requests handed from thread to thread, one at a time)
// leave each launch every core.
ThreadPoolRunScope::~ThreadPoolRunScope() {
  if (--tls_depth == 0) {
    bool overlapped = tls_began_beside_another || g_entries.load(std::memory_order_relaxed) != tls_entries_after_mine;
    g_busy_until[tls_slot.index].store(overlapped ? now_ns() + kRunActivityLingerNs : kIdle,
                                       std::memory_order_relaxed);
  }
  g_inside.fetch_sub(1, std::memory_order_relaxed);
}

int run_activity_inside() { return g_inside.load(std::memory_order_relaxed); }
int run_activity_busy_others() { return count_busy(tls_slot.index); }
int run_activity_busy() { return count_busy(-1); }

}  // namespace graphrt

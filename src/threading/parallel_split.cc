#include "threading/parallel_split.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>


namespace graphrt {

namespace {

struct AllowedCode {
  const void* owner;
  std::vector<CodeRange> code;
};

// Code that may be split, by owner. Changes bump `generation`, which every
// cached answer below carries: an answer from before some code came or left
// is stale.
struct Allowed {
  std::mutex mutex;
  std::vector<AllowedCode> owners;
  std::atomic<std::uint32_t> generation{1};
};
// Process-wide, not the Runtime's: TVM's C ABI forces it (read by
// TVMBackendParallelLaunch, which kernels call with no context).
Allowed& allowed() {
  static Allowed* a = new Allowed();  // outlives static destructors that unload libraries
  return *a;
}

// Whether `flambda` lies in allowed code; `generation` receives the
// generation the answer holds for.
bool splittable_code(FTVMParallelLambda flambda, std::uint32_t* generation) {
  Allowed& a = allowed();
  std::lock_guard<std::mutex> lock(a.mutex);
  *generation = a.generation.load(std::memory_order_relaxed);
  const auto at = reinterpret_cast<std::uintptr_t>(flambda);
  for (const AllowedCode& entry : a.owners)
    for (const CodeRange& r : entry.code)
      if (at >= r.start && at - r.start < r.bytes) return true;
  return false;
}

// What is known of each lambda, in a fixed open-addressed table that launches
// read without a lock. `state`: 0 while unknown, else the generation (15
// bits, never 0) << 17 | splittable << 16 | launches measured (4 bits) << 12 |
// shortest measured launch in microseconds (12 bits, saturating). The first
// kMeasuredLaunches launches are measured, the shortest counts: the first
// ones run with cold caches.
struct Lambda {
  std::atomic<std::uintptr_t> key{0};
  std::atomic<std::uint32_t> state{0};
};
constexpr int kLambdaSlots = 2048;
constexpr int kLambdaProbes = 8;
constexpr std::uint32_t kMeasuredLaunches = 8;
constexpr std::uint32_t kSplittable = 1u << 16;
std::uint32_t measured_launches(std::uint32_t state) { return state >> 12 & 0xf; }
std::uint32_t shortest_us(std::uint32_t state) { return state & 0xfff; }
Lambda g_lambdas[kLambdaSlots];
std::atomic<std::uint64_t> g_split_launches{0};

std::uint32_t generation_tag(std::uint32_t generation) { return generation % 32767 + 1; }

Lambda* find_lambda(FTVMParallelLambda flambda) {
  const auto key = reinterpret_cast<std::uintptr_t>(flambda);
  std::size_t at = static_cast<std::size_t>((key >> 4) * 0x9E3779B97F4A7C15ull >> 53) % kLambdaSlots;
  for (int probe = 0; probe < kLambdaProbes; ++probe, at = (at + 1) % kLambdaSlots) {
    Lambda& slot = g_lambdas[at];
    std::uintptr_t seen = slot.key.load(std::memory_order_acquire);
    if (seen == key) return &slot;
    if (seen == 0 && slot.key.compare_exchange_strong(seen, key, std::memory_order_acq_rel)) return &slot;
    if (seen == key) return &slot;  // another thread inserted it first
  }
  return nullptr;  // table full around here: such lambdas are never split
}

int tasks_for(std::uint32_t state, int threads) {
  const std::int64_t shortest_ns = static_cast<std::int64_t>(shortest_us(state)) * 1000;
  const std::int64_t per_thread = shortest_ns / (threads * kSplitMinTaskNs);
  return threads * static_cast<int>(std::clamp<std::int64_t>(per_thread, 1, kSplitMaxTasksPerThread));
}

}  // namespace

void parallel_split_allow_code(const void* owner, std::vector<CodeRange> code) {
  Allowed& a = allowed();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.owners.push_back(AllowedCode{owner, std::move(code)});
  a.generation.fetch_add(1, std::memory_order_relaxed);  // code seen before under this address may be its now
}

void parallel_split_forget_code(const void* owner) {
  Allowed& a = allowed();
  std::lock_guard<std::mutex> lock(a.mutex);
  auto gone = std::remove_if(a.owners.begin(), a.owners.end(),
                             [&](const AllowedCode& e) { return e.owner == owner; });
  if (gone == a.owners.end()) return;
  a.owners.erase(gone, a.owners.end());
  a.generation.fetch_add(1, std::memory_order_relaxed);
}

ParallelSplit parallel_split_plan(FTVMParallelLambda flambda, int threads) {
  ParallelSplit plan{threads, nullptr};
  if (threads < 2) return plan;
  Lambda* slot = find_lambda(flambda);
  if (!slot) return plan;
  const std::uint32_t tag = generation_tag(allowed().generation.load(std::memory_order_relaxed));
  std::uint32_t state = slot->state.load(std::memory_order_relaxed);
  if (state >> 17 != tag) {  // unknown, or known before a library left
    std::uint32_t generation;
    const bool splittable = splittable_code(flambda, &generation);
    state = generation_tag(generation) << 17 | (splittable ? kSplittable : 0u);
    slot->state.store(state, std::memory_order_relaxed);
    if (splittable) plan.entry = slot;  // first launch: measured, not split
    return plan;
  }
  if (!(state & kSplittable)) return plan;
  if (measured_launches(state) < kMeasuredLaunches) plan.entry = slot;
  if (measured_launches(state) == 0) return plan;
  plan.tasks = tasks_for(state, threads);
  if (plan.tasks > threads) g_split_launches.fetch_add(1, std::memory_order_relaxed);
  return plan;
}

void parallel_split_record(void* entry, std::int64_t launch_ns) {
  auto* slot = static_cast<Lambda*>(entry);
  // Launches of one lambda from several threads may race here: a lost
  // update only costs one more measured launch.
  const std::uint32_t state = slot->state.load(std::memory_order_relaxed);
  const std::uint32_t count = measured_launches(state);
  if (count >= kMeasuredLaunches) return;
  auto us = static_cast<std::uint32_t>(std::clamp<std::int64_t>(launch_ns / 1000, 0, 0xfff));
  if (count > 0) us = std::min(us, shortest_us(state));
  slot->state.store((state & ~0xffffu) | (count + 1) << 12 | us, std::memory_order_relaxed);
}

std::uint64_t parallel_split_launches() { return g_split_launches.load(std::memory_order_relaxed); }

}  // namespace graphrt

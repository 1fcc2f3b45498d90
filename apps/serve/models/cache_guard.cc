#include "models/cache_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace graphrt_serve {

namespace {

// The watched address ranges, read by the signal handler without locks: an entry is live while
// `end` is non-zero (set last when registering, cleared first when unregistering).
struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<uintptr_t> start{0}, end{0};
  std::atomic<bool> faulted{false};
};
constexpr int kSlots = 1024;
Slot slots[kSlots];

int register_range(uintptr_t start, uintptr_t end) {
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!slots[i].taken.compare_exchange_strong(expected, true)) continue;
    slots[i].faulted.store(false);
    slots[i].start.store(start);
    slots[i].end.store(end, std::memory_order_release);
    return i;
  }
  return -1;
}

void on_sigbus(int, siginfo_t* info, void*) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (int i = 0; i < kSlots; ++i) {
    const uintptr_t end = slots[i].end.load(std::memory_order_acquire);
    const uintptr_t start = slots[i].start.load();
    if (end == 0 || addr < start || addr >= end) continue;
    // The file's pages are gone: zero pages in their place let the faulting access (and the
    // run) go on; the model refuses the run's answer (CacheGuard::changed).
    mmap(reinterpret_cast<void*>(start), end - start, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    slots[i].faulted.store(true);
    return;
  }
  signal(SIGBUS, SIG_DFL);  // not ours: the access faults again and ends the process as before
}

}  // namespace

void install_sigbus_handler() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, nullptr);
}

CacheGuard::CacheGuard(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return;
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    return;
  }
  // The mapping's ranges: lines of /proc/self/maps with this file's device and inode (the
  // path may name a newer file already, if another replica rewrote it since).
  FILE* maps = std::fopen("/proc/self/maps", "re");
  char line[4096];
  while (maps && std::fgets(line, sizeof line, maps)) {
    unsigned long start = 0, end = 0, offset = 0, inode = 0;
    unsigned major_dev = 0, minor_dev = 0;
    char perms[8];
    if (std::sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &start, &end, perms, &offset, &major_dev, &minor_dev,
                    &inode) != 7)
      continue;
    if (inode != st.st_ino || makedev(major_dev, minor_dev) != st.st_dev) continue;
    const int slot = register_range(start, end);
    if (slot >= 0) slots_.push_back(slot);
  }
  if (maps) std::fclose(maps);
  if (slots_.empty()) {
    ::close(fd);
    return;
  }
  fd_ = fd;
  size_ = st.st_size;
  ctime_sec_ = st.st_ctim.tv_sec;
  ctime_nsec_ = st.st_ctim.tv_nsec;
}

CacheGuard::~CacheGuard() {
  for (int i : slots_) {
    slots[i].end.store(0, std::memory_order_release);
    slots[i].start.store(0);
    slots[i].taken.store(false);
  }
  if (fd_ >= 0) ::close(fd_);
}

std::string CacheGuard::changed() const {
  if (fd_ < 0) return "";
  for (int i : slots_)
    if (slots[i].faulted.load()) return "its pages are gone (the file was truncated)";
  struct stat st;
  if (fstat(fd_, &st) != 0) return std::string("cannot stat it: ") + std::strerror(errno);
  if (st.st_size != size_)
    return "its size changed from " + std::to_string(size_) + " to " + std::to_string(st.st_size) + " bytes";
  if (st.st_ctim.tv_sec != ctime_sec_ || st.st_ctim.tv_nsec != ctime_nsec_)
    return "it was written or changed in place (its ctime changed)";
  return "";
}

}  // namespace graphrt_serve

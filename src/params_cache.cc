#include "layer_api/params_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <optional>
#include <thread>

#include "graphrt/blob_reader.h"
#include "graphrt/log.h"
#include "graphrt/regular_file.h"

namespace graphrt {

namespace {

constexpr char kMagic[8] = {'G', 'R', 'T', 'P', 'C', 'A', 'C', 'H'};
constexpr size_t kHeaderBytes = 64;
constexpr size_t kTrailerBytes = 8;
constexpr size_t kAlignment = 64;
constexpr int kMaxDims = 64;
// The smallest index record: name length, dtype, ndim, offset, bytes.
constexpr size_t kMinRecordBytes = 8 + 4 + 4 + 8 + 8;

size_t align_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

// A streaming 64-bit hash: four multiply-rotate lanes over 32-byte blocks,
// then the tail and a final avalanche.
class StreamHash {
 public:
  void update(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    total_ += n;
    if (buffered_) {
      size_t take = std::min(n, sizeof buffer_ - buffered_);
      std::memcpy(buffer_ + buffered_, b, take);
      buffered_ += take;
      b += take;
      n -= take;
      if (buffered_ < sizeof buffer_) return;
      block(buffer_);
      buffered_ = 0;
    }
    for (; n >= sizeof buffer_; b += sizeof buffer_, n -= sizeof buffer_) block(b);
    std::memcpy(buffer_, b, n);
    buffered_ = n;
  }

  uint64_t digest() const {
    uint64_t h = rotl(lanes_[0], 1) + rotl(lanes_[1], 7) + rotl(lanes_[2], 12) + rotl(lanes_[3], 18);
    for (uint64_t lane : lanes_) h = (h ^ round(0, lane)) * kP1 + kP4;
    h += total_;
    size_t i = 0;
    for (; i + 8 <= buffered_; i += 8) h = rotl(h ^ round(0, word(buffer_ + i)), 27) * kP1 + kP4;
    for (; i < buffered_; ++i) h = rotl(h ^ (buffer_[i] * kP5), 11) * kP1;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    return h ^ (h >> 32);
  }

 private:
  static constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL, kP2 = 0xC2B2AE3D27D4EB4FULL,
                            kP3 = 0x165667B19E3779F9ULL, kP4 = 0x85EBCA77C2B2AE63ULL, kP5 = 0x27D4EB2F165667C5ULL;
  static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t round(uint64_t acc, uint64_t v) { return rotl(acc + v * kP2, 31) * kP1; }
  static uint64_t word(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  void block(const uint8_t* p) {
    for (int i = 0; i < 4; ++i) lanes_[i] = round(lanes_[i], word(p + 8 * i));
  }
  uint64_t lanes_[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
  uint8_t buffer_[32];
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

// A read-only mapping of a whole file; the arrays made from it hold it.
struct FileMapping {
  std::shared_ptr<Storage> storage;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

FileMapping map_file(const RegularFile& file) {
  FileMapping m;
  m.size = file.size();
  if (m.size == 0) return m;
  void* p = mmap(nullptr, m.size, PROT_READ, MAP_SHARED, file.fd(), 0);
  if (p == MAP_FAILED)
    throw Error(Error::kind_of_errno(errno), std::string("cannot map the file: ") + std::strerror(errno))
        .with("file", file.path());
  const size_t size = m.size;
  m.storage = std::make_shared<Storage>(p, [size](void* q) { munmap(q, size); });
  m.data = static_cast<const uint8_t*>(p);
  return m;
}

template <typename T>
void put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

std::string describe_key(const ParamsCacheKey& k) {
  return std::to_string(k.source_bytes) + " bytes, modified at " + std::to_string(k.source_mtime_ns) +
         " ns, hash " + std::to_string(k.source_hash);
}

// The params of the cache at `path` for `key`; nullopt, with the reason in
// `why` (empty when there is no file), when it cannot be used.
std::optional<ParamList> try_map(const std::string& path, const ParamsCacheKey& key, std::string* why) {
  try {
    RegularFile file(path, "params cache");
    FileMapping m = map_file(file);
    return read_params_cache(m.data, m.size, &key, path, m.storage);
  } catch (const Error& e) {
    *why = e.kind() == ErrorKind::kNotFound ? "" : e.what();
    return std::nullopt;
  }
}

// Whether `a` and `b` hold the same names, types, shapes and bytes.
bool same_params(const ParamList& a, const ParamList& b, std::string* difference) {
  if (a.size() != b.size()) {
    *difference = "it holds " + std::to_string(a.size()) + " params, the model " + std::to_string(b.size());
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const NDArray& x = a[i].second;
    const NDArray& y = b[i].second;
    const bool same = a[i].first == b[i].first && x.dtype() == y.dtype() && x.shape() == y.shape() &&
                      x.nbytes() == y.nbytes() && (x.nbytes() == 0 || std::memcmp(x->data, y->data, x.nbytes()) == 0);
    if (!same) {
      *difference = "param " + std::to_string(i) + " (" + quote_untrusted(a[i].first) + ") differs from the model's ('" +
                    b[i].first + "')";
      return false;
    }
  }
  return true;
}

// An exclusive lock on a folder while one process checks and writes a cache
// in it (released on close, or when the process dies). Where the file system
// has no locks, writers race, each rename is still atomic and the last wins.
// The wait is bounded: a process that holds the lock and hangs (stopped with
// SIGSTOP, stuck on a dead disk) fails the load after kLockWait, naming the folder.
constexpr std::chrono::seconds kLockWait{120};

class FolderLock {
 public:
  enum class Wait { kBounded, kNone };
  // kNone: one try; held() says whether it was taken (a writer at work holds it otherwise).
  explicit FolderLock(const std::string& dir, Wait wait = Wait::kBounded) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0)
      throw Error(Error::kind_of_errno(errno), std::string("cannot open the params cache folder: ") +
                                                   std::strerror(errno))
          .with("dir", dir);
    const auto deadline = std::chrono::steady_clock::now() + kLockWait;
    while (!(held_ = flock(fd_, LOCK_EX | LOCK_NB) == 0)) {
      if (errno != EWOULDBLOCK && errno != EINTR) break;  // no locks on this file system: writers race
      if (wait == Wait::kNone) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        ::close(fd_);
        throw Error(ErrorKind::kResourceExhausted,
                    "another process has held the params cache folder's lock for " +
                        std::to_string(kLockWait.count()) + " s (a writer that hangs or was stopped?)")
            .with("dir", dir);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~FolderLock() { ::close(fd_); }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  int fd() const { return fd_; }
  bool held() const { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

// The temporaries "<cache_path>.tmp.*" in `dir` (writers make them under the folder's lock).
std::vector<std::string> temporaries_of(const std::string& dir, const std::string& cache_path) {
  const size_t slash = cache_path.find_last_of('/');
  const std::string prefix = (slash == std::string::npos ? cache_path : cache_path.substr(slash + 1)) + ".tmp.";
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d))
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) out.push_back(dir + "/" + e->d_name);
  closedir(d);
  return out;
}

// Removes the temporaries that writers killed mid-write left behind. With the folder's lock held
// no live writer owns one, so all go; on a file system without locks a writer may be running,
// so only files untouched for a minute go.
void remove_stale_temporaries(const std::string& dir, const std::string& cache_path, const FolderLock& lock) {
  const time_t now = time(nullptr);
  for (const std::string& path : temporaries_of(dir, cache_path)) {
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (lock.held() || now - st.st_mtime >= 60)) {
      ::unlink(path.c_str());
      log_warning("params cache: removed " + quote_untrusted(path, 4096) + ", a temporary left by a writer that did not finish");
    }
  }
}

// A valid cache is mapped without the lock; temporaries beside it are left by killed writers
// unless a writer is at work now (it holds the lock). One try for the lock, no wait.
void remove_temporaries_beside_valid_cache(const std::string& dir, const std::string& cache_path) {
  if (temporaries_of(dir, cache_path).empty()) return;
  try {
    FolderLock lock(dir, FolderLock::Wait::kNone);
    if (lock.held()) remove_stale_temporaries(dir, cache_path, lock);
  } catch (const Error&) {
    // The folder cannot be opened: the mapped cache serves, the temporaries wait for a writer.
  }
}

std::string folder_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Error write_error(const std::string& what, const std::string& path, int err) {
  return Error(Error::kind_of_errno(err), "cannot " + what + " the params cache: " + std::strerror(err))
      .with("file", path);
}

// Writes the cache to a temporary file beside `path`, syncs it and renames it
// over `path`, so that a reader sees the old file or the whole new one.
void write_cache_file(const std::string& path, const ParamsCacheKey& key, const ParamList& params, int dir_fd) {
  std::string temporary = path + ".tmp.XXXXXX";
  int fd = mkostemp(&temporary[0], O_CLOEXEC);
  if (fd < 0) throw write_error("create a temporary file for", path, errno);
  int err = 0;
  try {
    write_params_cache(key, params, [&](const void* data, size_t n) {
      const char* p = static_cast<const char*>(data);
      while (n > 0 && err == 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
          err = errno;
          break;
        }
        p += w;
        n -= static_cast<size_t>(w);
      }
    });
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  if (err == 0 && fchmod(fd, 0644) != 0) err = errno;
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(temporary.c_str());
    throw write_error("write", path, err);
  }
  fsync(dir_fd);  // the rename itself survives a crash
}

}  // namespace

uint64_t params_cache_hash(const void* data, size_t n) {
  StreamHash h;
  h.update(data, n);
  return h.digest();
}

ParamsCacheKey params_cache_key(const std::string& source_path) {
  RegularFile file(source_path, "params source");
  struct stat st;
  if (fstat(file.fd(), &st) != 0)
    throw Error(Error::kind_of_errno(errno), std::string("cannot stat: ") + std::strerror(errno))
        .with("file", source_path);
  ParamsCacheKey key;
  key.source_bytes = file.size();
  key.source_mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  FileMapping m = map_file(file);
  if (m.size) madvise(const_cast<uint8_t*>(m.data), m.size, MADV_SEQUENTIAL);
  key.source_hash = params_cache_hash(m.data, m.size);
  return key;
}

void write_params_cache(const ParamsCacheKey& key, const ParamList& params,
                        const std::function<void(const void* data, size_t n)>& sink) {
  std::string index;
  std::vector<size_t> offsets;
  size_t index_bytes = 0;
  for (const auto& p : params) {
    const DLTensor* t = p.second.handle();
    if (!t || t->device.device_type != kDLCPU || !tensor_is_contiguous(t))
      throw Error("a params cache holds CPU arrays, contiguous").with("param", p.first);
    index_bytes += 8 + p.first.size() + 8 + 8 * static_cast<size_t>(t->ndim) + 16;
  }
  size_t offset = align_up(kHeaderBytes + index_bytes);
  for (const auto& p : params) {
    const DLTensor* t = p.second.handle();
    put<uint64_t>(&index, p.first.size());
    index += p.first;
    put<uint8_t>(&index, t->dtype.code);
    put<uint8_t>(&index, t->dtype.bits);
    put<uint16_t>(&index, t->dtype.lanes);
    put<uint32_t>(&index, static_cast<uint32_t>(t->ndim));
    for (int d = 0; d < t->ndim; ++d) put<int64_t>(&index, t->shape[d]);
    const size_t nbytes = tensor_nbytes(t);
    put<uint64_t>(&index, offset);
    put<uint64_t>(&index, nbytes);
    offsets.push_back(offset);
    offset = align_up(offset + nbytes);
  }
  const size_t file_bytes = offset + kTrailerBytes;
  std::string header(kMagic, sizeof kMagic);
  put<uint32_t>(&header, kParamsCacheVersion);
  put<uint32_t>(&header, 0);
  put<uint64_t>(&header, key.source_bytes);
  put<int64_t>(&header, key.source_mtime_ns);
  put<uint64_t>(&header, key.source_hash);
  put<uint64_t>(&header, params.size());
  put<uint64_t>(&header, index.size());
  put<uint64_t>(&header, file_bytes);

  StreamHash hash;
  size_t written = 0;
  auto emit = [&](const void* data, size_t n) {
    if (n == 0) return;
    hash.update(data, n);
    sink(data, n);
    written += n;
  };
  static const char zeros[kAlignment] = {};
  auto pad_to = [&](size_t target) { emit(zeros, target - written); };
  emit(header.data(), header.size());
  emit(index.data(), index.size());
  for (size_t i = 0; i < params.size(); ++i) {
    pad_to(offsets[i]);
    const DLTensor* t = params[i].second.handle();
    emit(static_cast<const char*>(t->data) + t->byte_offset, tensor_nbytes(t));
  }
  pad_to(file_bytes - kTrailerBytes);
  const uint64_t digest = hash.digest();
  sink(&digest, sizeof digest);
}

ParamList read_params_cache(const uint8_t* data, size_t size, const ParamsCacheKey* expected,
                            const std::string& origin, const std::shared_ptr<Storage>& keep) {
  BlobReader header(data, size, origin);
  if (size < kHeaderBytes + kTrailerBytes)
    throw header.error("not a params cache: " + std::to_string(size) + " bytes, less than its header");
  if (std::memcmp(data, kMagic, sizeof kMagic) != 0) throw header.error("not a params cache (bad magic)");
  header.read_u64("magic");
  const uint32_t version = header.read_u32("format version");
  if (version != kParamsCacheVersion)
    throw header.error("params cache format version " + std::to_string(version) + "; this graphrt reads version " +
                       std::to_string(kParamsCacheVersion))
        .with_kind(ErrorKind::kUnsupported);
  header.read_u32("reserved");
  ParamsCacheKey key;
  key.source_bytes = header.read_u64("source size");
  key.source_mtime_ns = header.read_i64("source mtime");
  key.source_hash = header.read_u64("source hash");
  const uint64_t count = header.read_u64("param count");
  const uint64_t index_bytes = header.read_u64("index bytes");
  const uint64_t file_bytes = header.read_u64("file bytes");
  if (file_bytes != size)
    throw header.error("params cache of " + std::to_string(size) + " bytes; its header says " +
                       std::to_string(file_bytes) + " (truncated or damaged)");
  if (expected && !(key == *expected))
    throw header.error("stale params cache: made from a source of " + describe_key(key) + "; the source now has " +
                       describe_key(*expected))
        .with_kind(ErrorKind::kFailedPrecondition);
  const size_t body = size - kTrailerBytes;
  uint64_t stored_hash;
  std::memcpy(&stored_hash, data + body, sizeof stored_hash);
  if (params_cache_hash(data, body) != stored_hash)
    throw header.error("params cache damaged: its bytes do not match its hash");
  if (index_bytes > body - kHeaderBytes)
    throw header.error("params cache index of " + std::to_string(index_bytes) + " bytes runs past the file");
  if (count > index_bytes / kMinRecordBytes)
    throw header.error("params cache lists " + std::to_string(count) + " params in an index of " +
                       std::to_string(index_bytes) + " bytes");
  const size_t data_start = kHeaderBytes + index_bytes;

  BlobReader index(data + kHeaderBytes, index_bytes, origin);
  ParamList params;
  params.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string name = index.read_string("param name");
    try {
      DLDataType dtype;
      dtype.code = index.read_u8("dtype code");
      dtype.bits = index.read_u8("dtype bits");
      dtype.lanes = index.read_u16("dtype lanes");
      check_tensor_dtype(dtype);
      const uint32_t ndim = index.read_u32("ndim");
      if (ndim > kMaxDims) throw index.error("param has " + std::to_string(ndim) + " dimensions");
      std::vector<int64_t> shape(ndim);
      for (int64_t& d : shape) {
        d = index.read_i64("dimension");
        if (d < 0) throw index.error("param has a negative dimension");
      }
      const size_t expected_bytes = dtype_bytes(dtype, shape_numel(shape.data(), static_cast<int>(ndim)));
      const uint64_t offset = index.read_u64("data offset");
      const uint64_t nbytes = index.read_u64("data bytes");
      if (nbytes != expected_bytes)
        throw index.error("param data of " + std::to_string(nbytes) + " bytes; shape " + shape_to_string(shape) +
                          " of " + dtype_to_string(dtype) + " takes " + std::to_string(expected_bytes));
      if (offset % kAlignment != 0 || offset < data_start || offset > body || nbytes > body - offset)
        throw index.error("param data at offset " + std::to_string(offset) + " (" + std::to_string(nbytes) +
                          " bytes) is not a 64-byte aligned range after the index and inside the file");
      params.emplace_back(name, NDArray::wrap(const_cast<uint8_t*>(data) + offset, shape, dtype, DLDevice{kDLCPU, 0},
                                              keep));
    } catch (Error& e) {
      e.with("param", name);
      if (!origin.empty()) e.with("file", origin);  // kept once where the index reader named it
      throw;
    }
  }
  if (!index.at_end()) throw index.error(std::to_string(index.remaining()) + " bytes after the last index record");
  return params;
}

ParamList open_params_cache(const std::string& cache_path, const std::string& source_path,
                            const std::function<ParamList()>& decode, const ParamList* must_equal,
                            ParamsCacheUse* use) {
  const ParamsCacheKey key = params_cache_key(source_path);
  std::string why;
  auto usable = [&](std::optional<ParamList>& mapped) {
    if (mapped && must_equal && !same_params(*mapped, *must_equal, &why)) {
      why = "params cache differs from the model's params: " + why;
      mapped.reset();
    }
    return mapped.has_value();
  };
  std::optional<ParamList> mapped = try_map(cache_path, key, &why);
  if (usable(mapped)) {
    remove_temporaries_beside_valid_cache(folder_of(cache_path), cache_path);
    if (use) *use = ParamsCacheUse::kMapped;
    return std::move(*mapped);
  }
  // Checked again under the lock: another process may have written it meanwhile.
  FolderLock lock(folder_of(cache_path));
  remove_stale_temporaries(folder_of(cache_path), cache_path, lock);
  mapped = try_map(cache_path, key, &why);
  if (usable(mapped)) {
    if (use) *use = ParamsCacheUse::kMapped;
    return std::move(*mapped);
  }
  const bool rebuilt = !why.empty();
  if (rebuilt) log_warning("params cache '" + cache_path + "' rewritten: " + why);
  {
    const ParamList params = must_equal ? *must_equal : decode();
    write_cache_file(cache_path, key, params, lock.fd());
  }
  std::string again;
  mapped = try_map(cache_path, key, &again);
  if (!mapped)
    throw Error(ErrorKind::kInternal, "the params cache just written does not read back: " +
                                          (again.empty() ? std::string("it is gone") : again))
        .with("file", cache_path);
  if (use) *use = rebuilt ? ParamsCacheUse::kRebuilt : ParamsCacheUse::kWritten;
  return std::move(*mapped);
}

ParamList map_params_cache(const std::string& cache_path, const std::string& source_path,
                           const std::function<ParamList()>& decode, ParamsCacheUse* use) {
  return open_params_cache(cache_path, source_path, decode, nullptr, use);
}

}  // namespace graphrt

#include "backends/relax/tensor_cache/shard_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "graphrt/error.h"
#include "graphrt/regular_file.h"

namespace graphrt {
namespace relax {
namespace tensor_cache {

namespace {

using FileKey = std::tuple<uint64_t, uint64_t, uint64_t, int64_t, int64_t>;  // dev, inode, size, mtime s, ns

// The shard's memory is aligned as a mapping's start would be for what the views need.
constexpr size_t kShardAlignment = 4096;

FileKey key_of(const RegularFile& file) {
  struct stat st;
  if (fstat(file.fd(), &st) != 0)
    throw Error(Error::kind_of_errno(errno), std::string("cannot stat the shard file: ") + std::strerror(errno))
        .with("file", file.path());
  return FileKey(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                 static_cast<int64_t>(st.st_mtim.tv_sec), static_cast<int64_t>(st.st_mtim.tv_nsec));
}

void read_exactly(const RegularFile& file, uint8_t* to, size_t size) {
  size_t done = 0;
  while (done < size) {
    const size_t chunk = std::min<size_t>(size - done, size_t(1) << 30);
    const ssize_t n = pread(file.fd(), to + done, chunk, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw Error(Error::kind_of_errno(errno), std::string("cannot read the shard file: ") + std::strerror(errno))
          .with("file", file.path());
    if (n == 0)
      throw Error("the shard file shrank to " + std::to_string(done) + " bytes while it was read (it was " +
                  std::to_string(size) + ")")
          .with("file", file.path());
    done += static_cast<size_t>(n);
  }
}

std::shared_ptr<const ShardFile> read_whole(const RegularFile& file, const FileKey& key) {
  auto shard = std::make_shared<ShardFile>();
  shard->size = file.size();
  if (shard->size == 0) return shard;
  void* p = nullptr;
  const int err = posix_memalign(&p, kShardAlignment, shard->size);
  if (err != 0)
    throw Error(ErrorKind::kResourceExhausted, "no memory for the shard file's " + std::to_string(shard->size) +
                                                   " bytes")
        .with("file", file.path());
  shard->storage = std::make_shared<Storage>(p, [](void* q) { std::free(q); });
  shard->data = static_cast<const uint8_t*>(p);
  read_exactly(file, static_cast<uint8_t*>(p), shard->size);
  if (key_of(file) != key)  // written while read: the bytes may be half old, half new
    throw Error("the shard file changed while it was read").with("file", file.path());
  return shard;
}

struct Mappings {
  std::mutex mutex;
  std::map<FileKey, std::weak_ptr<const ShardFile>> files;

  void drop_expired() {
    for (auto it = files.begin(); it != files.end();) it = it->second.expired() ? files.erase(it) : std::next(it);
  }
};

Mappings& mappings() {
  static Mappings* m = new Mappings();  // never destroyed: arrays may outlive static destruction
  return *m;
}

}  // namespace

std::shared_ptr<const ShardFile> read_shard_file(const std::string& path) {
  RegularFile file(path, "tensor cache shard");
  const FileKey key = key_of(file);
  Mappings& m = mappings();
  std::lock_guard<std::mutex> lock(m.mutex);
  if (auto held = m.files[key].lock()) return held;
  std::shared_ptr<const ShardFile> shard = read_whole(file, key);
  m.drop_expired();
  m.files[key] = shard;
  return shard;
}

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt

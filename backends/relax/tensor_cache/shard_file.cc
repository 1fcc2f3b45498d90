#include "backends/relax/tensor_cache/shard_file.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
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

FileKey key_of(const RegularFile& file) {
  struct stat st;
  if (fstat(file.fd(), &st) != 0)
    throw Error(Error::kind_of_errno(errno), std::string("cannot stat the shard file: ") + std::strerror(errno))
        .with("file", file.path());
  return FileKey(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                 static_cast<int64_t>(st.st_mtim.tv_sec), static_cast<int64_t>(st.st_mtim.tv_nsec));
}

std::shared_ptr<const ShardFile> map_whole(const RegularFile& file) {
  auto shard = std::make_shared<ShardFile>();
  shard->size = file.size();
  if (shard->size == 0) return shard;
  void* p = mmap(nullptr, shard->size, PROT_READ, MAP_SHARED, file.fd(), 0);
  if (p == MAP_FAILED)
    throw Error(Error::kind_of_errno(errno), std::string("cannot map the shard file: ") + std::strerror(errno))
        .with("file", file.path());
  const size_t size = shard->size;
  shard->storage = std::make_shared<Storage>(p, [size](void* q) { munmap(q, size); });
  shard->data = static_cast<const uint8_t*>(p);
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

std::shared_ptr<const ShardFile> map_shard_file(const std::string& path) {
  RegularFile file(path, "tensor cache shard");
  const FileKey key = key_of(file);
  Mappings& m = mappings();
  std::lock_guard<std::mutex> lock(m.mutex);
  if (auto held = m.files[key].lock()) return held;
  std::shared_ptr<const ShardFile> shard = map_whole(file);
  m.drop_expired();
  m.files[key] = shard;
  return shard;
}

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt

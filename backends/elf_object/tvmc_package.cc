#include "tvmc_package.h"

#include <vector>

#include "graphrt/binary_loader.h"
#include "graphrt/error.h"
#include "graphrt/graph_executor.h"
#include "tar_archive.h"

namespace graphrt {
namespace elf {

namespace {

// The kernels library with a blob of its own added: its facts are the
// kernels' with the blob's symbol and memory added, every lookup but the
// blob's goes to the kernels.
class TvmcPackageLibrary : public Library {
 public:
  TvmcPackageLibrary(std::string archive, std::shared_ptr<Library> kernels, std::string blob, std::string origin)
      : archive_(std::move(archive)), kernels_(std::move(kernels)), blob_(std::move(blob)), origin_(std::move(origin)) {
    facts_ = kernels_->facts();
    facts_.blob_pages_releasable = false;  // the blob is a copy in this object
    facts_.symbols["__tvm_dev_mblob"] = LibrarySymbol{blob_.size(), false};
    LibraryRange blob_range;
    blob_range.start = reinterpret_cast<uintptr_t>(blob_.data());
    blob_range.bytes = blob_.size();
    facts_.ranges.push_back(blob_range);
  }

  void* symbol(const std::string& name) const override {
    if (name == "__tvm_dev_mblob") return const_cast<char*>(blob_.data());
    return kernels_->symbol(name);
  }
  std::string origin() const override { return origin_; }
  std::vector<std::string> symbol_names() const override { return kernels_->symbol_names(); }

 private:
  std::string archive_;  // mod.tar's objects may be linked from it in place; empty for mod.so
  std::shared_ptr<Library> kernels_;
  std::string blob_;
  std::string origin_;
};

const TarMember* find_member(const std::vector<TarMember>& members, const std::string& name) {
  for (const TarMember& m : members) {
    std::string n = m.name;
    if (n.compare(0, 2, "./") == 0) n = n.substr(2);
    if (n == name) return &m;
  }
  return nullptr;
}

}  // namespace

bool is_tvmc_package(const uint8_t* data, size_t size) {
  if (!is_tar(data, size)) return false;
  try {
    return find_member(read_tar(data, size, "<probe>"), "mod.json") != nullptr;
  } catch (const Error&) {
    return false;  // a damaged archive is reported by the loader that reads it whole
  }
}

std::shared_ptr<Library> load_tvmc_package(std::string bytes, const std::string& origin) {
  try {
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    const std::vector<TarMember> members = read_tar(data, bytes.size(), origin);
    const TarMember* graph = find_member(members, "mod.json");
    const TarMember* params = find_member(members, "mod.params");
    const TarMember* so = find_member(members, "mod.so");
    const TarMember* tar = find_member(members, "mod.tar");
    if (!params) throw Error("tvmc package without mod.params (tvmc compile writes mod.so, mod.json, mod.params)");
    if (!so && !tar)
      throw Error("tvmc package without its kernels library: neither mod.so nor mod.tar (tvmc compile writes mod.so, "
                  "mod.json, mod.params)");
    LibrarySource source;
    source.data = so ? so->data : tar->data;
    source.size = so ? so->size : tar->size;
    // From memory: the ELF loader links mod.so in-process, with no file written anywhere.
    std::shared_ptr<Library> kernels;
    try {
      kernels = load_library(so ? "elf" : "elf-object", source);
    } catch (Error& e) {
      throw e.with("member", so ? "mod.so" : "mod.tar");
    }
    if (kernels->symbol("__tvm_dev_mblob"))
      throw Error(ErrorKind::kUnsupported,
                  "the package's kernels library holds modules of its own (a __tvm_dev_mblob: BYOC, CUDA or linked "
                  "constants), which graphrt does not combine with mod.json yet; export the model with "
                  "export_library(\"deploy.so\") instead")
          .with("member", so ? "mod.so" : "mod.tar");
    // The factory record, written by the graph executor's public writer (the format's owner).
    const std::string graph_json(reinterpret_cast<const char*>(graph->data), graph->size);
    const std::string params_bytes(reinterpret_cast<const char*>(params->data), params->size);
    BlobWriter writer;
    try {
      write_graph_executor_factory(writer, graph_json, load_param_dict(params_bytes, origin + ":mod.params"));
    } catch (Error& e) {
      throw e.with("member", "mod.params");
    }
    std::string record = writer.bytes();
    std::string blob = write_module_blob({{"GraphExecutorFactory", std::move(record)}, {"_lib", ""}}, {{1}});
    // The "elf" loader copied mod.so's segments into a mapping of its own: the archive (the
    // params' bytes among it) need not stay. mod.tar's objects keep it.
    if (so) std::string().swap(bytes);
    return std::make_shared<TvmcPackageLibrary>(std::move(bytes), std::move(kernels), std::move(blob), origin);
  } catch (Error& e) {
    if (e.context_value("file").empty()) e.with("file", origin);
    throw;
  }
}

}  // namespace elf
}  // namespace graphrt

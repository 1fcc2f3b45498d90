#include "tvmc_package.h"

#include <vector>

#include "graphrt/binary_loader.h"
#include "graphrt/error.h"
#include "graphrt/graph_executor.h"
#include "tar_archive.h"

namespace graphrt {
namespace elf {

namespace {

// The kernels library with a blob of its own added: every other question goes to the kernels.
class TvmcPackageLibrary : public Library {
 public:
  TvmcPackageLibrary(std::string archive, std::shared_ptr<Library> kernels, std::string blob, std::string origin)
      : archive_(std::move(archive)), kernels_(std::move(kernels)), blob_(std::move(blob)), origin_(std::move(origin)) {}

  void* symbol(const std::string& name) const override {
    if (name == "__tvm_dev_mblob") return const_cast<char*>(blob_.data());
    return kernels_->symbol(name);
  }
  std::string origin() const override { return origin_; }
  std::vector<std::string> symbol_names() const override { return kernels_->symbol_names(); }
  std::vector<std::string> imported_symbol_names() const override { return kernels_->imported_symbol_names(); }
  bool is_function(const std::string& name) const override {
    return name != "__tvm_dev_mblob" && kernels_->is_function(name);
  }
  size_t symbol_size(const std::string& name) const override {
    return name == "__tvm_dev_mblob" ? blob_.size() : kernels_->symbol_size(name);
  }
  size_t mapped_bytes_from(const void* address, bool writable) const override {
    const char* p = static_cast<const char*>(address);
    if (!writable && p >= blob_.data() && p < blob_.data() + blob_.size())
      return static_cast<size_t>(blob_.data() + blob_.size() - p);
    return kernels_->mapped_bytes_from(address, writable);
  }
  bool holds_code(const void* address) const override { return kernels_->holds_code(address); }

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

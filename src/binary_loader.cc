#include "graphrt/binary_loader.h"

#include <sys/mman.h>

#include "graphrt/registry.h"
#include "graphrt/runtime.h"

namespace graphrt {

namespace {
constexpr uint64_t kNDArrayMagic = 0xDD5E40F096B4A13FULL;
const char kLoaderPrefix[] = "runtime.module.loadbinary_";

// A host array about to be written whole. Large ones get all their pages in
// one call: a page fault per page on first write costs several times more.
// Smaller ones come from the allocator, whose pages are often mapped already.
NDArray host_array_to_fill(const std::vector<int64_t>& shape, DLDataType dtype, size_t nbytes) {
  constexpr size_t kPopulateMinBytes = 128 << 10;
  if (nbytes < kPopulateMinBytes) return NDArray::empty(shape, dtype, DLDevice{kDLCPU, 0});
  void* data = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (data == MAP_FAILED) throw Error("out of host memory allocating " + std::to_string(nbytes) + " bytes");
  std::shared_ptr<Storage> storage;
  try {
    storage = std::make_shared<Storage>(data, [nbytes](void* p) { munmap(p, nbytes); });
  } catch (...) {
    munmap(data, nbytes);  // no Storage owns it yet
    throw;
  }
  return NDArray::wrap(data, shape, dtype, DLDevice{kDLCPU, 0}, std::move(storage));
}
}  // namespace

void register_binary_loader(const std::string& tkey, BinaryLoader loader) {
  runtime().register_binary_loader(tkey, std::move(loader));
}

void Runtime::register_binary_loader(const std::string& tkey, BinaryLoader loader) {
  set_function(kLoaderPrefix + tkey, make_function(
      [loader](const TVMArgs& args, RetValue* ret) {
        auto* reader = static_cast<BlobReader*>(args.as_handle(0));
        ret->set_module(loader(*reader));
      },
      kLoaderPrefix + tkey));
}

Module load_binary(const std::string& tkey, BlobReader& reader) {
  PackedFunc f = registry_get(kLoaderPrefix + tkey);
  if (!f) {
    std::string available;
    for (const std::string& name : registry_names()) {
      if (name.compare(0, sizeof(kLoaderPrefix) - 1, kLoaderPrefix) == 0)
        available += (available.empty() ? "" : ", ") + name.substr(sizeof(kLoaderPrefix) - 1);
    }
    throw reader.error("blob record '" + tkey + "' has no loader registered (available: " + available + ")")
        .with("tkey", tkey);
  }
  size_t start = reader.offset();
  try {
    RetValue ret = call_function(f, ArgList().add_handle(&reader));
    return ret.as_module();
  } catch (Error& e) {
    throw e.with("tkey", tkey).with("record offset", std::to_string(start));
  }
}

NDArray read_ndarray_record(BlobReader& reader) {
  size_t start = reader.offset();
  uint64_t magic = reader.read_u64("NDArray magic");
  if (magic != kNDArrayMagic) throw reader.error("bad NDArray magic at offset " + std::to_string(start));
  reader.read_u64("NDArray reserved");
  int32_t device_type = reader.read_i32("NDArray device_type");
  reader.read_i32("NDArray device_id");
  if (device_type != kDLCPU)
    throw reader.error("NDArray record stored on device type " + std::to_string(device_type) + " (must be CPU)");
  int32_t ndim = reader.read_i32("NDArray ndim");
  if (ndim < 0 || ndim > 64) throw reader.error("NDArray record has bad ndim " + std::to_string(ndim));
  DLDataType dtype;
  dtype.code = reader.read_u8("dtype code");
  dtype.bits = reader.read_u8("dtype bits");
  dtype.lanes = reader.read_u16("dtype lanes");
  if (dtype.lanes != 1 || dtype.bits == 0)
    throw reader.error("NDArray record has unsupported dtype " + dtype_to_string(dtype));
  std::vector<int64_t> shape(ndim);
  for (int i = 0; i < ndim; ++i) {
    shape[i] = reader.read_i64("NDArray shape");
    if (shape[i] < 0) throw reader.error("NDArray record has a negative dimension");
  }
  int64_t data_bytes = reader.read_i64("NDArray data_byte_size");
  // Guard the product against overflow before comparing with what is left.
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d != 0 && numel > reader.remaining() / static_cast<uint64_t>(d)) {
      throw reader.error("NDArray record shape " + shape_to_string(shape) + " is larger than the data left");
    }
    numel *= static_cast<uint64_t>(d);
  }
  uint64_t expected = numel * ((dtype.bits + 7) / 8);
  if (data_bytes < 0 || static_cast<uint64_t>(data_bytes) != expected)
    throw reader.error("NDArray record data_byte_size " + std::to_string(data_bytes) + " does not match shape " +
                       shape_to_string(shape) + " of " + dtype_to_string(dtype) + " (" + std::to_string(expected) +
                       " bytes)");
  const uint8_t* data = reader.take(expected, "NDArray data");
  NDArray array = host_array_to_fill(shape, dtype, expected);
  if (expected) std::memcpy(array->data, data, expected);
  // One param at a time: the blob's pages go as their copy arrives, so the
  // peak never holds the blob and all params together.
  reader.release_consumed();
  return array;
}

void write_ndarray_record(BlobWriter& writer, const DLTensor* tensor) {
  writer.write_u64(kNDArrayMagic);
  writer.write_u64(0);
  writer.write_u32(kDLCPU);
  writer.write_u32(0);
  writer.write_u32(static_cast<uint32_t>(tensor->ndim));
  writer.write_u8(tensor->dtype.code);
  writer.write_u8(tensor->dtype.bits);
  writer.write_u16(tensor->dtype.lanes);
  for (int i = 0; i < tensor->ndim; ++i) writer.write_u64(static_cast<uint64_t>(tensor->shape[i]));
  int64_t numel = shape_numel(tensor->shape, tensor->ndim);
  uint64_t nbytes = static_cast<uint64_t>(numel) * ((tensor->dtype.bits + 7) / 8);
  writer.write_u64(nbytes);
  if (tensor->device.device_type == kDLCPU && tensor_is_contiguous(tensor)) {
    writer.write_raw(static_cast<const char*>(tensor->data) + tensor->byte_offset, nbytes);
  } else {
    std::string host(nbytes, '\0');
    DLTensor dst = *tensor;
    dst.data = host.data();
    dst.byte_offset = 0;
    dst.strides = nullptr;
    dst.device = DLDevice{kDLCPU, 0};
    copy_tensor(tensor, &dst);
    writer.write_raw(host.data(), nbytes);
  }
}

}  // namespace graphrt

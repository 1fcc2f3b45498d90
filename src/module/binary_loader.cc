#include "graphrt/binary_loader.h"

#include <memory>

#include "graphrt/registry.h"
#include "graphrt/runtime.h"
#include "memory/host_arena.h"
#include "module/library_blob_ffi.h"

namespace graphrt {

namespace {
constexpr uint64_t kNDArrayMagic = 0xDD5E40F096B4A13FULL;
const char kLoaderPrefix[] = "runtime.module.loadbinary_";
const char kBytesLoaderPrefix[] = "ffi.Module.load_from_bytes.";
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

void Runtime::register_bytes_loader(const std::string& kind, BinaryLoader loader) {
  set_function(kBytesLoaderPrefix + kind, make_function(
      [loader](const TVMArgs& args, RetValue* ret) {
        ret->set_module(loader(*static_cast<BlobReader*>(args.as_handle(0))));
      },
      kBytesLoaderPrefix + kind));
}

Module load_module_bytes(const Runtime& runtime, const std::string& kind, BlobReader& bytes) {
  PackedFunc f = runtime.function(kBytesLoaderPrefix + kind);
  if (!f) {
    Module m = load_binary(runtime, kind, bytes);
    if (!bytes.at_end())
      throw bytes.error(std::to_string(bytes.remaining()) + " bytes of the module left unread by its loader")
          .with("tkey", kind);
    return m;
  }
  try {
    return call_function(f, ArgList().add_handle(&bytes)).as_module();
  } catch (Error& e) {
    throw e.with("tkey", kind);
  }
}

Module load_binary(const std::string& tkey, BlobReader& reader) { return load_binary(runtime(), tkey, reader); }

Module load_binary(const Runtime& runtime, const std::string& tkey, BlobReader& reader) {
  PackedFunc f = runtime.function(kLoaderPrefix + tkey);
  if (!f) {
    std::string available;
    for (const std::string& name : runtime.function_names()) {
      if (name.compare(0, sizeof(kLoaderPrefix) - 1, kLoaderPrefix) == 0)
        available += (available.empty() ? "" : ", ") + name.substr(sizeof(kLoaderPrefix) - 1);
    }
    throw reader.error("blob record " + quote_untrusted(tkey) + " has no loader registered (available: " + available + ")")
        .with("tkey", tkey).with_kind(ErrorKind::kNotFound);
  }
  size_t start = reader.offset();
  try {
    RetValue ret = call_function(f, ArgList().add_handle(&reader));
    return ret.as_module();
  } catch (Error& e) {
    throw e.with("tkey", tkey).with("record offset", std::to_string(start));
  }
}

namespace {
// What an NDArray record says about its array, checked against what is left;
// `data` points at its bytes in the blob.
struct NDArrayRecord {
  std::vector<int64_t> shape;
  DLDataType dtype{};
  size_t nbytes = 0;
  const uint8_t* data = nullptr;
};

NDArrayRecord read_ndarray_header(BlobReader& reader) {
  size_t start = reader.offset();
  uint64_t magic = reader.read_u64("NDArray magic");
  if (magic != kNDArrayMagic) throw reader.error("bad NDArray magic at offset " + std::to_string(start));
  reader.read_u64("NDArray reserved");
  int32_t device_type = reader.read_i32("NDArray device_type");
  reader.read_i32("NDArray device_id");
  if (device_type != kDLCPU)
    throw reader.error("NDArray record stored on device type " + std::to_string(device_type) + " (must be CPU)").with_kind(ErrorKind::kUnsupported);
  int32_t ndim = reader.read_i32("NDArray ndim");
  if (ndim < 0 || ndim > 64) throw reader.error("NDArray record has bad ndim " + std::to_string(ndim));
  NDArrayRecord record;
  record.dtype.code = reader.read_u8("dtype code");
  record.dtype.bits = reader.read_u8("dtype bits");
  record.dtype.lanes = reader.read_u16("dtype lanes");
  try {
    check_tensor_dtype(record.dtype);
  } catch (Error& e) {
    throw reader.error("NDArray record: " + std::string(e.message())).with("field", "dtype").with_kind(e.kind());
  }
  record.shape.resize(ndim);
  for (int i = 0; i < ndim; ++i) {
    record.shape[i] = reader.read_i64("NDArray shape");
    if (record.shape[i] < 0) throw reader.error("NDArray record has a negative dimension");
  }
  int64_t data_bytes = reader.read_i64("NDArray data_byte_size");
  // Guard the product against overflow before comparing with what is left.
  uint64_t numel = 1;
  for (int64_t d : record.shape) {
    if (d != 0 && numel > reader.remaining() / static_cast<uint64_t>(d)) {
      throw reader.error("NDArray record shape " + shape_to_string(record.shape) + " is larger than the data left");
    }
    numel *= static_cast<uint64_t>(d);
  }
  // dtype_bytes cannot overflow here: numel fits in what is left, lanes*bits/8 at most 8 KiB.
  uint64_t expected = dtype_bytes(record.dtype, static_cast<int64_t>(numel));
  if (data_bytes < 0 || static_cast<uint64_t>(data_bytes) != expected)
    throw reader.error("NDArray record data_byte_size " + std::to_string(data_bytes) + " does not match shape " +
                       shape_to_string(record.shape) + " of " + dtype_to_string(record.dtype) + " (" +
                       std::to_string(expected) + " bytes)");
  record.nbytes = static_cast<size_t>(expected);
  record.data = reader.take(record.nbytes, "NDArray data");
  return record;
}
}  // namespace

// Copies a record's bytes slice by slice where the blob's pages can be handed back, each
// slice's pages going before the next slice is read: the peak holds the params and one slice
// of the blob, not a whole record more (squeezenet1.1's largest weight is 2 MB). Returns where
// the next release starts.
static size_t copy_record_data(BlobReader& reader, void* out, const NDArrayRecord& record, size_t released) {
  constexpr size_t kSlice = size_t{256} << 10;
  if (!reader.pages_releasable()) {
    std::memcpy(out, record.data, record.nbytes);
    return released;
  }
  for (size_t at = 0; at < record.nbytes; at += kSlice) {
    const size_t n = std::min(kSlice, record.nbytes - at);
    std::memcpy(static_cast<uint8_t*>(out) + at, record.data + at, n);
    released = reader.release_range(released, reader.offset_of(record.data + at + n));
  }
  return released;
}

std::vector<NDArray> read_ndarray_records(BlobReader& reader, const std::vector<std::string>& names,
                                          const char* context_key) {
  return read_ndarray_records(runtime(), reader, names, context_key);
}

std::vector<NDArray> read_ndarray_records(const Runtime& runtime, BlobReader& reader,
                                          const std::vector<std::string>& names, const char* context_key) {
  const DLDevice host{kDLCPU, 0};
  // First the headers, all checked before any memory is taken; then one arena
  // for the large arrays, filled record by record.
  size_t first = reader.offset();
  std::vector<NDArrayRecord> records;
  records.reserve(names.size());
  size_t arena_bytes = 0;
  for (const std::string& name : names) {
    try {
      records.push_back(read_ndarray_header(reader));
    } catch (Error& e) {
      throw e.with(context_key, name);
    }
    if (records.back().nbytes >= HostArena::kMinArrayBytes) arena_bytes += HostArena::slot_bytes(records.back().nbytes);
  }
  // The pages the headers brought in go before the arena comes: the peak holds
  // the params and one record's blob pages, never the blob and the params.
  reader.release_consumed();
  std::unique_ptr<HostArena> arena = arena_bytes ? std::make_unique<HostArena>(arena_bytes) : nullptr;
  const DeviceApis apis(runtime, {host});
  std::vector<NDArray> arrays;
  arrays.reserve(records.size());
  size_t released = first;
  for (const NDArrayRecord& record : records) {
    if (record.nbytes >= HostArena::kMinArrayBytes) {
      void* data = arena->take(record.nbytes);
      arrays.push_back(NDArray::wrap(data, record.shape, record.dtype, host, arena->storage()));
    } else {
      arrays.push_back(apis.empty(record.shape, record.dtype, host));
    }
    if (record.nbytes) released = copy_record_data(reader, arrays.back()->data, record, released);
    released = reader.release_range(released, reader.offset_of(record.data + record.nbytes));
  }
  return arrays;
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
  uint64_t nbytes = dtype_bytes(tensor->dtype, numel);
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

// Memory: alloc_storage / alloc_tensor (views into pooled storage), and the
// tensor builtins that make views or copies (reshape, copy, to_device,
// ensure_zero_offset, shape_of, tensor_to_shape).
#include <cstring>
#include <string>
#include <vector>

#include "backends/relax/builtin.h"
#include "backends/relax/interpreter.h"

namespace graphrt {
namespace relax {

namespace {

void alloc_storage(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(4, "(vm, shape, device_index, dtype_hint, [scope])");
  const ShapeObj& shape = args.as_shape(1, "buffer shape");
  vm.charge(shape.dims.size(), args.name());
  // -1 (older exports): the host, which TVM keeps last.
  const int64_t given = args.as_int(2, "device_index");
  const int64_t count = static_cast<int64_t>(vm.devices().size());
  if (given < -1 || given >= count)
    throw args.error("device index " + std::to_string(given) + " outside the VM's " + std::to_string(count) +
                         " device(s) (vm_initialization)",
                     ErrorKind::kOutOfRange)
        .with("argument", "2");
  const size_t device = static_cast<size_t>(given < 0 ? count - 1 : given);
  const DLDataType hint = args.as_dtype(3, "dtype_hint");
  if (args.size() > 4) {
    const Value& scope = args.at(4);
    const StringRef* s = std::get_if<StringRef>(&scope);
    if (s && !(*s)->empty() && **s != "global")
      throw args.error("memory scope " + quote_untrusted(**s) + " is not supported (only 'global')", ErrorKind::kUnsupported)
          .with("argument", "4");
  }
  try {
    const int64_t numel = shape_numel(shape.dims.data(), static_cast<int>(shape.dims.size()));
    const size_t nbytes = dtype_bytes(hint, numel);
    if (nbytes > static_cast<size_t>(kMaxStorageBytes))
      throw Error(ErrorKind::kResourceExhausted, "storage of " + std::to_string(nbytes) + " bytes is larger than " +
                                                     std::to_string(kMaxStorageBytes));
    if (vm.devices()[device].device_type == kDLCPU) {
      *ret = vm.storages().storage(static_cast<int64_t>(nbytes));
    } else {
      *ret = vm.device_storage(device, static_cast<int64_t>(nbytes));
    }
  } catch (const Error& e) {
    throw args.error(e.message(), e.kind());
  }
}

void alloc_tensor(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(4, "(storage, offset, shape, dtype, [scope])");
  auto* storage = std::get_if<Ref<StorageObj>>(&args.at(0));
  if (!storage) throw args.type_error(0, "storage", "a storage");
  const int64_t offset = args.as_int(1, "offset");
  const ShapeObj& shape = args.as_shape(2, "shape");
  vm.charge(2 * shape.dims.size(), args.name());  // the view's shape, and the kept views' compared
  const DLDataType dtype = args.as_dtype(3, "dtype");
  try {
    check_tensor_dtype(dtype);
  } catch (const Error& e) {
    throw args.error(e.message(), e.kind()).with("argument", "3");
  }
  if (offset < 0) throw args.error("negative offset " + std::to_string(offset), ErrorKind::kOutOfRange);
  try {
    *ret = (*storage)->view(static_cast<uint64_t>(offset), shape.dims, dtype);
  } catch (const Error& e) {
    throw args.error(e.message(), ErrorKind::kOutOfRange);
  }
}

void reshape(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(tensor, shape)");
  const NDArray data = args.as_tensor(0, "data");
  const ShapeObj& shape = args.as_shape(1, "shape");
  vm.charge(shape.dims.size() + data.shape().size(), args.name());
  const int64_t want = shape_numel(shape.dims.data(), static_cast<int>(shape.dims.size()));
  const int64_t have = shape_numel(data.shape().data(), static_cast<int>(data.shape().size()));
  if (want != have)
    throw args.error("cannot reshape " + shape_to_string(data.shape()) + " to " + shape_to_string(shape.dims));
  *ret = vm.recycler().view(data, shape.dims);
}

void copy(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  args.require(1, "(value)");
  *ret = args.at(0);
}

void to_device(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(3, "(tensor, device_type, device_id)");
  const NDArray data = args.as_tensor(0, "data");
  const DLDevice dev{static_cast<DLDeviceType>(args.as_int(1, "device_type")), static_cast<int32_t>(args.as_int(2, "device_id"))};
  if (data.device() == dev) {
    *ret = data;
    return;
  }
  vm.charge(data.nbytes() / 8, args.name());
  if (dev.device_type == kDLCPU) {
    // A host copy is VM memory like any other: from the pool, under its limit.
    NDArray out = vm.pool().allocate_tensor(data.shape(), data.dtype());
    vm.device_apis().copy(data.handle(), out.handle());
    *ret = std::move(out);
  } else {
    *ret = vm.device_apis().copy_to_device(data, dev);
  }
}

void ensure_zero_offset(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(1, "(tensor)");
  const NDArray data = args.as_tensor(0, "data");
  if (data->byte_offset == 0) {
    *ret = data;
    return;
  }
  vm.charge(data.nbytes() / 8, args.name());
  NDArray out = data.device().device_type == kDLCPU ? vm.pool().allocate_tensor(data.shape(), data.dtype())
                                                    : vm.device_apis().empty(data.shape(), data.dtype(), data.device());
  vm.device_apis().copy(data.handle(), out.handle());
  *ret = std::move(out);
}

void shape_of(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(1, "(tensor)");
  const NDArray data = args.as_tensor(0, "data");
  vm.charge(data.shape().size(), args.name());
  *ret = make_shape(data.shape());
}

void tensor_to_shape(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(1, "(tensor)");
  const NDArray data = args.as_tensor(0, "data");
  const DLDataType t = data.dtype();
  if (data.shape().size() != 1 || t.code != kDLInt || (t.bits != 16 && t.bits != 32 && t.bits != 64) || t.lanes != 1)
    throw args.error("expects a 1-d int16/int32/int64 tensor, got " + dtype_to_string(t) + shape_to_string(data.shape()));
  vm.charge(static_cast<uint64_t>(data.shape()[0]), args.name());
  // A device tensor (the shape computed by a kernel there) is read through a host copy.
  const NDArray host =
      data.device().device_type == kDLCPU ? data : vm.device_apis().copy_to_device(data, DLDevice{kDLCPU, 0});
  std::vector<int64_t> dims(static_cast<size_t>(data.shape()[0]));
  const char* p = static_cast<const char*>(host->data) + host->byte_offset;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (t.bits == 16) dims[i] = reinterpret_cast<const int16_t*>(p)[i];
    if (t.bits == 32) dims[i] = reinterpret_cast<const int32_t*>(p)[i];
    if (t.bits == 64) dims[i] = reinterpret_cast<const int64_t*>(p)[i];
  }
  *ret = make_shape(std::move(dims));
}

void shape_to_tensor(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(1, "(shape)");
  const ShapeObj& shape = args.as_shape(0, "shape");
  vm.charge(shape.dims.size(), args.name());
  NDArray out =
      vm.device_apis().empty({static_cast<int64_t>(shape.dims.size())}, DLDataType{kDLInt, 64, 1}, DLDevice{kDLCPU, 0});
  if (!shape.dims.empty()) std::memcpy(out->data, shape.dims.data(), shape.dims.size() * 8);
  *ret = std::move(out);
}

const BuiltinEntry kStorageBuiltins[] = {
    {"vm.builtin.alloc_storage", alloc_storage},
    {"vm.builtin.alloc_tensor", alloc_tensor},
    {"vm.builtin.reshape", reshape},
    {"vm.builtin.copy", copy},
    {"vm.builtin.to_device", to_device},
    {"vm.builtin.ensure_zero_offset", ensure_zero_offset},
    {"vm.builtin.shape_of", shape_of},
    {"vm.builtin.tensor_to_shape", tensor_to_shape},
    {"relax.run.shape_to_tensor", shape_to_tensor},
};

}  // namespace

const BuiltinEntry* storage_builtins(size_t* count) {
  *count = sizeof(kStorageBuiltins) / sizeof(kStorageBuiltins[0]);
  return kStorageBuiltins;
}

}  // namespace relax
}  // namespace graphrt

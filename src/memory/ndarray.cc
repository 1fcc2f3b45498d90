#include "graphrt/ndarray.h"

#include <cstring>

#include "graphrt/device_api.h"
#include "graphrt/error.h"

namespace graphrt {

namespace {
constexpr size_t kAllocAlignment = 64;

NDArrayNode* new_node(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice dev) {
  auto node = std::make_unique<NDArrayNode>();
  node->shape = shape;
  node->dl.ndim = static_cast<int32_t>(shape.size());
  node->dl.shape = node->shape.empty() ? nullptr : node->shape.data();
  node->dl.dtype = dtype;
  node->dl.device = dev;
  return node.release();  // ownership moves into the NDArray's reference
}
}  // namespace

void NDArrayNode::dec_ref() const {
  if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

NDArray::NDArray(NDArrayNode* node) : node_(node) {
  if (node_) node_->inc_ref();
}
NDArray::NDArray(const NDArray& other) : NDArray(other.node_) {}
NDArray::NDArray(NDArray&& other) noexcept : node_(other.node_) { other.node_ = nullptr; }
NDArray& NDArray::operator=(NDArray other) noexcept {
  std::swap(node_, other.node_);
  return *this;
}
NDArray::~NDArray() {
  if (node_) node_->dec_ref();
}

namespace {
// NDArray::empty's work, with memory from `api`.
NDArray empty_in(DeviceAPI& api, const std::vector<int64_t>& shape, DLDataType dtype, DLDevice dev) {
  for (int64_t d : shape) {
    if (d < 0) throw Error("negative dimension in shape " + shape_to_string(shape));
  }
  size_t nbytes = dtype_bytes(dtype, shape_numel(shape.data(), static_cast<int>(shape.size())));
  void* data = api.alloc(dev, nbytes, kAllocAlignment);
  std::shared_ptr<Storage> storage;
  try {
    storage = std::make_shared<Storage>(data, [device = &api, dev](void* p) { device->free(dev, p); });
  } catch (...) {
    api.free(dev, data);  // no Storage owns it yet
    throw;
  }
  return NDArray::wrap(data, shape, dtype, dev, std::move(storage));
}
}  // namespace

NDArray NDArray::empty(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice dev) {
  return empty_in(*device_api(dev), shape, dtype, dev);
}

NDArray NDArray::view(const std::vector<int64_t>& shape, DLDataType dtype, uint64_t byte_offset) const {
  size_t need = dtype_bytes(dtype, shape_numel(shape.data(), static_cast<int>(shape.size())));
  if (byte_offset > nbytes() || need > nbytes() - byte_offset)
    throw Error(ErrorKind::kOutOfRange,
                "view of " + std::to_string(need) + " bytes at offset " + std::to_string(byte_offset) +
                " does not fit in an array of " + std::to_string(nbytes()) + " bytes");
  NDArray v(new_node(shape, dtype, device()));
  v.node_->storage = node_->storage;
  // Views keep byte_offset 0 (TVM kernels require it) and move the data pointer.
  v.node_->dl.data = static_cast<char*>(node_->dl.data) + node_->dl.byte_offset + byte_offset;
  return v;
}

NDArray NDArray::wrap(void* data, const std::vector<int64_t>& shape, DLDataType dtype, DLDevice dev,
                      std::shared_ptr<Storage> storage) {
  NDArray a(new_node(shape, dtype, dev));
  a.node_->dl.data = data;
  a.node_->storage = std::move(storage);
  return a;
}

NDArray NDArray::from_dlpack(DLManagedTensor* managed) {
  if (!managed) throw Error("from_dlpack: null DLManagedTensor");
  const DLTensor& src = managed->dl_tensor;
  std::vector<int64_t> shape(src.shape, src.shape + src.ndim);
  auto storage = std::make_shared<Storage>(managed, [](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (m->deleter) m->deleter(m);
  });
  NDArray a = wrap(src.data, shape, src.dtype, src.device, storage);
  a.node_->dl.byte_offset = src.byte_offset;
  if (src.strides) {
    a.node_->strides.assign(src.strides, src.strides + src.ndim);
    a.node_->dl.strides = a.node_->strides.data();
  }
  return a;
}

namespace {
struct DLPackExport {
  DLManagedTensor managed;
  NDArray owner;
};
}  // namespace

DLManagedTensor* NDArray::to_dlpack() const {
  if (!node_) throw Error(ErrorKind::kFailedPrecondition, "to_dlpack: undefined array");
  auto holder = std::make_unique<DLPackExport>();
  holder->owner = *this;
  holder->managed.dl_tensor = node_->dl;
  holder->managed.manager_ctx = holder.get();
  holder->managed.deleter = [](DLManagedTensor* self) {
    std::unique_ptr<DLPackExport> owned(static_cast<DLPackExport*>(self->manager_ctx));
  };
  return &holder.release()->managed;
}

NDArray NDArray::adopt_handle(DLTensor* handle) {
  NDArray a;
  a.node_ = NDArrayNode::from_handle(handle);
  return a;
}

NDArray NDArray::borrow_handle(DLTensor* handle) { return NDArray(NDArrayNode::from_handle(handle)); }

DLTensor* NDArray::release() {
  NDArrayNode* n = node_;
  node_ = nullptr;
  return n ? &n->dl : nullptr;
}

size_t NDArray::nbytes() const { return tensor_nbytes(&node_->dl); }

namespace {
// copy_from_bytes's source: `data` on the host, with the shape and dtype of `array`, which
// must hold `n` bytes.
DLTensor host_source(const NDArray& array, const void* data, size_t n) {
  if (n != array.nbytes())
    throw Error("copy_from_bytes: " + std::to_string(n) + " bytes given, array " +
                shape_to_string(array.shape()) + " " + dtype_to_string(array.dtype()) + " holds " +
                std::to_string(array.nbytes()));
  DLTensor src = *array.handle();
  src.data = const_cast<void*>(data);
  src.byte_offset = 0;
  src.strides = nullptr;
  src.device = DLDevice{kDLCPU, 0};
  return src;
}
}  // namespace

void NDArray::copy_from_bytes(const void* data, size_t n) {
  const DLTensor src = host_source(*this, data, n);
  copy_tensor(&src, &node_->dl);
}

void NDArray::copy_to_bytes(void* data, size_t n) const {
  if (n != nbytes())
    throw Error("copy_to_bytes: " + std::to_string(n) + " bytes given, array holds " + std::to_string(nbytes()));
  DLTensor dst = node_->dl;
  dst.data = data;
  dst.byte_offset = 0;
  dst.strides = nullptr;
  dst.device = DLDevice{kDLCPU, 0};
  copy_tensor(&node_->dl, &dst);
}

void NDArray::copy_from(const DLTensor* other) { copy_tensor(other, &node_->dl); }
void NDArray::copy_to(DLTensor* other) const { copy_tensor(&node_->dl, other); }

NDArray NDArray::copy_to_device(DLDevice dev) const {
  NDArray out = empty(shape(), dtype(), dev);
  copy_tensor(&node_->dl, out.handle());
  return out;
}

bool tensor_is_contiguous(const DLTensor* t) {
  if (!t->strides) return true;
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expected) return false;
    expected *= t->shape[i];
  }
  return true;
}

size_t tensor_nbytes(const DLTensor* t) { return dtype_bytes(t->dtype, shape_numel(t->shape, t->ndim)); }

namespace {
// copy_tensor's work, with the API of the side that is not the host from `api_of`.
template <typename ApiOf>
void copy_between(const DLTensor* from, DLTensor* to, void* stream, const ApiOf& api_of) {
  size_t n_from = tensor_nbytes(from);
  size_t n_to = tensor_nbytes(to);
  if (n_from != n_to)
    throw Error("copy between tensors of different sizes: " + std::to_string(n_from) + " bytes " +
                shape_to_string(from->shape, from->ndim) + " " + dtype_to_string(from->dtype) + " into " +
                std::to_string(n_to) + " bytes " + shape_to_string(to->shape, to->ndim) + " " +
                dtype_to_string(to->dtype));
  if (!tensor_is_contiguous(from) || !tensor_is_contiguous(to))
    throw Error(ErrorKind::kUnsupported, "copy of non-contiguous tensors is not supported");
  if (n_from == 0) return;
  int from_type = from->device.device_type;
  int to_type = to->device.device_type;
  // Pinned host memory (CUDAHost) is plain host memory to the CPU.
  bool from_host = from_type == kDLCPU || from_type == kDLCUDAHost;
  bool to_host = to_type == kDLCPU || to_type == kDLCUDAHost;
  if (from_host && to_host) {
    std::memmove(static_cast<char*>(to->data) + to->byte_offset,
                 static_cast<const char*>(from->data) + from->byte_offset, n_from);
    return;
  }
  if (!from_host && !to_host && from_type != to_type)
    throw Error(ErrorKind::kUnsupported,
                "copy between " + device_to_string(from->device) + " and " + device_to_string(to->device) +
                " is not supported (one side must be the host or both the same device type)");
  DLDevice dev = from_host ? to->device : from->device;
  api_of(dev).copy(from, to, stream);
}
}  // namespace

void copy_tensor(const DLTensor* from, DLTensor* to, void* stream) {
  copy_between(from, to, stream, [](DLDevice dev) -> DeviceAPI& { return *device_api(dev); });
}

NDArray DeviceApis::empty(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice dev) const {
  return empty_in(of(dev), shape, dtype, dev);
}

void DeviceApis::copy(const DLTensor* from, DLTensor* to, void* stream) const {
  copy_between(from, to, stream, [this](DLDevice dev) -> DeviceAPI& { return of(dev); });
}

NDArray DeviceApis::copy_to_device(const NDArray& array, DLDevice dev) const {
  NDArray out = empty(array.shape(), array.dtype(), dev);
  copy(array.handle(), out.handle());
  return out;
}

void DeviceApis::copy_from_bytes(const NDArray& array, const void* data, size_t n) const {
  const DLTensor src = host_source(array, data, n);
  copy(&src, array.handle());
}

}  // namespace graphrt

#include "backends/contrib_sort/axis_sort.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/float16.h"
#include "graphrt/ndarray.h"

namespace graphrt {
namespace contrib_sort {

namespace {

// The input seen as lines along the axis: line (outer, inner) holds elements
// outer * extent * inner + k * inner + inner_index for k in [0, extent).
struct Lines {
  int64_t outer = 1;
  int64_t extent = 0;
  int64_t inner = 1;
  int axis = 0;
};

std::string dims_text(const DLTensor* t) {
  std::string s = "[";
  for (int i = 0; i < t->ndim; ++i) s += (i ? ", " : "") + std::to_string(t->shape[i]);
  return s + "]";
}

void require_host_tensor(const DLTensor* t, const char* role) {
  if (!t) throw Error(std::string("the ") + role + " tensor is missing");
  if (t->device.device_type != kDLCPU)
    throw Error(ErrorKind::kUnsupported, std::string("the ") + role + " tensor is not on the CPU");
  if (t->ndim < 0 || (t->ndim > 0 && !t->shape)) throw Error(std::string("the ") + role + " tensor has no shape");
  for (int i = 0; i < t->ndim; ++i)
    if (t->shape[i] < 0) throw Error(std::string("the ") + role + " tensor has a negative dimension " + dims_text(t));
  if (t->strides) {
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; --i) {
      if (t->shape[i] != 1 && t->strides[i] != expected)
        throw Error(ErrorKind::kUnsupported, std::string("the ") + role + " tensor is not compact");
      expected *= t->shape[i];
    }
  }
  if (t->dtype.lanes != 1) throw Error(ErrorKind::kUnsupported, std::string("the ") + role + " tensor has vector lanes");
}

Lines lines_of(const AxisSort& s) {
  require_host_tensor(s.input, "input");
  const DLTensor* in = s.input;
  Lines l;
  l.axis = s.axis < 0 ? s.axis + in->ndim : s.axis;
  if (in->ndim == 0 || l.axis < 0 || l.axis >= in->ndim)
    throw Error(ErrorKind::kOutOfRange, "axis " + std::to_string(s.axis) + " outside an input of shape " + dims_text(in));
  for (int i = 0; i < in->ndim; ++i) {
    if (i < l.axis) l.outer *= in->shape[i];
    if (i > l.axis) l.inner *= in->shape[i];
  }
  l.extent = in->shape[l.axis];
  return l;
}

// An output must have the input's shape, the axis `axis_extent` long.
void require_output_shape(const DLTensor* out, const DLTensor* in, const Lines& l, int64_t axis_extent, const char* role) {
  require_host_tensor(out, role);
  bool same = out->ndim == in->ndim;
  for (int i = 0; same && i < in->ndim; ++i) same = out->shape[i] == (i == l.axis ? axis_extent : in->shape[i]);
  if (!same)
    throw Error("the " + std::string(role) + " tensor has shape " + dims_text(out) + "; the input " + dims_text(in) +
                " needs " + std::to_string(axis_extent) + " along axis " + std::to_string(l.axis));
}

template <typename T>
const T* elements(const DLTensor* t) {
  return reinterpret_cast<const T*>(static_cast<const char*>(t->data) + t->byte_offset);
}

template <typename T>
T* writable(const DLTensor* t) {
  return reinterpret_cast<T*>(static_cast<char*>(t->data) + t->byte_offset);
}

// A line's element order: positions 0..extent-1 stably sorted by value.
template <typename T, typename Key>
void order_line(const T* data, int64_t base, const Lines& l, bool ascending, Key key, std::vector<int64_t>* order) {
  order->resize(static_cast<size_t>(l.extent));
  std::iota(order->begin(), order->end(), int64_t{0});
  auto at = [&](int64_t k) { return key(data[base + k * l.inner]); };
  if (ascending) {
    std::stable_sort(order->begin(), order->end(), [&](int64_t a, int64_t b) { return at(a) < at(b); });
  } else {
    std::stable_sort(order->begin(), order->end(), [&](int64_t a, int64_t b) { return at(a) > at(b); });
  }
}

template <typename Index>
void put_index(const DLTensor* out, int64_t pos, int64_t index) {
  writable<Index>(out)[pos] = static_cast<Index>(index);
}

using IndexWriter = void (*)(const DLTensor*, int64_t, int64_t);

IndexWriter index_writer(const DLTensor* out) {
  const DLDataType t = out->dtype;
  if (t.code == kDLInt && t.bits == 32) return &put_index<int32_t>;
  if (t.code == kDLInt && t.bits == 64) return &put_index<int64_t>;
  if (t.code == kDLInt && t.bits == 8) return &put_index<int8_t>;
  if (t.code == kDLUInt && t.bits == 8) return &put_index<uint8_t>;
  if (t.code == kDLFloat && t.bits == 32) return &put_index<float>;
  if (t.code == kDLFloat && t.bits == 64) return &put_index<double>;
  throw Error(ErrorKind::kUnsupported, "indices of dtype " + dtype_to_string(t) + " are not supported");
}

// Sorts every line and hands each kept position to `emit(line_base, dst_base, rank, source_index)`.
template <typename T, typename Key, typename Emit>
void sort_lines(const AxisSort& s, const Lines& l, int64_t keep, int64_t dst_extent, Key key, Emit emit) {
  const T* data = elements<T>(s.input);
  std::vector<int64_t> order;
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      const int64_t base = o * l.extent * l.inner + i;
      order_line(data, base, l, s.ascending, key, &order);
      const int64_t dst_base = o * dst_extent * l.inner + i;
      for (int64_t r = 0; r < keep; ++r) emit(base, dst_base + r * l.inner, order[static_cast<size_t>(r)]);
    }
  }
}

// Calls f.template operator()<T>(key) for the input's element type T and the key it compares by.
template <typename F>
void dispatch_dtype(const DLTensor* in, const F& f) {
  const DLDataType t = in->dtype;
  auto same = [](auto v) { return v; };
  if (t.code == kDLFloat && t.bits == 32) return f.template operator()<float>(same);
  if (t.code == kDLFloat && t.bits == 64) return f.template operator()<double>(same);
  if (t.code == kDLFloat && t.bits == 16)
    return f.template operator()<uint16_t>([](uint16_t bits) { return float16_to_float(bits); });
  if (t.code == kDLInt && t.bits == 32) return f.template operator()<int32_t>(same);
  if (t.code == kDLInt && t.bits == 64) return f.template operator()<int64_t>(same);
  if (t.code == kDLInt && t.bits == 8) return f.template operator()<int8_t>(same);
  if (t.code == kDLUInt && t.bits == 8) return f.template operator()<uint8_t>(same);
  throw Error(ErrorKind::kUnsupported, "sorting " + dtype_to_string(t) + " is not supported");
}

bool same_dtype(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

void require_data(const DLTensor* t, const char* role) {
  if (!t->data) throw Error(std::string("the ") + role + " tensor has no data");
}

// Copies the kept positions of every line into values and/or indices (either may be null).
struct LineWriter {
  const AxisSort& s;
  const Lines& l;
  int64_t keep;
  int64_t dst_extent;
  const DLTensor* values;
  const DLTensor* indices;
  IndexWriter put;

  template <typename T, typename Key>
  void operator()(Key key) const {
    const T* data = elements<T>(s.input);
    T* out = values ? writable<T>(values) : nullptr;
    sort_lines<T>(s, l, keep, dst_extent, key, [&](int64_t base, int64_t dst, int64_t source) {
      if (out) out[dst] = data[base + source * l.inner];
      if (put) put(indices, dst, source);
    });
  }
};

// Writes the first `keep` of every line to values and/or indices (either may be null).
void write_sorted(const AxisSort& s, const Lines& l, int64_t keep, int64_t dst_extent, const DLTensor* values,
                  const DLTensor* indices) {
  if (l.outer * l.extent * l.inner == 0) return;
  require_data(s.input, "input");
  if (values) {
    require_data(values, "values");
    if (!same_dtype(values->dtype, s.input->dtype))
      throw Error(ErrorKind::kTypeMismatch, "the values tensor is " + dtype_to_string(values->dtype) + ", the input " +
                                                dtype_to_string(s.input->dtype));
  }
  const IndexWriter put = indices ? index_writer(indices) : nullptr;
  if (indices) require_data(indices, "indices");
  dispatch_dtype(s.input, LineWriter{s, l, keep, dst_extent, values, indices, put});
}

}  // namespace

void sort_values(const AxisSort& s, const DLTensor* values) {
  const Lines l = lines_of(s);
  require_output_shape(values, s.input, l, l.extent, "values");
  write_sorted(s, l, l.extent, l.extent, values, nullptr);
}

void sort_indices(const AxisSort& s, const DLTensor* indices) {
  const Lines l = lines_of(s);
  require_output_shape(indices, s.input, l, l.extent, "indices");
  write_sorted(s, l, l.extent, l.extent, nullptr, indices);
}

void sort_indices_of_prefix(const AxisSort& s, const DLTensor* counts, const DLTensor* indices) {
  const Lines l = lines_of(s);
  require_output_shape(indices, s.input, l, l.extent, "indices");
  require_host_tensor(counts, "sort_num");
  const DLDataType f32{kDLFloat, 32, 1};
  const DLDataType i32{kDLInt, 32, 1};
  if (!same_dtype(s.input->dtype, f32))
    throw Error(ErrorKind::kUnsupported, "the input is " + dtype_to_string(s.input->dtype) + "; only float32 is supported");
  if (!same_dtype(counts->dtype, i32) || !same_dtype(indices->dtype, i32))
    throw Error(ErrorKind::kTypeMismatch, "sort_num and the indices must be int32");
  int64_t lines = 1;
  for (int i = 0; i < counts->ndim; ++i) lines *= counts->shape[i];
  if (lines != l.outer * l.inner)
    throw Error("sort_num has shape " + dims_text(counts) + ": " + std::to_string(l.outer * l.inner) + " counts needed");
  if (l.outer * l.extent * l.inner == 0) return;
  require_data(s.input, "input");
  require_data(counts, "sort_num");
  require_data(indices, "indices");
  const float* data = elements<float>(s.input);
  const int32_t* count = elements<int32_t>(counts);
  int32_t* out = writable<int32_t>(indices);
  std::vector<int64_t> order;
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      const int64_t n = count[o * l.inner + i];
      if (n < 0 || n > l.extent)
        throw Error(ErrorKind::kOutOfRange, "sort_num " + std::to_string(n) + " outside 0.." + std::to_string(l.extent));
      const int64_t base = o * l.extent * l.inner + i;
      Lines prefix = l;
      prefix.extent = n;
      order_line(data, base, prefix, s.ascending, [](float v) { return v; }, &order);
      for (int64_t k = 0; k < l.extent; ++k)
        out[base + k * l.inner] = static_cast<int32_t>(k < n ? order[static_cast<size_t>(k)] : k);
    }
  }
}

void top_k(const AxisSort& s, int64_t k, const DLTensor* values, const DLTensor* indices) {
  const Lines l = lines_of(s);
  if (k < 1) k = l.extent;
  if (!values && !indices) throw Error("topk needs a values or an indices tensor");
  if (values) require_output_shape(values, s.input, l, k, "values");
  if (indices) require_output_shape(indices, s.input, l, k, "indices");
  // A k past the axis leaves the outputs' last positions as they were, as TVM's does.
  write_sorted(s, l, std::min(k, l.extent), k, values, indices);
}

}  // namespace contrib_sort
}  // namespace graphrt

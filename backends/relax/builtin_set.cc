// relax.run.nonzero and relax.run.unique: what relax.op.nonzero / unique
// lower to (TVM runs them through numpy from Python; a C++ deployment of TVM
// has neither). Host tensors, contiguous, one lane.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "graphrt/float16.h"
#include "backends/relax/builtin.h"
#include "backends/relax/interpreter.h"

namespace graphrt {
namespace relax {

namespace {

// The tensor's elements as the builtins read them: a host, contiguous,
// single-lane array of a dtype they know.
struct Elements {
  const char* data;
  size_t size;   // bytes per element
  int64_t count;
  DLDataType dtype;
};

Elements elements(const BuiltinArgs& args, const NDArray& a) {
  const DLDataType t = a.dtype();
  const bool known = t.lanes == 1 && ((t.code == kDLInt || t.code == kDLUInt) ? (t.bits == 1 || t.bits == 8 || t.bits == 16 ||
                                                                                   t.bits == 32 || t.bits == 64)
                                      : t.code == kDLFloat ? (t.bits == 16 || t.bits == 32 || t.bits == 64)
                                                           : (t.code == kDLBfloat && t.bits == 16));
  if (!known) throw args.error("unsupported dtype " + dtype_to_string(t), ErrorKind::kUnsupported);
  if (a.device().device_type != kDLCPU) throw args.error("expects a host tensor", ErrorKind::kUnsupported);
  if (a->strides && !tensor_is_contiguous(a.handle()))
    throw args.error("expects a contiguous tensor", ErrorKind::kUnsupported);
  return Elements{static_cast<const char*>(a->data) + a->byte_offset, static_cast<size_t>((t.bits + 7) / 8),
                  shape_numel(a.shape().data(), static_cast<int>(a.shape().size())), t};
}

uint64_t raw(const Elements& e, int64_t i) {
  uint64_t v = 0;
  std::memcpy(&v, e.data + static_cast<size_t>(i) * e.size, e.size);  // little-endian
  return v;
}

bool is_nonzero(const Elements& e, int64_t i) {
  const uint64_t v = raw(e, i);
  if (e.dtype.code != kDLFloat && e.dtype.code != kDLBfloat) return v != 0;
  const uint64_t magnitude = e.size == 8 ? ~(uint64_t{1} << 63) : (uint64_t{1} << (e.size * 8 - 1)) - 1;
  return (v & magnitude) != 0;  // -0.0 is zero, NaN is not
}

// relax.run.nonzero(x): int64 [max(ndim, 1), count], the indices of the
// non-zero elements in row-major order (numpy.nonzero of atleast_1d(x)).
void nonzero(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(1, "(tensor)");
  const NDArray x = args.as_tensor(0, "data");
  const Elements e = elements(args, x);
  vm.charge(static_cast<uint64_t>(e.count), args.name());
  std::vector<int64_t> shape = x.shape();
  if (shape.empty()) shape.push_back(1);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < e.count; ++i)
    if (is_nonzero(e, i)) hits.push_back(i);
  const int64_t rows = static_cast<int64_t>(shape.size());
  const int64_t n = static_cast<int64_t>(hits.size());
  vm.charge(static_cast<uint64_t>(rows * n), args.name());
  NDArray out = vm.pool().allocate_tensor({rows, n}, DLDataType{kDLInt, 64, 1});
  int64_t* o = static_cast<int64_t*>(out->data);
  for (int64_t k = 0; k < n; ++k) {
    int64_t flat = hits[static_cast<size_t>(k)];
    for (int64_t d = rows - 1; d >= 0; --d) {
      o[d * n + k] = flat % shape[static_cast<size_t>(d)];
      flat /= shape[static_cast<size_t>(d)];
    }
  }
  *ret = std::move(out);
}

// An element as a number to order by (NaN sorts last, as numpy's does).
double key(const Elements& e, int64_t i) {
  const uint64_t v = raw(e, i);
  switch (e.dtype.code) {
    case kDLFloat:
      if (e.size == 2) return float16_to_float(static_cast<uint16_t>(v));
      if (e.size == 4) {
        float f;
        std::memcpy(&f, &v, 4);
        return f;
      } else {
        double d;
        std::memcpy(&d, &v, 8);
        return d;
      }
    case kDLBfloat:
      return bfloat16_to_float(static_cast<uint16_t>(v));
    case kDLInt: {
      const int shift = 64 - static_cast<int>(e.size * 8);
      return static_cast<double>(static_cast<int64_t>(v << shift) >> shift);
    }
    default:
      return static_cast<double>(v);
  }
}

bool less(double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; }
bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// relax.run.unique(x, sorted, return_index, return_inverse, return_counts,
// axis): the distinct elements of the flattened x, ascending when `sorted`,
// else in the order they first occur (numpy.unique). Only the values (TVM's
// own helper refuses the return_* flags), and no axis.
void unique(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(5, "(tensor, sorted, return_index, return_inverse, return_counts, [axis])");
  const NDArray x = args.as_tensor(0, "data");
  const bool sorted = args.as_int(1, "sorted") != 0;
  for (int i = 2; i <= 4; ++i)
    if (args.as_int(i, "return flag") != 0)
      throw args.error("return_index, return_inverse and return_counts are not supported (TVM's helper refuses them too)",
                       ErrorKind::kUnsupported);
  if (args.size() > 5 && !std::holds_alternative<std::monostate>(args.at(5)))
    throw args.error("unique along an axis is not supported", ErrorKind::kUnsupported);
  const Elements e = elements(args, x);
  // A sort: n log n.
  vm.charge(static_cast<uint64_t>(e.count) * (1 + static_cast<uint64_t>(std::log2(static_cast<double>(e.count) + 1))),
            args.name());
  std::vector<double> keys(static_cast<size_t>(e.count));
  for (int64_t i = 0; i < e.count; ++i) keys[static_cast<size_t>(i)] = key(e, i);
  std::vector<int64_t> order(static_cast<size_t>(e.count));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return less(keys[static_cast<size_t>(a)], keys[static_cast<size_t>(b)]);
  });
  std::vector<int64_t> firsts;  // the first occurrence of each distinct value, ascending by value
  for (size_t k = 0; k < order.size(); ++k)
    if (k == 0 || !same(keys[static_cast<size_t>(order[k])], keys[static_cast<size_t>(order[k - 1])]))
      firsts.push_back(order[k]);
  if (!sorted) std::sort(firsts.begin(), firsts.end());
  NDArray out = vm.pool().allocate_tensor({static_cast<int64_t>(firsts.size())}, e.dtype);
  char* o = static_cast<char*>(out->data);
  for (size_t k = 0; k < firsts.size(); ++k)
    std::memcpy(o + k * e.size, e.data + static_cast<size_t>(firsts[k]) * e.size, e.size);
  *ret = std::move(out);
}

const BuiltinEntry kSetBuiltins[] = {
    {"relax.run.nonzero", nonzero},
    {"relax.run.unique", unique},
};

}  // namespace

const BuiltinEntry* set_builtins(size_t* count) {
  *count = sizeof(kSetBuiltins) / sizeof(kSetBuiltins[0]);
  return kSetBuiltins;
}

}  // namespace relax
}  // namespace graphrt

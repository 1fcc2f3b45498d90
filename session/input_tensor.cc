// A caller's DLTensor checked before a runner reads it (input_tensor.h).
#include "input_tensor.h"

#include <limits>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"

namespace graphrt {

namespace {

// A rank no model takes; a larger `ndim` is a lie (or garbage), and reading that many
// dimensions would run past the caller's shape array.
constexpr int kMaxRank = 64;

Error refused(const std::string& name, const std::string& why) {
  return Error("input " + quote_untrusted(name) + ": " + why).with("tensor", name);
}

}  // namespace

void check_input_tensor(const DLTensor* value, const std::string& name, InputUse use, int rank) {
  if (!value) throw refused(name, "null tensor");
  if (value->ndim < 0 || value->ndim > kMaxRank)
    throw refused(name, "ndim " + std::to_string(value->ndim) + " is not a rank (0.." + std::to_string(kMaxRank) + ")");
  if (rank >= 0 && value->ndim != rank)
    throw refused(name, "takes rank " + std::to_string(rank) + ", got ndim " + std::to_string(value->ndim));
  if (value->ndim > 0 && !value->shape) throw refused(name, "null shape with ndim " + std::to_string(value->ndim));
  uint64_t elements = 1;
  for (int i = 0; i < value->ndim; ++i) {
    const int64_t d = value->shape[i];
    if (d < 0) throw refused(name, "dimension " + std::to_string(i) + " is negative (" + std::to_string(d) + ")");
    if (d != 0 && elements > std::numeric_limits<uint64_t>::max() / 8 / static_cast<uint64_t>(d))
      throw refused(name, "the shape's element count overflows");
    elements *= static_cast<uint64_t>(d);
  }
  const uint64_t bits = static_cast<uint64_t>(value->dtype.bits) * value->dtype.lanes;
  if (bits == 0) throw refused(name, "dtype with no bits or no lanes");
  if (elements > std::numeric_limits<uint64_t>::max() / bits) throw refused(name, "the tensor's byte count overflows");
  if (!value->data && elements != 0) throw refused(name, "null data");
  if (value->strides && !tensor_is_contiguous(value))
    throw refused(name, use == InputUse::kZeroCopy
                            ? "zero-copy tensors must be compact (row-major, no gaps): these strides are not"
                            : "non-compact strides: copy it to a compact tensor first");
}

}  // namespace graphrt

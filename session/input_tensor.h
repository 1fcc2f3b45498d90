// What a runner refuses of a caller's DLTensor before reading it (session layer, internal):
// the C API and Python hand over raw DLTensors, so a NULL data or shape pointer, a negative
// rank or dimension, or (zero-copy) strides that are not the compact row-major order must be
// an error naming the input, never a dereference.
#pragma once

#include <string>

#include <dlpack/dlpack.h>

namespace graphrt {

enum class InputUse { kCopied, kZeroCopy };

// Throws an Error (invalid argument, "tensor" `name`) for a tensor the runner cannot read as
// `use` says; nothing of the tensor's data is read. `rank` is the rank the function takes (-1
// where it does not say): a rank other than that is refused before `shape` is read, so a lying
// `ndim` does not walk past the caller's shape array.
void check_input_tensor(const DLTensor* value, const std::string& name, InputUse use, int rank);

}  // namespace graphrt

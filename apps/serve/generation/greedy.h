// Greedy decoding: the next token is the argmax of the logits.
#pragma once

#include <cstdint>

#include "graphrt/ndarray.h"

namespace graphrt_serve {

// The index of the largest float32 logit of the last row of `logits` (shape
// [..., vocab], on the CPU); the first one on ties, as numpy's argmax.
// Throws graphrt::Error (unsupported) for another dtype.
int32_t greedy_token(const graphrt::NDArray& logits);

}  // namespace graphrt_serve

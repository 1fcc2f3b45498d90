#include "generation/greedy.h"

#include "graphrt/error.h"

namespace graphrt_serve {

int32_t greedy_token(const graphrt::NDArray& logits) {
  const DLDataType t = logits.dtype();
  if (t.code != kDLFloat || t.bits != 32 || t.lanes != 1 || logits.shape().empty())
    throw graphrt::Error(graphrt::ErrorKind::kUnsupported,
                         "the model's logits must be float32 [..., vocab] for greedy decoding");
  const int64_t vocab = logits.shape().back();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < logits.shape().size(); ++d) rows *= logits.shape()[d];
  if (vocab <= 0 || rows <= 0) throw graphrt::Error(graphrt::ErrorKind::kUnsupported, "the model's logits are empty");
  const auto* base = static_cast<const char*>(logits->data) + logits->byte_offset;
  const float* row = reinterpret_cast<const float*>(base) + (rows - 1) * vocab;
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; ++i)
    if (row[i] > row[best]) best = i;
  return static_cast<int32_t>(best);
}

}  // namespace graphrt_serve

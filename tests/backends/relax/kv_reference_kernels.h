// Plain C++ stand-ins for the kernels TVM passes to its paged KV cache, with
// the same arguments (TVM v0.26 kv_cache.py, _prefill/_decode/_page_kernels):
// float32, no RoPE, lse in natural log. They compute what the page tables say
// (pages, page_indptr, page_indices, last_page_len, qo_indptr), so a test
// that compares the cache's attention with attention over each sequence's
// whole history checks the tables the cache hands its kernels.
#pragma once

#include <string>
#include <vector>

#include "graphrt/packed_func.h"

namespace graphrt_test {

struct KvReferenceKernels {
  graphrt::PackedFunc transpose_append, prefill_ragged, prefill_paged, decode_paged, merge, split_rotary,
      copy_single_page, debug_get_kv, compact_copy;
  int64_t page_size;
  // Names of the kernels called, in order (the test clears it).
  std::shared_ptr<std::vector<std::string>> calls;
};

KvReferenceKernels kv_reference_kernels(int64_t page_size);

}  // namespace graphrt_test

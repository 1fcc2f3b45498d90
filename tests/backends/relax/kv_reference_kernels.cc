#include "kv_reference_kernels.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "graphrt/ndarray.h"

namespace graphrt_test {

namespace {

using graphrt::NDArray;
using graphrt::TVMArgs;

template <typename T>
T* at(const NDArray& a) {
  return reinterpret_cast<T*>(static_cast<char*>(a->data) + a->byte_offset);
}

// pages [num_pages, 2, kv_heads, page_size, dim]: the address of K (kv 0) or V (kv 1) of a slot.
float* slot(const NDArray& pages, int64_t page, int kv, int64_t head, int64_t offset) {
  const auto& s = pages.shape();
  return at<float>(pages) + (((page * 2 + kv) * s[2] + head) * s[3] + offset) * s[4];
}

// One query row's attention over `n` keys/values given by accessors; writes out[dim] and lse.
template <typename K, typename V>
void attend(const float* q, int64_t n, int64_t dim, double scale, K key, V value, float* out, float* lse) {
  std::vector<double> logits(static_cast<size_t>(n));
  double m = -INFINITY;
  for (int64_t j = 0; j < n; ++j) {
    double dot = 0;
    const float* k = key(j);
    for (int64_t d = 0; d < dim; ++d) dot += double(q[d]) * k[d];
    logits[size_t(j)] = dot * scale;
    m = std::max(m, logits[size_t(j)]);
  }
  double sum = 0;
  std::vector<double> acc(size_t(dim), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const double w = std::exp(logits[size_t(j)] - m);
    sum += w;
    const float* v = value(j);
    for (int64_t d = 0; d < dim; ++d) acc[size_t(d)] += w * v[d];
  }
  for (int64_t d = 0; d < dim; ++d) out[d] = n ? float(acc[size_t(d)] / sum) : 0.0f;
  *lse = n ? float(m + std::log(sum)) : -INFINITY;
}

// Attention of query rows [q_begin, q_end) to the tokens of a page list.
void paged_rows(const NDArray& q, const NDArray& pages, const int32_t* page_ids, int64_t num_pages, int64_t last_len,
                int64_t q_begin, int64_t q_end, double scale, const NDArray& out, const NDArray& lse) {
  const int64_t heads = q.shape()[1], dim = q.shape()[2], kv_heads = pages.shape()[2], ps = pages.shape()[3];
  const int64_t n = num_pages == 0 ? 0 : (num_pages - 1) * ps + last_len;
  for (int64_t r = q_begin; r < q_end; ++r)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t kh = h / (heads / kv_heads);
      auto key = [&](int64_t j) { return slot(pages, page_ids[j / ps], 0, kh, j % ps); };
      auto value = [&](int64_t j) { return slot(pages, page_ids[j / ps], 1, kh, j % ps); };
      attend(at<float>(q) + (r * heads + h) * dim, n, dim, scale, key, value, at<float>(out) + (r * heads + h) * dim,
             at<float>(lse) + r * heads + h);
    }
}

graphrt::PackedFunc recorded(std::shared_ptr<std::vector<std::string>> calls, const char* name,
                             std::function<void(const TVMArgs&)> body) {
  return graphrt::make_function(
      [calls, name, body](const TVMArgs& args, graphrt::RetValue*) {
        calls->push_back(name);
        body(args);
      },
      name);
}

void transpose_append(const TVMArgs& a) {
  const NDArray pages = a.as_ndarray(0), k = a.as_ndarray(1), v = a.as_ndarray(2), pos = a.as_ndarray(3);
  const int64_t heads = k.shape()[1], dim = k.shape()[2], ps = pages.shape()[3];
  for (int64_t t = 0; t < k.shape()[0]; ++t) {
    const int32_t p = at<int32_t>(pos)[t];
    for (int64_t h = 0; h < heads; ++h) {
      std::copy_n(at<float>(k) + (t * heads + h) * dim, dim, slot(pages, p / ps, 0, h, p % ps));
      std::copy_n(at<float>(v) + (t * heads + h) * dim, dim, slot(pages, p / ps, 1, h, p % ps));
    }
  }
}

// (q, qo_indptr, k, v, kv_indptr, q_pos, k_pos_offset, out, lse, causal, rotary_mode, scale, theta, sm_scale)
void prefill_ragged(const TVMArgs& a) {
  const NDArray q = a.as_ndarray(0), qo = a.as_ndarray(1), k = a.as_ndarray(2), v = a.as_ndarray(3),
                kvp = a.as_ndarray(4), out = a.as_ndarray(7), lse = a.as_ndarray(8);
  const double scale = a.as_float(13);
  const int64_t heads = q.shape()[1], dim = q.shape()[2], kv_heads = k.shape()[1];
  for (int64_t b = 0; b + 1 < qo.shape()[0]; ++b) {
    const int64_t q0 = at<int32_t>(qo)[b], k0 = at<int32_t>(kvp)[b];
    for (int64_t r = q0; r < at<int32_t>(qo)[b + 1]; ++r)
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t kh = h / (heads / kv_heads);
        auto key = [&](int64_t j) { return at<float>(k) + ((k0 + j) * kv_heads + kh) * dim; };
        auto value = [&](int64_t j) { return at<float>(v) + ((k0 + j) * kv_heads + kh) * dim; };
        attend(at<float>(q) + (r * heads + h) * dim, r - q0 + 1, dim, scale, key, value,
               at<float>(out) + (r * heads + h) * dim, at<float>(lse) + r * heads + h);
      }
  }
}

// (q, qo_indptr, pages, page_indptr, page_indices, length_info, k_pos, q_pos, out, lse, causal, ...)
void prefill_paged(const TVMArgs& a) {
  const NDArray q = a.as_ndarray(0), qo = a.as_ndarray(1), pages = a.as_ndarray(2), pip = a.as_ndarray(3),
                pidx = a.as_ndarray(4), last = a.as_ndarray(5);
  for (int64_t b = 0; b + 1 < qo.shape()[0]; ++b) {
    const int32_t p0 = at<int32_t>(pip)[b], p1 = at<int32_t>(pip)[b + 1];
    paged_rows(q, pages, at<int32_t>(pidx) + p0, p1 - p0, at<int32_t>(last)[b], at<int32_t>(qo)[b],
               at<int32_t>(qo)[b + 1], a.as_float(14), a.as_ndarray(8), a.as_ndarray(9));
  }
}

// (q, pages, page_indptr, page_indices, length_info, k_pos, q_pos, out, lse, rotary_mode, scale, theta, sm_scale)
void decode_paged(const TVMArgs& a) {
  const NDArray q = a.as_ndarray(0), pages = a.as_ndarray(1), pip = a.as_ndarray(2), pidx = a.as_ndarray(3),
                last = a.as_ndarray(4);
  for (int64_t b = 0; b < q.shape()[0]; ++b) {
    const int32_t p0 = at<int32_t>(pip)[b], p1 = at<int32_t>(pip)[b + 1];
    paged_rows(q, pages, at<int32_t>(pidx) + p0, p1 - p0, at<int32_t>(last)[b], b, b + 1, a.as_float(12),
               a.as_ndarray(7), a.as_ndarray(8));
  }
}

void merge(const TVMArgs& a) {
  const NDArray o = a.as_ndarray(0), s = a.as_ndarray(1), o2 = a.as_ndarray(2), s2 = a.as_ndarray(3);
  const int64_t rows = o.shape()[0] * o.shape()[1], dim = o.shape()[2];
  for (int64_t r = 0; r < rows; ++r) {
    const double m = std::max(at<float>(s)[r], at<float>(s2)[r]);
    const double w1 = std::exp(at<float>(s)[r] - m), w2 = std::exp(at<float>(s2)[r] - m);
    for (int64_t d = 0; d < dim; ++d)
      at<float>(o)[r * dim + d] = float((at<float>(o)[r * dim + d] * w1 + at<float>(o2)[r * dim + d] * w2) / (w1 + w2));
    at<float>(s)[r] = float(m + std::log(w1 + w2));
  }
}

// (qkv, positions, q, k, v, apply_rope): a plain split (RoPE is the kernel's business, not the cache's).
void split_rotary(const TVMArgs& a) {
  const NDArray qkv = a.as_ndarray(0), q = a.as_ndarray(2), k = a.as_ndarray(3), v = a.as_ndarray(4);
  const int64_t hq = q.shape()[1], hk = k.shape()[1], dim = q.shape()[2], fused = qkv.shape()[1];
  for (int64_t t = 0; t < qkv.shape()[0]; ++t)
    for (int64_t h = 0; h < fused; ++h) {
      float* dst = h < hq ? at<float>(q) + (t * hq + h) * dim
                   : h < hq + hk ? at<float>(k) + (t * hk + h - hq) * dim
                                 : at<float>(v) + (t * hk + h - hq - hk) * dim;
      std::copy_n(at<float>(qkv) + (t * fused + h) * dim, dim, dst);
    }
}

void copy_single_page(const TVMArgs& a) {
  const NDArray pages = a.as_ndarray(0);
  const int64_t src = a.as_int(1), dst = a.as_int(2), n = a.as_int(3);
  for (int kv = 0; kv < 2; ++kv)
    for (int64_t h = 0; h < pages.shape()[2]; ++h)
      std::copy_n(slot(pages, src, kv, h, 0), n * pages.shape()[4], slot(pages, dst, kv, h, 0));
}

// (pages, position_map, k [layers, n, heads, dim], v, layer)
void debug_get_kv(const TVMArgs& a) {
  const NDArray pages = a.as_ndarray(0), pos = a.as_ndarray(1), k = a.as_ndarray(2), v = a.as_ndarray(3);
  const int64_t layer = a.as_int(4), n = pos.shape()[0], heads = k.shape()[2], dim = k.shape()[3], ps = pages.shape()[3];
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < heads; ++h) {
      const int32_t p = at<int32_t>(pos)[t];
      std::copy_n(slot(pages, p / ps, 0, h, p % ps), dim, at<float>(k) + ((layer * n + t) * heads + h) * dim);
      std::copy_n(slot(pages, p / ps, 1, h, p % ps), dim, at<float>(v) + ((layer * n + t) * heads + h) * dim);
    }
}

}  // namespace

KvReferenceKernels kv_reference_kernels(int64_t page_size) {
  KvReferenceKernels k;
  k.page_size = page_size;
  k.calls = std::make_shared<std::vector<std::string>>();
  k.transpose_append = recorded(k.calls, "transpose_append", transpose_append);
  k.prefill_ragged = recorded(k.calls, "prefill_ragged", prefill_ragged);
  k.prefill_paged = recorded(k.calls, "prefill_paged", prefill_paged);
  k.decode_paged = recorded(k.calls, "decode_paged", decode_paged);
  k.merge = recorded(k.calls, "merge", merge);
  k.split_rotary = recorded(k.calls, "split_rotary", split_rotary);
  k.copy_single_page = recorded(k.calls, "copy_single_page", copy_single_page);
  k.debug_get_kv = recorded(k.calls, "debug_get_kv", debug_get_kv);
  k.compact_copy = recorded(k.calls, "compact_copy", [](const TVMArgs&) {});
  return k;
}

}  // namespace graphrt_test

// UTF-8 as RFC 3629 defines it: the one check graphrt's JSON reader and
// writer (and whatever else takes text) share.
#pragma once

#include "graphrt/export.h"

#include <cstddef>

namespace graphrt {

// The length (2-4) of the well-formed UTF-8 sequence of more than one byte at
// `p`, or 0 when the bytes there are not one: a stray continuation byte, an
// overlong form, a surrogate, a code point past U+10FFFF, or a sequence cut
// short by `left`. ASCII (below 0x80) is not asked about here.
GRAPHRT_HEADER_ONLY inline size_t utf8_sequence_length(const unsigned char* p, size_t left) {
  const unsigned char c = p[0];
  const size_t n = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
  if (n == 0 || n > left) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((p[i] & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && p[1] < 0xA0) return 0;   // overlong
  if (c == 0xED && p[1] >= 0xA0) return 0;  // a surrogate
  if (c == 0xF0 && p[1] < 0x90) return 0;   // overlong
  if (c == 0xF4 && p[1] >= 0x90) return 0;  // past U+10FFFF
  return n;
}

}  // namespace graphrt

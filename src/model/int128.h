// A 128-bit integer for exact intermediate products of 64-bit amounts (a * b / c).
#pragma once

#include <cstdint>
#include <limits>

namespace gantry {
__extension__ typedef __int128 Int128;  // __extension__: GCC's type, allowed under -Wpedantic

// a * b / c, truncated toward zero, exact. In 64 bits when the product and c fit there:
// 128-bit division is a library call several times slower, and job orders and node
// scores divide in their inner loops.
// REQUIRES: c > 0.
inline Int128 MulDiv(int64_t a, int64_t b, Int128 c) {
  int64_t product = 0;
  if (c <= std::numeric_limits<int64_t>::max() && !__builtin_mul_overflow(a, b, &product)) {
    return product / static_cast<int64_t>(c);
  }
  return static_cast<Int128>(a) * b / c;
}
}  // namespace gantry

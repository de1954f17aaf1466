// A small, seeded random generator with a fixed algorithm (SplitMix64), so that a seed
// gives the same choices on every platform and standard library.
#pragma once

#include <cstdint>

namespace gantry {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n). REQUIRES: n > 0. Rejection sampling, so there is no modulo bias.
  uint64_t Uniform(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
      x = Next();
    } while (x >= limit);
    return x % n;
  }

 private:
  uint64_t state_;
};

}  // namespace gantry

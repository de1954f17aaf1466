#include "model/int128.h"

#include <gtest/gtest.h>

#include <limits>

namespace gantry {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(MulDivTest, SmallProductsTruncateTowardZero) {
  EXPECT_EQ(MulDiv(7, 3, 2), 10);
  EXPECT_EQ(MulDiv(-7, 3, 2), -10);
  EXPECT_EQ(MulDiv(0, kMax, 5), 0);
  EXPECT_EQ(MulDiv(2'000, 1'000'000, 8'000), 250'000);
}

TEST(MulDivTest, ProductsBeyond64BitsStayExact) {
  // 4 TiB of memory in milli-bytes times a million overflows 64 bits.
  const int64_t memory = int64_t{4} << 40 << 10;  // 2^52
  EXPECT_EQ(MulDiv(memory, 1'000'000, Int128{memory} * 4), 250'000);
  EXPECT_EQ(MulDiv(kMax, kMax, kMax), kMax);
  EXPECT_EQ(MulDiv(-kMax, 2, 4), -(kMax / 2));
}

TEST(MulDivTest, DivisorsBeyond64Bits) {
  const Int128 huge = Int128{kMax} * 3;
  EXPECT_EQ(MulDiv(kMax, 6, huge), 2);
  EXPECT_EQ(MulDiv(1, 1, huge), 0);
}

}  // namespace
}  // namespace gantry

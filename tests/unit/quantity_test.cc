#include "model/quantity.h"

#include <gtest/gtest.h>

namespace gantry {
namespace {

struct QuantityCase {
  const char* text;
  Milli milli;
};

class QuantityParseTest : public ::testing::TestWithParam<QuantityCase> {};

TEST_P(QuantityParseTest, ParsesExactly) {
  auto parsed = ParseQuantity(GetParam().text);
  ASSERT_TRUE(parsed.ok()) << GetParam().text << ": " << parsed.status().message();
  EXPECT_EQ(*parsed, GetParam().milli) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Forms, QuantityParseTest,
    ::testing::Values(QuantityCase{"500m", 500}, QuantityCase{"2", 2000}, QuantityCase{"1.5", 1500},
                      QuantityCase{".5", 500}, QuantityCase{"5.", 5000}, QuantityCase{"+3", 3000},
                      QuantityCase{"-2", -2000}, QuantityCase{"0", 0}, QuantityCase{"0.000", 0},
                      QuantityCase{"64Gi", 64LL * 1024 * 1024 * 1024 * 1000},
                      QuantityCase{"1Ki", 1024000}, QuantityCase{"1Mi", 1048576000LL},
                      QuantityCase{"1.5Gi", 1610612736000LL}, QuantityCase{"1k", 1000000},
                      QuantityCase{"1M", 1000000000LL}, QuantityCase{"1G", 1000000000000LL},
                      QuantityCase{"2T", 2000000000000000LL}, QuantityCase{"1P", 1000000000000000000LL},
                      QuantityCase{"1e3", 1000000}, QuantityCase{"1E3", 1000000},
                      QuantityCase{"1e-3", 1}, QuantityCase{"25e-1", 2500},
                      QuantityCase{"1n", 1},     // rounds up to one milli-unit
                      QuantityCase{"1500u", 2},  // 1.5m rounds up
                      QuantityCase{"1000u", 1}, QuantityCase{"0.0001", 1},
                      QuantityCase{"100m", 100}, QuantityCase{"007", 7000},
                      QuantityCase{"1.000000000000000000000000000000000000000000", 1000},
                      QuantityCase{"9223372036854775807m", 9223372036854775807LL},
                      QuantityCase{"8Pi", 8LL * 1024 * 1024 * 1024 * 1024 * 1024 * 1000}));

TEST(QuantityTest, RejectsMalformedTextAndQuotesIt) {
  for (const char* bad : {"", "abc", "1.2.3", "Gi", "1Gb", "1 Gi", "1e", "1e+", "--1", "1m2",
                          "0x10", "1.5ki", "∞", ".", "+", "1ee3"}) {
    auto parsed = ParseQuantity(bad);
    ASSERT_FALSE(parsed.ok()) << "accepted \"" << bad << "\"";
    EXPECT_NE(parsed.status().message().find(std::string("\"") + bad + "\""), std::string::npos)
        << parsed.status().message();
  }
}

TEST(QuantityTest, OverflowIsAnErrorNotAWrap) {
  for (const char* big : {"12E", "9223372036854775808m", "9223372036854776", "16Ei", "1e100",
                          "1e99999", "99999999999999999999999999999999999999999999"}) {
    auto parsed = ParseQuantity(big);
    ASSERT_FALSE(parsed.ok()) << "accepted \"" << big << "\"";
    EXPECT_EQ(parsed.status().code(), Status::Code::kOutOfRange) << big << ": " << parsed.status().message();
    EXPECT_NE(parsed.status().message().find("too large"), std::string::npos);
  }
}

TEST(QuantityTest, FormatsTheShortWay) {
  EXPECT_EQ(FormatQuantity(2000), "2");
  EXPECT_EQ(FormatQuantity(500), "500m");
  EXPECT_EQ(FormatQuantity(1500), "1500m");
  EXPECT_EQ(FormatQuantity(64LL * 1024 * 1024 * 1024 * 1000, /*binary=*/true), "64Gi");
  EXPECT_EQ(FormatQuantity(1000LL * 1000, /*binary=*/true), "1000");
  EXPECT_EQ(FormatQuantity(-3000), "-3");
}

// The ends of the int64 range, which the fuzzers (text in, text out) never produce: INT64_MIN
// has no positive counterpart, so "-" + the format of its negation cannot work. Expected
// strings are the decimal digits of 2^63 - 1 and 2^63, written out.
TEST(QuantityTest, FormatsTheEndsOfTheRange) {
  EXPECT_EQ(FormatQuantity(INT64_MAX), "9223372036854775807m");
  EXPECT_EQ(FormatQuantity(INT64_MIN), "-9223372036854775808m");
  EXPECT_EQ(FormatQuantity(INT64_MIN, /*binary=*/true), "-9223372036854775808m");
  EXPECT_EQ(FormatQuantity(INT64_MIN + 1), "-9223372036854775807m");
  EXPECT_EQ(FormatQuantity(INT64_MAX - 807), "9223372036854775");
  EXPECT_EQ(FormatQuantity(-(INT64_MAX - 807)), "-9223372036854775");
  EXPECT_EQ(FormatQuantity(-1), "-1m");
  EXPECT_EQ(FormatQuantity(0, /*binary=*/true), "0");
  // 8Pi (2^53 bytes, in milli-units) is the largest multiple of 1Pi that fits; 1Ei does not.
  EXPECT_EQ(FormatQuantity(-8LL * 1024 * 1024 * 1024 * 1024 * 1024 * 1000, true), "-8Pi");
}

// What is formatted reads back as the same amount, at the ends of the range too; the one
// amount that does not, INT64_MIN, is refused as out of range rather than read as another.
TEST(QuantityTest, FormattedExtremesReadBack) {
  for (Milli v : {INT64_MAX, INT64_MAX - 1, INT64_MIN + 1, Milli{-1}, Milli{1}, Milli{0},
                  INT64_MAX - 807, -(INT64_MAX - 807)}) {
    for (bool binary : {false, true}) {
      auto back = ParseQuantity(FormatQuantity(v, binary));
      ASSERT_TRUE(back.ok()) << v << ": " << back.status().message();
      EXPECT_EQ(*back, v) << FormatQuantity(v, binary);
    }
  }
  auto min = ParseQuantity(FormatQuantity(INT64_MIN));
  ASSERT_FALSE(min.ok());
  EXPECT_EQ(min.status().code(), Status::Code::kOutOfRange) << min.status().message();
}

TEST(QuantityTest, CheckedArithmeticRefusesOverflow) {
  Milli out = 7;
  EXPECT_TRUE(CheckedAdd(1, 2, &out));
  EXPECT_EQ(out, 3);
  EXPECT_FALSE(CheckedAdd(INT64_MAX, 1, &out));
  EXPECT_EQ(out, 3);
  EXPECT_FALSE(CheckedMul(INT64_MAX / 2 + 1, 2, &out));
  EXPECT_TRUE(CheckedMul(4, 5, &out));
  EXPECT_EQ(out, 20);
}

}  // namespace
}  // namespace gantry

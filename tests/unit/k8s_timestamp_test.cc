#include "k8s/timestamp.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

TEST(ParseRfc3339, SecondsSinceTheEpoch) {
  EXPECT_EQ(Must(ParseRfc3339("1970-01-01T00:00:00Z")), 0);
  EXPECT_EQ(Must(ParseRfc3339("2024-05-01T12:00:00Z")), 1714564800);
  EXPECT_EQ(Must(ParseRfc3339("2024-02-29T23:59:59Z")), 1709251199);  // a leap day
  EXPECT_EQ(Must(ParseRfc3339("2000-03-01T00:00:00Z")), 951868800);   // 2000 is a leap year
  EXPECT_EQ(Must(ParseRfc3339("1969-12-31T23:59:59Z")), -1);
  EXPECT_EQ(Must(ParseRfc3339("0000-01-01T00:00:00Z")), kMinTimestampSeconds);
  EXPECT_EQ(Must(ParseRfc3339("9999-12-31T23:59:59Z")), kMaxTimestampSeconds);
}

TEST(ParseRfc3339, OffsetsFractionsAndCase) {
  const int64_t noon = 1714564800;
  EXPECT_EQ(Must(ParseRfc3339("2024-05-01T14:30:00+02:30")), noon);
  EXPECT_EQ(Must(ParseRfc3339("2024-05-01T07:00:00-05:00")), noon);
  EXPECT_EQ(Must(ParseRfc3339("2024-05-01T12:00:00+00:00")), noon);
  EXPECT_EQ(Must(ParseRfc3339("2024-05-01t12:00:00z")), noon);
  // The fraction is dropped: the second the time falls in.
  EXPECT_EQ(Must(ParseRfc3339("2024-05-01T12:00:00.999999999Z")), noon);
  EXPECT_EQ(Must(ParseRfc3339("1969-12-31T23:59:59.5Z")), -1);
}

TEST(ParseRfc3339, RefusesWhatIsNotOneAndQuotesIt) {
  for (const char* text :
       {"", "yesterday", "2024-05-01", "2024-05-01T12:00:00", "2024-05-01 12:00:00Z",
        "2024-05-01T12:00Z", "24-05-01T12:00:00Z", "2024-5-01T12:00:00Z", "2024-05-01T12:00:00Zx",
        "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00.1234567890Z", "2024-05-01T12:00:00+0200",
        "2024-05-01T12:00:00+24:00", "2024-05-01T12:00:00+02:60", "+2024-05-01T12:00:00Z",
        "2024-05-01T12:00:00\xff"}) {
    auto parsed = ParseRfc3339(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(Contains(parsed.status().message(), "expected an RFC 3339 time")) << text;
  }
  EXPECT_TRUE(Contains(ParseRfc3339("yesterday").status().message(), "got \"yesterday\""));
  EXPECT_TRUE(Contains(ParseRfc3339(std::string(500, '9')).status().message(), "...\""));
}

TEST(ParseRfc3339, RefusesDatesAndTimesThatDoNotExist) {
  for (const char* text :
       {"2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2024-04-31T00:00:00Z",
        "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2024-05-00T00:00:00Z",
        "2024-05-01T24:00:00Z", "2024-05-01T12:60:00Z", "2024-12-31T23:59:60Z"}) {
    auto parsed = ParseRfc3339(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(Contains(parsed.status().message(), "is not a date and time that exists"))
        << parsed.status().message();
    EXPECT_TRUE(Contains(parsed.status().message(), std::string("\"") + text + "\"")) << text;
  }
}

}  // namespace
}  // namespace gantry::k8s

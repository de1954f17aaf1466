// Leader election's wire format; its behaviour is tested against a real server in
// tests/integration/leader_election_test.cc.
#include "k8s/leader_election.h"

#include <gtest/gtest.h>

namespace gantry::k8s {
namespace {

TEST(LeaderElectionFormatTest, MicroTimeIsUtcWithSixFractionDigits) {
  using namespace std::chrono;
  // 2024-02-29T23:59:58Z plus 7 microseconds.
  system_clock::time_point t = sys_days{year{2024} / February / 29} + hours(23) + minutes(59) +
                               seconds(58) + microseconds(7);
  EXPECT_EQ(FormatMicroTime(t), "2024-02-29T23:59:58.000007Z");
  EXPECT_EQ(FormatMicroTime(system_clock::time_point{}), "1970-01-01T00:00:00.000000Z");
  // Sub-microsecond parts are cut, never rounded up into the next second.
  EXPECT_EQ(FormatMicroTime(sys_days{year{2030} / 1 / 1} - nanoseconds(1)),
            "2029-12-31T23:59:59.999999Z");
}

}  // namespace
}  // namespace gantry::k8s

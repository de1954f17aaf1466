// A scenario's expect: section (sim/scenario_expect.h) checked against decisions made up
// here: no action evicts yet, so `evicted:` is exercised with evictions given by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

// low runs on n0's only GPU; high waits for it; idle has nothing to do with either.
const char* const kCluster = R"(
nodes:
- {name: n0, allocatable: {cpu: 8}, gpus: {count: 1}}
jobs:
- {name: low, tasks: [{replicas: 2, requests: {cpu: 1}}]}
- {name: high, tasks: [{requests: {cpu: 1, nvidia.com/gpu: 1}}]}
- {name: idle, tasks: [{requests: {cpu: 1}}]}
running:
- {job: low, node: n0}
- {job: low, node: n0}
)";

Scenario WithExpect(const std::string& expect) {
  return Must(ParseScenario(std::string(kCluster) + "expect:\n" + expect, "s.yaml"));
}

// Decisions that evict `count` of low's running tasks.
Decisions EvictingLow(const Scenario& s, int count) {
  const ClusterState& c = s.cluster;
  const JobId low = c.FindJob("low");
  Decisions d;
  for (int i = 0; i < count; ++i) {
    d.evictions.push_back({low, c.job(low).tasks[i], c.FindNode("n0"), "preempted by high"});
  }
  return d;
}

std::string Lines(const std::vector<std::string>& unmet) {
  std::string out;
  for (const std::string& line : unmet) out += line + "\n";
  return out;
}

TEST(CheckExpectations, EvictedCountsPerJob) {
  const Scenario one = WithExpect("  evicted: {low: 1}\n");
  EXPECT_EQ(Lines(CheckExpectations(one, EvictingLow(one, 1))), "");
  EXPECT_EQ(Lines(CheckExpectations(one, EvictingLow(one, 0))),
            "job low: expected 1 evicted, got 0\n");
  EXPECT_EQ(Lines(CheckExpectations(one, EvictingLow(one, 2))),
            "job low: expected 1 evicted, got 2\n");
  const Scenario none = WithExpect("  evicted: {low: 0}\n");
  EXPECT_EQ(Lines(CheckExpectations(none, EvictingLow(none, 0))), "");
  EXPECT_EQ(Lines(CheckExpectations(none, EvictingLow(none, 1))),
            "job low: expected 0 evicted, got 1\n");
}

TEST(CheckExpectations, EvictedGivenMeansJobsNotNamedEvictNothing) {
  // Unlike placed:, evicted: accounts for every job once it is given: an eviction stops
  // running work, and one that nobody wrote down is a failure, not a detail.
  for (const char* expect : {"  evicted: {}\n", "  evicted: {idle: 0}\n"}) {
    const Scenario s = WithExpect(expect);
    EXPECT_EQ(Lines(CheckExpectations(s, EvictingLow(s, 0))), "") << expect;
    EXPECT_EQ(Lines(CheckExpectations(s, EvictingLow(s, 2))),
              "job low: expected 0 evicted (not named in expect.evicted), got 2\n")
        << expect;
  }
}

TEST(CheckExpectations, EvictionsUncheckedWithoutEvicted) {
  const Scenario s = WithExpect("  placed: {high: 0}\n");
  EXPECT_EQ(Lines(CheckExpectations(s, EvictingLow(s, 2))), "");
}

TEST(ParseScenario, EvictedNamesKnownJobsWithCounts) {
  auto error = [](const std::string& evicted) {
    auto r =
        ParseScenario(std::string(kCluster) + "expect:\n  evicted: " + evicted + "\n", "s.yaml");
    return r.ok() ? std::string("(ok)") : r.status().message();
  };
  EXPECT_EQ(error("{low: 1, ghost: 0}"),
            "s.yaml:12:21: expect.evicted.ghost: unknown job \"ghost\"");
  EXPECT_TRUE(Contains(error("{low: -1}"), "s.yaml:12:18: expect.evicted.low: must be between 0"));
  EXPECT_TRUE(Contains(error("{low: \"1\"}"), "s.yaml:12:18: expect.evicted.low:"));
  EXPECT_TRUE(Contains(error("[low]"), "s.yaml:12:12: expect.evicted: expected a mapping"));
  EXPECT_TRUE(Contains(error(""), "expect.evicted: expected a mapping"));
  EXPECT_EQ(error("{}"), "(ok)");
}

}  // namespace
}  // namespace gantry

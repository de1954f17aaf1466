// A scenario's expect: section (sim/scenario_expect.h) checked against decisions made up
// here: no action evicts yet, so `evicted:` is exercised with evictions given by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario_expect.h"
#include "sim/scenario_reader.h"
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

// Decisions that place low's tasks on the nodes given, in order.
Decisions Placing(const Scenario& s, const std::vector<std::string>& low_nodes) {
  const ClusterState& c = s.cluster;
  const JobId low = c.FindJob("low");
  Decisions d;
  for (size_t i = 0; i < low_nodes.size(); ++i) {
    d.binds.push_back({low, c.job(low).tasks[i], c.FindNode(low_nodes[i]), {}});
  }
  return d;
}

TEST(CheckExpectations, NodeCountsArePerNodeAndExact) {
  auto scenario = [](const std::string& expect) {  // kCluster with a second node, n1
    std::string text = kCluster;
    text.replace(text.find("jobs:"), 0, "- {name: n1, allocatable: {cpu: 8}}\n");
    return Must(ParseScenario(text + "expect:\n" + expect, "s.yaml"));
  };
  const Scenario s = scenario("  nodeCounts: {low: {n0: 1, n1: 1}}\n");
  EXPECT_EQ(Lines(CheckExpectations(s, Placing(s, {"n0", "n1"}))), "");
  EXPECT_EQ(Lines(CheckExpectations(s, Placing(s, {"n1", "n0"}))), "");
  EXPECT_EQ(Lines(CheckExpectations(s, Placing(s, {"n0", "n0"}))),
            "job low: expected per node {n0: 1, n1: 1}, got {n0: 2}\n");
  EXPECT_EQ(Lines(CheckExpectations(s, Placing(s, {"n0"}))),
            "job low: expected per node {n0: 1, n1: 1}, got {n0: 1}\n");
  // A node named with 0 is the same as a node not named.
  const Scenario zero = scenario("  nodeCounts: {low: {n0: 0, n1: 2}}\n");
  EXPECT_EQ(Lines(CheckExpectations(zero, Placing(zero, {"n1", "n1"}))), "");
  EXPECT_EQ(Lines(CheckExpectations(zero, Placing(zero, {"n0", "n1"}))),
            "job low: expected per node {n1: 2}, got {n0: 1, n1: 1}\n");
  const Scenario none = scenario("  nodeCounts: {low: {}}\n");
  EXPECT_EQ(Lines(CheckExpectations(none, Placing(none, {}))), "");
  EXPECT_EQ(Lines(CheckExpectations(none, Placing(none, {"n1"}))),
            "job low: expected per node {}, got {n1: 1}\n");
}

TEST(CheckExpectations, PlacedOnNodeCountsEveryJob) {
  const Scenario s = WithExpect("  placedOnNode: {n0: 2}\n");
  Decisions two_jobs = Placing(s, {"n0"});
  two_jobs.binds.push_back({s.cluster.FindJob("idle"),
                            s.cluster.job(s.cluster.FindJob("idle")).tasks[0],
                            s.cluster.FindNode("n0"),
                            {}});
  EXPECT_EQ(Lines(CheckExpectations(s, two_jobs)), "");
  EXPECT_EQ(Lines(CheckExpectations(s, Placing(s, {"n0"}))), "node n0: expected 2 placed, got 1\n");
  EXPECT_EQ(Lines(CheckExpectations(s, Placing(s, {}))), "node n0: expected 2 placed, got 0\n");
  auto error = [](const std::string& counts) {
    auto r = ParseScenario(std::string(kCluster) + "expect:\n  placedOnNode: " + counts + "\n",
                           "s.yaml");
    return r.ok() ? std::string("(ok)") : r.status().message();
  };
  EXPECT_EQ(error("{n9: 1}"), "s.yaml:12:18: expect.placedOnNode.n9: unknown node \"n9\"");
  EXPECT_TRUE(Contains(error("{n0: -1}"), "expect.placedOnNode.n0: must be between 0"));
  EXPECT_TRUE(Contains(error("[n0]"), "expect.placedOnNode: expected a mapping"));
}

TEST(ParseScenario, NodeCountsNameKnownJobsAndNodes) {
  auto error = [](const std::string& counts) {
    auto r =
        ParseScenario(std::string(kCluster) + "expect:\n  nodeCounts: " + counts + "\n", "s.yaml");
    return r.ok() ? std::string("(ok)") : r.status().message();
  };
  EXPECT_EQ(error("{ghost: {n0: 1}}"),
            "s.yaml:12:16: expect.nodeCounts.ghost: unknown job \"ghost\"");
  EXPECT_EQ(error("{low: {n9: 1}}"), "s.yaml:12:22: expect.nodeCounts.low.n9: unknown node \"n9\"");
  EXPECT_TRUE(Contains(error("{low: {n0: -1}}"), "expect.nodeCounts.low.n0: must be between 0"));
  EXPECT_TRUE(Contains(error("{low: [n0]}"), "expect.nodeCounts.low: expected a mapping"));
  EXPECT_TRUE(Contains(error("[low]"), "expect.nodeCounts: expected a mapping"));
  EXPECT_EQ(error("{low: {n0: 2}}"), "(ok)");
}

}  // namespace
}  // namespace gantry

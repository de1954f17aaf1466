#include "sim/summary.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "sim/parallel.h"
#include "sim/stats.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using Json = nlohmann::ordered_json;

// ---------------------------------------------------------------- MeanAndStd

TEST(MeanAndStdTest, SampleStandardDeviation) {
  const SampleStats s = MeanAndStd({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(32.0 / 7.0));  // n - 1, as over seeds
}

TEST(MeanAndStdTest, NoValuesAndOneValue) {
  const SampleStats none = MeanAndStd({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.mean, 0.0);
  EXPECT_EQ(none.std, 0.0);
  const SampleStats one = MeanAndStd({3.25});
  EXPECT_EQ(one.mean, 3.25);
  EXPECT_EQ(one.std, 0.0);
}

// ---------------------------------------------------------------- ParallelFor

TEST(ParallelForTest, CallsEachIndexOnce) {
  for (int threads : {-1, 0, 1, 3, 64}) {
    std::vector<std::atomic<int>> calls(50);
    ParallelFor(calls.size(), threads, [&](size_t i) { ++calls[i]; });
    for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i], 1) << threads << " " << i;
  }
  bool called = false;
  ParallelFor(0, 4, [&](size_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ParallelForTest, RunsSideBySide) {
  // Each of two calls waits for the other to start: both see it only on two threads.
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  std::atomic<int> saw_both{0};
  ParallelFor(2, 2, [&](size_t) {
    std::unique_lock<std::mutex> lock(mu);
    ++started;
    cv.notify_all();
    if (cv.wait_for(lock, std::chrono::seconds(10), [&] { return started == 2; })) ++saw_both;
  });
  EXPECT_EQ(saw_both, 2);
}

// ---------------------------------------------------------------- SummarizeSimRuns

SimRun ProtocolRun(const std::string& policy, uint64_t seed, double alloc_end, double wall) {
  SimRun run;
  run.policy = policy;
  run.seed = seed;
  run.protocol.pods = 100;
  run.protocol.failed_pods = static_cast<int64_t>(seed);
  run.protocol.alloc_pct = {0, 50.004, alloc_end};
  run.protocol.frag_pct = {0, 1.5, 2.5};
  run.wall_s = wall;
  return run;
}

struct ProtocolCase {
  SimOptions options;
  SimSettings settings;
};

ProtocolCase Protocol(const std::string& workload, double arrival_scale) {
  ProtocolCase c;
  c.options.cluster = "nodes.csv";
  c.options.workload = workload;
  c.options.protocol = "fgd-atc23";
  c.settings.protocol = true;
  c.settings.policies = {"fgd", "random"};
  c.settings.seeds = {42, 43};
  c.settings.arrival_scale = arrival_scale;
  return c;
}

TEST(SummarizeSimRunsTest, ProtocolRunsAndMeansOverSeeds) {
  ProtocolCase c = Protocol("data/openb_pod_list_default.csv", 1.3);
  const std::vector<SimRun> runs = {
      ProtocolRun("fgd", 42, 95, 1.0), ProtocolRun("fgd", 43, 96, 3.0),
      ProtocolRun("random", 42, 87, 0.5), ProtocolRun("random", 43, 88, 0.5)};
  const SimOutputs out = SummarizeSimRuns(c.options, c.settings, runs);
  const Json& s = out.summary;
  EXPECT_EQ(s["title"], "Gantry simulation: fgd-atc23");
  EXPECT_EQ(s["cluster"], "nodes.csv");
  EXPECT_EQ(s["protocol"], "fgd-atc23");
  ASSERT_EQ(s["runs"].size(), 4u);
  const Json& first = s["runs"][0];
  std::vector<std::string> keys;
  for (const auto& [key, value] : first.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"policy", "seed", "alloc_pct", "frag_pct", "pods",
                                            "failed_pods", "wall_s"}));
  EXPECT_EQ(first["alloc_pct"]["1"], 50.0);  // rounded to hundredths
  EXPECT_EQ(first["wall_s"], 1.0);
  const Json& fgd = s["by_policy"]["fgd"];
  EXPECT_EQ(fgd["runs"], 2u);
  EXPECT_DOUBLE_EQ(fgd["alloc_pct_130_mean"].get<double>(), 95.5);
  EXPECT_DOUBLE_EQ(fgd["alloc_pct_130_std"].get<double>(), std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(fgd["frag_pct_130_mean"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(fgd["failed_pods_mean"].get<double>(), 42.5);
  EXPECT_EQ(s["published"]["fgd"], 95.39);
  EXPECT_TRUE(out.timeseries.empty());
  EXPECT_TRUE(
      Contains(out.timeseries_csv, "policy,seed,arrived_pct,alloc_pct,frag_pct\nfgd,42,0,0,0\n"));
  EXPECT_TRUE(Contains(out.table, "ALLOC@130% (sd)"));
  EXPECT_TRUE(Contains(
      out.table,
      "fgd                2       95.50 (0.71)       2.50         42      95.39     2.00\n"));
}

TEST(SummarizeSimRunsTest, PublishedMeansOnlyForTheDefaultListAtTheScaleOfThePaper) {
  const std::vector<SimRun> runs = {ProtocolRun("fgd", 42, 95, 1), ProtocolRun("fgd", 43, 96, 1),
                                    ProtocolRun("random", 42, 87, 1),
                                    ProtocolRun("random", 43, 88, 1)};
  ProtocolCase other_list = Protocol("data/openb_pod_list_gpushare20.csv", 1.3);
  EXPECT_FALSE(SummarizeSimRuns(other_list.options, other_list.settings, runs)
                   .summary.contains("published"));
  ProtocolCase other_scale = Protocol("openb_pod_list_default.csv", 1.0);
  const SimOutputs out = SummarizeSimRuns(other_scale.options, other_scale.settings, runs);
  EXPECT_FALSE(out.summary.contains("published"));
  EXPECT_TRUE(out.summary["by_policy"]["fgd"].contains("alloc_pct_100_mean"));
}

TEST(SummarizeSimRunsTest, ReplayRunsRowsAndMeans) {
  SimOptions options;
  options.generate = "pods=10";
  SimSettings settings;
  settings.policies = {"gantry"};
  settings.seeds = {7};
  SimRun run;
  run.policy = "gantry";
  run.seed = 7;
  run.replay.pods = 10;
  run.replay.failed_tasks = 1;
  run.replay.sessions = 3;
  run.replay.gpu_alloc_mean_pct = 12.5;
  run.replay.wait_s = Distribution{4, 3, 9, 10, 9};
  run.replay.jct_s = Distribution{100, 90, 150, 160, 9};
  run.replay.rows = {ReplayRow{0, 10, 2, 1}, ReplayRow{10, 20.5, 0, 3}};
  run.replay.queue_gpu_share_pct = {{"default", 12.5}};
  const SimOutputs out = SummarizeSimRuns(options, settings, {run});
  const Json& s = out.summary;
  EXPECT_EQ(s["title"], "Gantry simulation: time-driven replay");
  EXPECT_EQ(s["cluster"], "generated");
  EXPECT_EQ(s["workload"], "generated: pods=10");
  EXPECT_EQ(s["protocol"], "replay");
  EXPECT_EQ(s["runs"][0]["wait_s"]["p95"], 9.0);
  EXPECT_EQ(s["runs"][0]["queue_gpu_share_pct"]["default"], 12.5);
  const Json& gantry = s["by_policy"]["gantry"];
  EXPECT_EQ(gantry["jct_mean_s"], 100.0);
  EXPECT_EQ(gantry["jct_p95_s"], 150.0);
  EXPECT_EQ(gantry["wait_mean_s"], 4.0);
  EXPECT_EQ(gantry["gpu_alloc_mean_pct"], 12.5);
  EXPECT_EQ(gantry["failed_tasks_mean"], 1.0);
  ASSERT_EQ(out.timeseries.size(), 2u);
  EXPECT_EQ(out.timeseries[1]["gpu_alloc_pct"], 20.5);
  EXPECT_EQ(out.timeseries_csv,
            "policy,seed,t,gpu_alloc_pct,queue_len,running_tasks\ngantry,7,0,10,2,1\n"
            "gantry,7,10,20.5,0,3\n");
}

}  // namespace
}  // namespace gantry

#include "sim/replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "model/limits.h"
#include "sim/policies.h"
#include "sim/workload.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

ClusterState Nodes(int count, int32_t gpus) {
  std::vector<TraceNode> nodes;
  for (int i = 0; i < count; ++i)
    nodes.push_back(TraceNode{"n" + std::to_string(i), 64000, 262144, gpus, gpus > 0 ? "G1" : ""});
  ClusterState cluster;
  EXPECT_TRUE(AddTraceNodes(nodes, &cluster).ok());
  return cluster;
}

SimJob Job(const std::string& name, int64_t submit, int64_t duration, int32_t gpus,
           const std::string& queue = "default", int32_t pods = 1) {
  SimJob j;
  j.name = name;
  j.submit = submit;
  j.duration = duration;
  j.pods = pods;
  j.min_member = pods;
  j.queue = queue;
  j.spec.role = "pod";
  j.spec.requests.Set(kCpu, 1000);
  j.spec.gpu.count = gpus;
  return j;
}

ReplayResult Replay(const ClusterState& cluster, const std::vector<SimJob>& jobs,
                    int64_t period = 10) {
  return Must(
      RunReplay(cluster, jobs, Must(PolicyConfig("bestfit")), 1, ReplayOptions{period, 2000}));
}

struct Row {
  int64_t t;
  double alloc;
  int64_t queue_len, running;
};

void ExpectRows(const ReplayResult& r, const std::vector<Row>& want) {
  ASSERT_EQ(r.rows.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.rows[i].t, want[i].t) << "row " << i;
    EXPECT_NEAR(r.rows[i].gpu_alloc_pct, want[i].alloc, 1e-9) << "row " << i;
    EXPECT_EQ(r.rows[i].queue_len, want[i].queue_len) << "row " << i;
    EXPECT_EQ(r.rows[i].running_tasks, want[i].running) << "row " << i;
  }
}

// ---------------------------------------------------------------- RunReplay

TEST(ReplayTest, AJobWaitsUntilTheRunningOneDeparts) {
  // One GPU, period 10. A (submit 0, 95 s) runs at once. B (submit 12, 10 s) arrives at
  // the session of t = 20 and waits; A ends at 95, seen at t = 100, where B is placed:
  // wait 100 - 12 = 88. B ends at 110. JCTs: A 95 - 0, B 110 - 12.
  // The listed order does not matter: jobs are taken by submit time.
  ClusterState cluster = Nodes(1, 1);
  ReplayResult r = Replay(cluster, {Job("b", 12, 10, 1), Job("a", 0, 95, 1)});
  EXPECT_EQ(r.pods, 2);
  EXPECT_EQ(r.failed_tasks, 0);
  EXPECT_EQ(r.preempted_tasks, 0);
  EXPECT_EQ(r.sessions, 3);  // t = 0, 20, 100
  EXPECT_EQ(r.wait_s.count, 2);
  EXPECT_DOUBLE_EQ(r.wait_s.mean, 44);
  EXPECT_DOUBLE_EQ(r.wait_s.p99, 88);
  EXPECT_EQ(r.jct_s.count, 2);
  EXPECT_DOUBLE_EQ(r.jct_s.mean, 96.5);
  EXPECT_EQ(r.jct_samples, (std::vector<double>{95, 98}));
  // The GPU is busy from 0 to 110.
  EXPECT_NEAR(r.gpu_alloc_mean_pct, 100, 1e-9);
  ExpectRows(r, {{0, 100, 0, 1}, {20, 100, 1, 1}, {100, 100, 0, 1}, {110, 0, 0, 0}});
}

TEST(ReplayTest, SubmissionsWaitForTheNextSessionOnTheGrid) {
  // Submit 7: the replay starts at t = 0 (the grid below it), places at t = 10: wait 3,
  // runs 20 s to 30: JCT 23. Allocation: 0 % over [0, 10), 100 % over [10, 30).
  ClusterState cluster = Nodes(1, 1);
  ReplayResult r = Replay(cluster, {Job("a", 7, 20, 1)});
  EXPECT_EQ(r.sessions, 1);
  EXPECT_DOUBLE_EQ(r.wait_s.mean, 3);
  EXPECT_DOUBLE_EQ(r.jct_s.mean, 23);
  EXPECT_NEAR(r.gpu_alloc_mean_pct, 100.0 * 20 / 30, 1e-9);
  ExpectRows(r, {{0, 0, 0, 0}, {10, 100, 0, 1}, {30, 0, 0, 0}});
}

TEST(ReplayTest, GpuAllocationIsTimeWeighted) {
  // Two GPUs: A (30 s) and B (60 s) from 0. 100 % over [0, 30), 50 % over [30, 60).
  ClusterState cluster = Nodes(1, 2);
  ReplayResult r = Replay(cluster, {Job("a", 0, 30, 1), Job("b", 0, 60, 1)});
  EXPECT_EQ(r.sessions, 1);
  EXPECT_NEAR(r.gpu_alloc_mean_pct, (100.0 * 30 + 50.0 * 30) / 60, 1e-9);  // 75
  EXPECT_DOUBLE_EQ(r.wait_s.mean, 0);
  EXPECT_EQ(r.jct_samples, (std::vector<double>{30, 60}));
  ExpectRows(r, {{0, 100, 0, 2}, {30, 50, 0, 1}, {60, 0, 0, 0}});
}

TEST(ReplayTest, JctIsEndMinusSubmitEvenOffTheGrid) {
  // A runs 0..25 (seen leaving at t = 30); B submitted at 3, placed at 10, runs 12 s to 22.
  ClusterState cluster = Nodes(1, 2);
  ReplayResult r = Replay(cluster, {Job("a", 0, 25, 1), Job("b", 3, 12, 1)});
  EXPECT_EQ(r.jct_samples, (std::vector<double>{19, 25}));  // b: 22 - 3, a: 25 - 0
  EXPECT_EQ(r.wait_s.count, 2);
  EXPECT_DOUBLE_EQ(r.wait_s.mean, 3.5);  // a 0, b 10 - 3
}

TEST(ReplayTest, MultiPodJobEndsWithItsLastTask) {
  // Two GPUs. G (2 pods, 30 s) takes both at 0; S (submit 5, 10 s) waits until 30.
  // Rows: 0: 100 %; 10: 100 % (S pending); 30: 50 % (S runs); 40: 0 %.
  ClusterState cluster = Nodes(1, 2);
  ReplayResult r = Replay(cluster, {Job("g", 0, 30, 1, "default", 2), Job("s", 5, 10, 1)});
  EXPECT_EQ(r.pods, 3);
  EXPECT_EQ(r.wait_s.count, 3);               // per task
  EXPECT_DOUBLE_EQ(r.wait_s.mean, 25.0 / 3);  // 0, 0, 30 - 5
  EXPECT_EQ(r.jct_s.count, 2);                // per job
  EXPECT_EQ(r.jct_samples, (std::vector<double>{30, 35}));
  EXPECT_NEAR(r.gpu_alloc_mean_pct, (100.0 * 10 + 100.0 * 20 + 50.0 * 10) / 40, 1e-9);  // 87.5
  ExpectRows(r, {{0, 100, 0, 2}, {10, 100, 1, 2}, {30, 50, 0, 1}, {40, 0, 0, 0}});
}

TEST(ReplayTest, TasksThatNeverFitAreCountedAsFailed) {
  // One GPU: the 2-GPU job never fits; the 1-GPU job runs 0..10.
  ClusterState cluster = Nodes(1, 1);
  ReplayResult r = Replay(cluster, {Job("a", 0, 10, 1), Job("big", 0, 10, 2)});
  EXPECT_EQ(r.pods, 2);
  EXPECT_EQ(r.failed_tasks, 1);
  EXPECT_EQ(r.sessions, 2);  // t = 0 and t = 10, when big still waits
  EXPECT_EQ(r.wait_s.count, 1);
  EXPECT_EQ(r.jct_s.count, 1);
  EXPECT_NEAR(r.gpu_alloc_mean_pct, 100, 1e-9);  // [0, 10) at 100 %
  ExpectRows(r, {{0, 100, 1, 1}, {10, 0, 1, 0}});
}

// One node per zone label value, each with one GPU of `memory_mib`.
ClusterState ZoneNodes(const std::vector<std::string>& zones, int64_t memory_mib = 0) {
  ClusterState cluster;
  for (const std::string& zone : zones) {
    Node node;
    node.name = "node-" + zone;
    node.allocatable = {{kCpu, 64000}};
    node.labels.Set("zone", zone);
    GpuDevice gpu;
    gpu.model = GpuModels().Intern("G1");
    gpu.memory_mib = memory_mib;
    node.gpus.push_back(gpu);
    Must(cluster.AddNode(std::move(node)));
  }
  return cluster;
}

TEST(ReplayTest, JobsThatDifferOnlyInNodeSelectorKeepTheirOwnSpecs) {
  // x must go to zone a, y to zone b, one GPU each: both run. Were y given x's spec (one
  // spec for both shapes), it would wait for zone a forever.
  ClusterState cluster = ZoneNodes({"a", "b"});
  SimJob x = Job("x", 0, 0, 1), y = Job("y", 0, 0, 1);
  x.spec.node_selector.Set("zone", "a");
  y.spec.node_selector.Set("zone", "b");
  ReplayResult r = Replay(cluster, {x, y});
  EXPECT_EQ(r.failed_tasks, 0);
  EXPECT_EQ(r.wait_s.count, 2);
  ExpectRows(r, {{0, 100, 0, 2}});
}

TEST(ReplayTest, JobsThatDifferOnlyInGpuMemoryKeepTheirOwnSpecs) {
  // One GPU of 16 GiB. x takes half of it; y asks for half of it and 32 GiB of memory,
  // which no device has: y never runs. Were y given x's spec, it would share the GPU.
  ClusterState cluster = ZoneNodes({"a"}, 16384);
  SimJob x = Job("x", 0, 0, 0), y = Job("y", 0, 0, 0);
  x.spec.gpu.milli = 500;
  y.spec.gpu.milli = 500;
  y.spec.gpu.memory_mib = 32768;
  ReplayResult r = Replay(cluster, {x, y});
  EXPECT_EQ(r.failed_tasks, 1);
  EXPECT_EQ(r.wait_s.count, 1);
  ExpectRows(r, {{0, 50, 1, 1}});
}

TEST(ReplayTest, QueueSharesAreTimeWeighted) {
  // Two GPUs. Queue a: one GPU over [0, 40); queue b: one GPU over [0, 20).
  // Shares of capacity over [0, 40): a 50 %, b 25 %.
  ClusterState cluster = Nodes(1, 2);
  ReplayResult r = Replay(cluster, {Job("x", 0, 40, 1, "a"), Job("y", 0, 20, 1, "b")});
  ASSERT_EQ(r.queue_gpu_share_pct.size(), 2u);
  EXPECT_EQ(r.queue_gpu_share_pct[0].first, "a");
  EXPECT_NEAR(r.queue_gpu_share_pct[0].second, 50, 1e-9);
  EXPECT_EQ(r.queue_gpu_share_pct[1].first, "b");
  EXPECT_NEAR(r.queue_gpu_share_pct[1].second, 25, 1e-9);
  EXPECT_NEAR(r.gpu_alloc_mean_pct, 75, 1e-9);
}

TEST(ReplayTest, PeriodSetsTheGrid) {
  // Period 60, one GPU. A runs 0..30; B (submit 12) is first seen at t = 60, where A's
  // departure is seen too: B is placed then (wait 48) and runs to 90 (JCT 78).
  ClusterState cluster = Nodes(1, 1);
  ReplayResult r = Replay(cluster, {Job("a", 0, 30, 1), Job("b", 12, 30, 1)}, 60);
  EXPECT_DOUBLE_EQ(r.wait_s.mean, 24);                      // a 0, b 60 - 12
  EXPECT_EQ(r.jct_samples, (std::vector<double>{30, 78}));  // b ends at 90
  ExpectRows(r, {{0, 100, 0, 1}, {60, 100, 0, 1}, {120, 0, 0, 0}});
}

TEST(ReplayTest, Errors) {
  ClusterState cluster = Nodes(1, 1);
  SchedulerConfig config = Must(PolicyConfig("bestfit"));
  auto empty = RunReplay(cluster, {}, config, 1, ReplayOptions{});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos) << empty.status().message();
  for (int64_t period : {0, -5}) {
    auto bad = RunReplay(cluster, {Job("a", 0, 10, 1)}, config, 1, ReplayOptions{period, 2000});
    ASSERT_FALSE(bad.ok()) << period;
    EXPECT_NE(bad.status().message().find("period"), std::string::npos) << bad.status().message();
  }
  auto no_gpus = RunReplay(Nodes(1, 0), {Job("a", 0, 10, 0)}, config, 1, ReplayOptions{});
  ASSERT_FALSE(no_gpus.ok());
  EXPECT_NE(no_gpus.status().message().find("no GPUs"), std::string::npos)
      << no_gpus.status().message();
}

// ---------------------------------------------------------------- Summarize

TEST(SummarizeTest, HandLists) {
  struct Case {
    std::vector<double> values;
    double mean, p50, p95, p99;
  };
  std::vector<double> to100, to20;
  for (int i = 0; i <= 100; ++i) to100.push_back(i);
  for (int i = 20; i >= 1; --i) to20.push_back(i);  // unsorted on purpose
  const Case cases[] = {
      // Sorted 1..5; rank q (n - 1) rounded: p50 index 2, p95 index 4 (3.8), p99 index 4.
      {{5, 1, 4, 2, 3}, 3, 3, 5, 5},
      {to100, 50, 50, 95, 99},
      // 1..20: p50 index 9.5 -> 10 (value 11), p95 index 18.05 -> 18 (19), p99 18.81 -> 19.
      {to20, 10.5, 11, 19, 20},
      {{7}, 7, 7, 7, 7},
      {{2, 4}, 3, 4, 4, 4},
  };
  for (const Case& c : cases) {
    Distribution d = Summarize(c.values);
    EXPECT_EQ(d.count, static_cast<int64_t>(c.values.size()));
    EXPECT_DOUBLE_EQ(d.mean, c.mean);
    EXPECT_DOUBLE_EQ(d.p50, c.p50);
    EXPECT_DOUBLE_EQ(d.p95, c.p95);
    EXPECT_DOUBLE_EQ(d.p99, c.p99);
  }
  Distribution none = Summarize({});
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.mean, 0);
  EXPECT_EQ(none.p99, 0);
}

// ---------------------------------------------------------------- GenerateWorkload

bool SameJobs(const std::vector<SimJob>& a, const std::vector<SimJob>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].submit != b[i].submit || a[i].duration != b[i].duration ||
        a[i].pods != b[i].pods || a[i].queue != b[i].queue || !(a[i].spec.gpu == b[i].spec.gpu) ||
        !(a[i].spec.requests == b[i].spec.requests)) {
      return false;
    }
  }
  return true;
}

TEST(GenerateWorkloadTest, DeterministicPerSeed) {
  GeneratorOptions o;
  o.pods = 2000;
  auto a = Must(GenerateWorkload(o));
  auto b = Must(GenerateWorkload(o));
  EXPECT_TRUE(SameJobs(a, b));
  o.seed = 43;
  auto c = Must(GenerateWorkload(o));
  EXPECT_FALSE(SameJobs(a, c));
}

TEST(GenerateWorkloadTest, MixMustAddUpTo100) {
  struct Case {
    int32_t single, shared, gang, cpu;
  };
  for (const Case& c : {Case{60, 25, 5, 9}, Case{60, 25, 5, 11}, Case{100, 0, 0, 1},
                        Case{0, 0, 0, 0}, Case{110, -10, 0, 0}, Case{50, 50, -5, 5}}) {
    GeneratorOptions o;
    o.pct_single = c.single;
    o.pct_shared = c.shared;
    o.pct_gang = c.gang;
    o.pct_cpu = c.cpu;
    auto jobs = GenerateWorkload(o);
    ASSERT_FALSE(jobs.ok()) << c.single << "/" << c.shared << "/" << c.gang << "/" << c.cpu;
    EXPECT_NE(jobs.status().message().find("100"), std::string::npos) << jobs.status().message();
  }
  GeneratorOptions zero_pods;
  zero_pods.pods = 0;
  EXPECT_FALSE(GenerateWorkload(zero_pods).ok());
  GeneratorOptions zero_rate;
  zero_rate.arrivals_per_s = 0;
  EXPECT_FALSE(GenerateWorkload(zero_rate).ok());
}

TEST(GenerateWorkloadTest, ReachesThePodCountInArrivalOrder) {
  GeneratorOptions o;
  o.pods = 10000;
  auto jobs = Must(GenerateWorkload(o));
  int64_t pods = 0;
  int64_t single = 0, shared = 0, gang = 0, cpu = 0;
  double duration = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const SimJob& j = jobs[i];
    pods += j.pods;
    if (i > 0) {
      EXPECT_GE(j.submit, jobs[i - 1].submit);
    }
    EXPECT_GE(j.duration, 1);
    EXPECT_EQ(j.queue, "team-" + std::to_string(i % 4));
    duration += static_cast<double>(j.duration);
    if (j.spec.gpu.count == 8) {
      ++gang;
      EXPECT_EQ(j.pods, 4);
      EXPECT_EQ(j.min_member, 4);
    } else if (j.spec.gpu.count == 1) {
      ++single;
    } else if (j.spec.gpu.shared()) {
      ++shared;
      EXPECT_TRUE(j.spec.gpu.milli == 100 || j.spec.gpu.milli == 250 || j.spec.gpu.milli == 500 ||
                  j.spec.gpu.milli == 750)
          << j.spec.gpu.milli;
    } else {
      EXPECT_FALSE(j.spec.gpu.wants_gpu());
      ++cpu;
    }
  }
  // Stops with the job that reaches the count.
  EXPECT_GE(pods, 10000);
  EXPECT_LT(pods - jobs.back().pods, 10000);
  // By job count, 60 / 25 / 5 / 10 % (each within many standard deviations).
  const auto n = static_cast<double>(jobs.size());
  EXPECT_NEAR(single / n, 0.60, 0.03);
  EXPECT_NEAR(shared / n, 0.25, 0.03);
  EXPECT_NEAR(gang / n, 0.05, 0.015);
  EXPECT_NEAR(cpu / n, 0.10, 0.02);
  // Poisson arrivals at 10/s: the last near n / 10 s; mean duration near 3600 s.
  EXPECT_NEAR(static_cast<double>(jobs.back().submit), n / 10, n / 100);
  EXPECT_NEAR(duration / n, 3600, 360);
}

TEST(GenerateWorkloadTest, SingleKindMixes) {
  GeneratorOptions gang;
  gang.pods = 10;
  gang.pct_single = 0, gang.pct_shared = 0, gang.pct_gang = 100, gang.pct_cpu = 0;
  auto g = Must(GenerateWorkload(gang));
  ASSERT_EQ(g.size(), 3u);  // 4 + 4 + 4 >= 10
  for (const SimJob& j : g) EXPECT_EQ(j.spec.gpu.count, 8);

  GeneratorOptions single;
  single.pods = 50;
  single.pct_single = 100, single.pct_shared = 0, single.pct_gang = 0, single.pct_cpu = 0;
  auto s = Must(GenerateWorkload(single));
  ASSERT_EQ(s.size(), 50u);
  for (const SimJob& j : s) {
    EXPECT_EQ(j.spec.gpu.count, 1);
    EXPECT_EQ(j.pods, 1);
  }
}

TEST(GenerateNodesTest, EightGpuNodes) {
  auto nodes = Must(GenerateNodes(3));
  ASSERT_EQ(nodes.size(), 3u);
  std::set<std::string> names;
  for (const TraceNode& n : nodes) {
    names.insert(n.name);
    EXPECT_EQ(n.gpus, 8);
    EXPECT_EQ(n.cpu_milli, 128000);
    EXPECT_FALSE(n.model.empty());
  }
  EXPECT_EQ(names.size(), 3u);
}

// ---------------------------------------------------------------- hostile input

TEST(ReplayTest, InvalidOptionsAndConfigAreErrors) {
  ClusterState cluster = Nodes(1, 1);
  SchedulerConfig config = Must(PolicyConfig("bestfit"));
  for (int64_t period : {int64_t{0}, int64_t{-5}, kMaxReplayPeriodS + 1, INT64_MAX}) {
    auto bad = RunReplay(cluster, {Job("a", 0, 10, 1)}, config, 1, ReplayOptions{period, 2000});
    ASSERT_FALSE(bad.ok()) << period;
    EXPECT_NE(bad.status().message().find("period"), std::string::npos) << bad.status().message();
  }
  for (int64_t rows : {int64_t{-1}, int64_t{0}, int64_t{1}}) {
    auto bad = RunReplay(cluster, {Job("a", 0, 10, 1)}, config, 1, ReplayOptions{10, rows});
    ASSERT_FALSE(bad.ok()) << rows;
  }
  SchedulerConfig negative = config;
  negative.nodes_to_score = -1;
  auto bad = RunReplay(cluster, {Job("a", 0, 10, 1)}, negative, 1, ReplayOptions{});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nodesToScore"), std::string::npos)
      << bad.status().message();
}

TEST(ReplayTest, MalformedJobsAreErrorsNamingTheJob) {
  ClusterState cluster = Nodes(1, 1);
  SchedulerConfig config = Must(PolicyConfig("bestfit"));
  struct Case {
    const char* what;
    SimJob job;
    const char* field;
  };
  std::vector<Case> cases;
  auto with = [&](const char* what, const char* field, auto change) {
    SimJob j = Job("bad", 0, 10, 1);
    change(j);
    cases.push_back({what, j, field});
  };
  with("no pods", "pods", [](SimJob& j) { j.pods = 0; });
  with("negative pods", "pods", [](SimJob& j) { j.pods = -3; });
  with("pods above the per-job limit", "pods",
       [](SimJob& j) { j.pods = static_cast<int32_t>(kMaxTasksPerJob + 1); });
  with("min_member 0", "min_member", [](SimJob& j) { j.min_member = 0; });
  with("min_member above pods", "min_member", [](SimJob& j) { j.min_member = 2; });
  with("negative submit", "submit", [](SimJob& j) { j.submit = -1; });
  with("far submit", "submit", [](SimJob& j) { j.submit = kMaxTraceSeconds + 1; });
  with("negative duration", "duration", [](SimJob& j) { j.duration = -1; });
  with("far duration", "duration", [](SimJob& j) { j.duration = INT64_MAX; });
  with("too many GPUs", "GPU", [](SimJob& j) { j.spec.gpu.count = kMaxGpusPerNode + 1; });
  for (const Case& c : cases) {
    auto r = RunReplay(cluster, {Job("ok", 0, 10, 1), c.job}, config, 1, ReplayOptions{});
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_NE(r.status().message().find("\"bad\""), std::string::npos)
        << c.what << ": " << r.status().message();
    EXPECT_NE(r.status().message().find(c.field), std::string::npos)
        << c.what << ": " << r.status().message();
  }
}

TEST(ReplayTest, MoreTasksThanTheLimitAreAnError) {
  ClusterState cluster = Nodes(1, 1);
  std::vector<SimJob> jobs;
  for (int i = 0; i < 3; ++i)
    jobs.push_back(
        Job("j" + std::to_string(i), 0, 10, 0, "default", static_cast<int32_t>(kMaxTasksPerJob)));
  auto r = RunReplay(cluster, jobs, Must(PolicyConfig("bestfit")), 1, ReplayOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("limit of " + std::to_string(kMaxTasks)), std::string::npos)
      << r.status().message();
}

TEST(GenerateWorkloadTest, NumbersOutsideTheirRangesAreErrorsNamingThem) {
  struct Case {
    const char* what;
    GeneratorOptions options;
    const char* names;
  };
  std::vector<Case> cases;
  auto with = [&](const char* what, const char* names, auto change) {
    GeneratorOptions o;
    o.pods = 10;
    change(o);
    cases.push_back({what, o, names});
  };
  with("NaN rate", "rate", [](GeneratorOptions& o) { o.arrivals_per_s = std::nan(""); });
  with("infinite rate", "rate", [](GeneratorOptions& o) { o.arrivals_per_s = HUGE_VAL; });
  with("negative rate", "rate", [](GeneratorOptions& o) { o.arrivals_per_s = -1; });
  with("tiny rate", "rate", [](GeneratorOptions& o) { o.arrivals_per_s = 1e-300; });
  with("huge rate", "rate", [](GeneratorOptions& o) { o.arrivals_per_s = 1e300; });
  with("negative duration", "duration", [](GeneratorOptions& o) { o.mean_duration_s = -1; });
  with("zero duration", "duration", [](GeneratorOptions& o) { o.mean_duration_s = 0; });
  with("huge duration", "duration", [](GeneratorOptions& o) { o.mean_duration_s = INT64_MAX; });
  with("too many pods", "pods", [](GeneratorOptions& o) { o.pods = kMaxTasks + 1; });
  with("no nodes", "nodes", [](GeneratorOptions& o) { o.nodes = 0; });
  with("too many nodes", "nodes",
       [](GeneratorOptions& o) { o.nodes = static_cast<int32_t>(kMaxNodes + 1); });
  for (const Case& c : cases) {
    auto r = GenerateWorkload(c.options);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_NE(r.status().message().find(c.names), std::string::npos)
        << c.what << ": " << r.status().message();
  }
}

TEST(JobsFromPodsTest, APodDeletedWhenCreatedRunsOneSecondNotForever) {
  TracePod p;
  p.name = "p";
  p.has_times = true;
  p.creation_time = 100;
  p.deletion_time = 100;
  TracePod q = p;
  q.name = "q";
  q.deletion_time = 0;  // never deleted: runs to the end
  auto jobs = JobsFromPods({p, q});
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].duration, 1);
  EXPECT_EQ(jobs[1].duration, 0);
}

TEST(GenerateNodesTest, CountOutsideItsRangeIsAnError) {
  for (int64_t count : {int64_t{0}, int64_t{-1}, kMaxNodes + 1, int64_t{2'000'000'000}}) {
    auto nodes = GenerateNodes(count);
    ASSERT_FALSE(nodes.ok()) << count;
    EXPECT_NE(nodes.status().message().find(std::to_string(kMaxNodes)), std::string::npos)
        << nodes.status().message();
  }
}

TEST(GenerateWorkloadTest, PodsAtTheLimitStayWithinIt) {
  GeneratorOptions o;
  o.pods = kMaxTasks;
  o.pct_single = 0, o.pct_shared = 0, o.pct_gang = 100, o.pct_cpu = 0;
  o.arrivals_per_s = 1000;
  auto jobs = Must(GenerateWorkload(o));
  int64_t pods = 0;
  for (const SimJob& j : jobs) pods += j.pods;
  EXPECT_EQ(pods, kMaxTasks);  // 2 000 000 is a multiple of 4: no cut needed, none made
}

}  // namespace
}  // namespace gantry

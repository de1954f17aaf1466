#include "sim/protocol.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/random.h"
#include "model/limits.h"
#include "sim/policies.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

std::string DataPath(const std::string& file) {
  std::string self = __FILE__;
  size_t at = self.rfind("tests/unit/");
  std::string root = at == std::string::npos ? std::string() : self.substr(0, at);
  return root + "data/alibaba-gpu-v2023/" + file;
}

TracePod Pod(const std::string& name, int64_t cpu, int32_t num_gpu, int32_t gpu_milli,
             std::vector<std::string> spec = {}, int64_t memory_mib = 1024) {
  TracePod p;
  p.name = name;
  p.cpu_milli = cpu;
  p.memory_mib = memory_mib;
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli;
  p.gpu_spec = std::move(spec);
  return p;
}

// `count` copies of one pod shape, named p0, p1, ...
std::vector<TracePod> Copies(int count, int64_t cpu, int32_t num_gpu, int32_t gpu_milli) {
  std::vector<TracePod> pods;
  for (int i = 0; i < count; ++i)
    pods.push_back(Pod("p" + std::to_string(i), cpu, num_gpu, gpu_milli));
  return pods;
}

int64_t Demand(const TracePod& p) {
  return static_cast<int64_t>(p.num_gpu) * p.gpu_milli;
}

ClusterState Nodes(int count, int32_t gpus, int64_t cpu = 64000) {
  std::vector<TraceNode> nodes;
  for (int i = 0; i < count; ++i)
    nodes.push_back(TraceNode{"n" + std::to_string(i), cpu, 262144, gpus, gpus > 0 ? "G1" : ""});
  ClusterState cluster;
  EXPECT_TRUE(AddTraceNodes(nodes, &cluster).ok());
  return cluster;
}

// ---------------------------------------------------------------- RoundHalfEven

struct RoundCase {
  int64_t numerator, denominator, want;
};

TEST(RoundHalfEvenTest, MatchesPythonRound) {
  // Python: round(n / d) rounds to nearest, halves to the even neighbour.
  const RoundCase cases[] = {
      {0, 10, 0},
      {4, 10, 0},
      {5, 10, 0},
      {6, 10, 1},
      {14, 10, 1},
      {15, 10, 2},
      {16, 10, 2},
      {25, 10, 2},
      {35, 10, 4},
      {45, 10, 4},
      {55, 10, 6},
      {1, 2, 0},
      {3, 2, 2},
      {5, 2, 2},
      {7, 2, 4},
      {10, 5, 2},
      {1, 3, 0},
      {2, 3, 1},
      {100 * 6086800, 6212000, 98},  // the openb default workload: 97.98 %
      {100 * 8075600, 6212000, 130},
      {100 * 3106000, 6212000, 50},  // exactly 50 %
      {100 * 3109106, 6212000, 50},  // 50.05 %
      {129500, 1000, 130},           // 129.5 -> 130 (even)
      {130500, 1000, 130},           // 130.5 -> 130 (even)
      {131500, 1000, 132},
  };
  for (const RoundCase& c : cases) {
    EXPECT_EQ(RoundHalfEven(c.numerator, c.denominator), c.want)
        << c.numerator << "/" << c.denominator;
  }
}

// ---------------------------------------------------------------- ProtocolSequence

TEST(ProtocolSequenceTest, StartsWithAPermutationOfAllPods) {
  std::vector<TracePod> pods;
  for (int i = 0; i < 60; ++i) {
    switch (i % 4) {
      case 0:
        pods.push_back(Pod("c" + std::to_string(i), 2000, 0, 0));
        break;
      case 1:
        pods.push_back(Pod("s" + std::to_string(i), 4000, 1, 250 + 10 * i));
        break;
      case 2:
        pods.push_back(Pod("w" + std::to_string(i), 8000, 1, 1000));
        break;
      default:
        pods.push_back(Pod("m" + std::to_string(i), 16000, 2, 1000));
        break;
    }
  }
  int64_t total = 0;
  for (const TracePod& p : pods) total += Demand(p);
  for (uint64_t seed : {1, 2, 42}) {
    // Capacity such that the originals are about half the target: a tail is appended.
    auto seq = Must(ProtocolSequence(pods, total, seed, 2.0));
    ASSERT_GT(seq.size(), pods.size());
    std::vector<size_t> head(seq.begin(), seq.begin() + static_cast<std::ptrdiff_t>(pods.size()));
    std::vector<size_t> sorted = head;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], i) << "seed " << seed;
    // Shuffled, not in list order.
    std::vector<size_t> identity(pods.size());
    for (size_t i = 0; i < identity.size(); ++i) identity[i] = i;
    EXPECT_NE(head, identity);
    for (size_t i = pods.size(); i < seq.size(); ++i) EXPECT_LT(seq[i], pods.size());
  }
}

struct StopCase {
  const char* what;
  std::vector<TracePod> pods;
  int64_t capacity;
  double scale;
  size_t want_length;
  int64_t want_total;
};

void PrintTo(const StopCase& c, std::ostream* os) {
  *os << c.what;
}

class ProtocolStopTest : public ::testing::TestWithParam<StopCase> {};

TEST_P(ProtocolStopTest, StopsAtTheFirstDrawWhosePerGpuShareOverflows) {
  const StopCase& c = GetParam();
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto seq = Must(ProtocolSequence(c.pods, c.capacity, seed, c.scale));
    EXPECT_EQ(seq.size(), c.want_length) << "seed " << seed;
    int64_t total = 0;
    for (size_t i : seq) total += Demand(c.pods[i]);
    EXPECT_EQ(total, c.want_total) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(
    HandComputed, ProtocolStopTest,
    ::testing::Values(
        // Target 1.3 x 4000 = 5200: 4000 + 1000 = 5000 fits, then 6000 does not.
        StopCase{"whole GPUs", Copies(4, 1000, 1, 1000), 4000, 1.3, 5, 5000},
        // Target 1.0 x 4000: exactly reached, the next draw (5000) stops.
        StopCase{"target reached exactly", Copies(2, 1000, 1, 1000), 4000, 1.0, 4, 4000},
        // Target 10400: 8000 + 1000 (per-GPU share) <= 10400, so an 8-GPU pod is appended
        // and the total becomes 16000; the next test, 17000, stops.
        StopCase{"8-GPU pods test the per-GPU share", Copies(1, 1000, 8, 1000), 8000, 1.3, 2,
                 16000},
        // Target 3500: 2000 + 1000 <= 3500 appends a 2-GPU pod (total 4000, past the target).
        StopCase{"2-GPU pods add their whole demand", Copies(1, 1000, 2, 1000), 4000, 0.875, 2,
                 4000},
        // Target 100: twenty 5-milli pods.
        StopCase{"small shares", Copies(10, 100, 1, 5), 1000, 0.1, 20, 100},
        // Target 1300: the originals (1200) plus none: 1200 + 300 > 1300.
        StopCase{"no room for even one", Copies(4, 100, 1, 300), 1000, 1.3, 4, 1200}));

TEST(ProtocolSequenceTest, TailFollowsTheRuleWithMixedShapes) {
  // A: shared 500, B: whole GPU, C: CPU-only. Capacity 1000, target 2000, originals 1500.
  // A draw of A fits once (2000 <= 2000), B never (2500 > 2000), C always (it adds 0), so
  // the tail is C* [A C*] and ends at the first B, or at the first A after an A.
  std::vector<TracePod> pods = {Pod("a", 1000, 1, 500), Pod("b", 1000, 1, 1000),
                                Pod("c", 1000, 0, 0)};
  std::set<size_t> tail_lengths;
  int with_a = 0, without_a = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    auto seq = Must(ProtocolSequence(pods, 1000, seed, 2.0));
    ASSERT_GE(seq.size(), 3u);
    int as = 0;
    for (size_t i = 3; i < seq.size(); ++i) {
      EXPECT_NE(seq[i], 1u) << "seed " << seed << ": a whole GPU was appended past the target";
      as += seq[i] == 0 ? 1 : 0;
    }
    EXPECT_LE(as, 1) << "seed " << seed;
    (as == 1 ? with_a : without_a)++;
    tail_lengths.insert(seq.size() - 3);
  }
  // Each ending happens (the first non-C draw is A or B with equal chance).
  EXPECT_GT(with_a, 0);
  EXPECT_GT(without_a, 0);
  EXPECT_GT(tail_lengths.size(), 2u);  // the number of C draws varies
}

TEST(ProtocolSequenceTest, SameSeedSameSequenceOtherSeedOther) {
  std::vector<TracePod> pods;
  for (int i = 0; i < 50; ++i) pods.push_back(Pod("p" + std::to_string(i), 1000, 1, 100 + 17 * i));
  auto a = Must(ProtocolSequence(pods, 20000, 7, 1.3));
  auto b = Must(ProtocolSequence(pods, 20000, 7, 1.3));
  auto c = Must(ProtocolSequence(pods, 20000, 8, 1.3));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::vector<size_t> a_head(a.begin(), a.begin() + 50), c_head(c.begin(), c.begin() + 50);
  EXPECT_NE(a_head, c_head);
}

TEST(ProtocolSequenceTest, TunesDownWhenTheOriginalsExceedTheTarget) {
  // Ten whole-GPU pods (10000) against targets of 4000 and 3800: random pods are dropped
  // until the demand is within the target, and no draw fits after that.
  const auto pods = Copies(10, 1000, 1, 1000);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    for (auto [scale, keep] : {std::pair{1.0, 4u}, std::pair{0.95, 3u}}) {
      auto seq = Must(ProtocolSequence(pods, 4000, seed, scale));
      ASSERT_EQ(seq.size(), keep) << "seed " << seed << " scale " << scale;
      std::set<size_t> distinct(seq.begin(), seq.end());
      EXPECT_EQ(distinct.size(), keep);
      for (size_t i : seq) EXPECT_LT(i, 10u);
    }
  }
  // Which pods are dropped depends on the seed.
  std::set<std::vector<size_t>> kept;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto seq = Must(ProtocolSequence(pods, 4000, seed, 1.0));
    std::sort(seq.begin(), seq.end());
    kept.insert(seq);
  }
  EXPECT_GT(kept.size(), 1u);
}

TEST(ProtocolSequenceTest, OpenbDefaultArrivalSequence) {
  auto pods = Must(ReadPodCsv(DataPath("openb_pod_list_default.csv")));
  const int64_t capacity = 6212000;
  const int64_t target = 8075600;  // 1.3 x capacity (FGD notes, section 7)
  auto seq = Must(ProtocolSequence(pods, capacity, 42, 1.3));
  ASSERT_GT(seq.size(), pods.size());
  std::vector<size_t> head(seq.begin(), seq.begin() + static_cast<std::ptrdiff_t>(pods.size()));
  std::sort(head.begin(), head.end());
  for (size_t i = 0; i < head.size(); ++i) ASSERT_EQ(head[i], i);
  int64_t total = 0;
  for (size_t i : seq) total += Demand(pods[i]);
  // Stopped at the first draw whose per-GPU share (<= 1000) overflows the target, after
  // adding at most an 8-GPU pod's extra 7000.
  EXPECT_GT(total, target - 1000);
  EXPECT_LE(total, target + 7000);
  // About 2.66 k appended pods (notes, section 2): 1 988 800 milli at ~747 per pod.
  const auto tail = static_cast<int64_t>(seq.size() - pods.size());
  EXPECT_GT(tail, 2400);
  EXPECT_LT(tail, 2950);
}

// Runs `fn` in a child process: true when it returns within `limit`. A child that runs
// longer is killed, so a hang fails the test without stalling or loading the suite.
bool ReturnsWithin(const std::function<void()>& fn, std::chrono::milliseconds limit) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    fn();
    _exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(ProtocolSequenceTest, TerminatesWhenNoPodAsksForAGpu) {
  // CPU-only pods add 0 to the demand, so "total + share > target" never stops the tail.
  // The call must still return (with or without a tail): a CSV of CPU-only pods is valid
  // input to `gantry sim --protocol fgd-atc23`.
  const auto pods = Copies(3, 1000, 0, 0);
  EXPECT_TRUE(ReturnsWithin([&] { (void)ProtocolSequence(pods, 1000, 1, 1.3); },
                            std::chrono::milliseconds(1000)))
      << "ProtocolSequence did not return for a workload without GPU pods";
}

// ---------------------------------------------------------------- PodProfile

TEST(PodProfileTest, GroupsByShapeIgnoringMemoryMostFrequentFirst) {
  std::vector<TracePod> pods = {
      Pod("w1", 8000, 1, 1000, {}, 100),
      Pod("s1", 4000, 1, 500, {}, 100),
      Pod("s2", 4000, 1, 500, {}, 999999),
      Pod("c1", 4000, 0, 0),
      Pod("w2", 8000, 1, 1000, {}, 2000),
      Pod("v1", 4000, 1, 500, {"V100"}),
      Pod("s3", 4000, 1, 500, {}, 7),
      Pod("m1", 8000, 2, 1000),
      Pod("m2", 8000, 2, 1000),
      Pod("m3", 8000, 2, 1000),
      Pod("m4", 8000, 2, 1000),
  };
  WorkloadProfile profile = PodProfile(pods);
  EXPECT_EQ(profile.total, 11);
  ASSERT_EQ(profile.types.size(), 5u);
  // 4 x (8000, 2 GPUs), 3 x (4000, 500 shared; memory differs), 2 x (8000, 1 GPU),
  // then the two singletons by key descending: (4000, 500, 1, "V100") before (4000, 0, 0).
  EXPECT_EQ(profile.types[0].count, 4);
  EXPECT_EQ(profile.types[0].requests.Get(kCpu), 8000);
  EXPECT_EQ(profile.types[0].gpu.count, 2);
  EXPECT_EQ(profile.types[0].gpu.milli, 0);

  EXPECT_EQ(profile.types[1].count, 3);
  EXPECT_EQ(profile.types[1].requests.Get(kCpu), 4000);
  EXPECT_TRUE(profile.types[1].gpu.shared());
  EXPECT_EQ(profile.types[1].gpu.milli, 500);
  EXPECT_TRUE(profile.types[1].gpu.models.empty());

  EXPECT_EQ(profile.types[2].count, 2);
  EXPECT_EQ(profile.types[2].gpu.count, 1);
  EXPECT_FALSE(profile.types[2].gpu.shared());

  EXPECT_EQ(profile.types[3].count, 1);
  EXPECT_EQ(profile.types[3].gpu.milli, 500);
  ASSERT_EQ(profile.types[3].gpu.models.size(), 1u);
  EXPECT_EQ(GpuModels().Name(profile.types[3].gpu.models[0]), "V100");

  EXPECT_EQ(profile.types[4].count, 1);
  EXPECT_FALSE(profile.types[4].gpu.wants_gpu());
  EXPECT_EQ(profile.types[4].requests.Get(kCpu), 4000);
}

// ---------------------------------------------------------------- RunFgdProtocol

TEST(FgdProtocolTest, AllocationCurveUsesHalfEvenBucketsAndMeansOverEvents) {
  // One GPU; 10 pods of 5 milli, target 0.1 x 1000 = 100: 20 pods in all. Pod k takes
  // arrived and allocated to 0.5k %; bucket b (half to even) holds k = 2b-1, 2b, 2b+1 for
  // even b and k = 2b for odd b, so each mean is b; bucket 0 holds k = 1 (0.5), bucket 10
  // holds k = 19, 20 ((9.5 + 10) / 2).
  ClusterState cluster = Nodes(1, 1);
  auto result = Must(RunFgdProtocol(cluster, Copies(10, 100, 1, 5), Must(PolicyConfig("fgd")), 3,
                                    ProtocolOptions{0.1, 0.95}));
  EXPECT_EQ(result.pods, 20);
  EXPECT_EQ(result.failed_pods, 0);
  ASSERT_EQ(result.alloc_pct.size(), 11u);
  ASSERT_EQ(result.frag_pct.size(), 11u);
  EXPECT_NEAR(result.alloc_pct[0], 0.5, 1e-9);
  for (int b = 1; b <= 9; ++b) EXPECT_NEAR(result.alloc_pct[b], b, 1e-9) << "bucket " << b;
  EXPECT_NEAR(result.alloc_pct[10], 9.75, 1e-9);
  // Every device keeps room for the only task type: nothing is fragmented.
  for (int b = 0; b <= 10; ++b) EXPECT_EQ(result.frag_pct[b], 0) << "bucket " << b;
}

TEST(FgdProtocolTest, AllocationTracksArrivalsUntilFullAndFailuresCount) {
  // Two nodes of one GPU; whole-GPU pods to 2.0 x capacity: 4 pods, the last two fail.
  ClusterState cluster = Nodes(2, 1);
  for (const char* policy : {"random", "bestfit", "fgd"}) {
    auto result = Must(RunFgdProtocol(cluster, Copies(2, 1000, 1, 1000), Must(PolicyConfig(policy)),
                                      5, ProtocolOptions{2.0, 0.95}));
    EXPECT_EQ(result.pods, 4) << policy;
    EXPECT_EQ(result.failed_pods, 2) << policy;
    ASSERT_EQ(result.alloc_pct.size(), 201u) << policy;
    EXPECT_NEAR(result.alloc_pct[50], 50, 1e-9) << policy;
    EXPECT_NEAR(result.alloc_pct[100], 100, 1e-9) << policy;
    EXPECT_NEAR(result.alloc_pct[150], 100, 1e-9) << policy;
    EXPECT_NEAR(result.alloc_pct[200], 100, 1e-9) << policy;
    // A percent without events takes its neighbours' events, or 0 when they have none.
    EXPECT_NEAR(result.alloc_pct[49], 50, 1e-9) << policy;
    EXPECT_NEAR(result.alloc_pct[51], 50, 1e-9) << policy;
    EXPECT_NEAR(result.alloc_pct[199], 100, 1e-9) << policy;
    EXPECT_EQ(result.alloc_pct[0], 0) << policy;
    EXPECT_EQ(result.alloc_pct[75], 0) << policy;
  }
}

TEST(FgdProtocolTest, FragmentationCurve) {
  // One node of two GPUs; pods of 600 milli to 0.9 x 2000 = 1800: three pods.
  // 1st: free (400, 1000); the only type (600) fits, the 400 device is a fragment: 20 %.
  // 2nd: free (400, 400); the type fits nowhere, all 800 is a fragment: 40 %.
  // 3rd: fails; arrived 90 %, allocated stays 60 %.
  ClusterState cluster = Nodes(1, 2);
  auto result = Must(RunFgdProtocol(cluster, Copies(1, 1000, 1, 600), Must(PolicyConfig("fgd")), 11,
                                    ProtocolOptions{0.9, 0.95}));
  EXPECT_EQ(result.pods, 3);
  EXPECT_EQ(result.failed_pods, 1);
  ASSERT_EQ(result.alloc_pct.size(), 91u);
  EXPECT_NEAR(result.alloc_pct[30], 30, 1e-9);
  EXPECT_NEAR(result.alloc_pct[60], 60, 1e-9);
  EXPECT_NEAR(result.alloc_pct[90], 60, 1e-9);
  EXPECT_NEAR(result.frag_pct[30], 20, 1e-9);
  EXPECT_NEAR(result.frag_pct[60], 40, 1e-9);
  EXPECT_NEAR(result.frag_pct[90], 40, 1e-9);
}

TEST(FgdProtocolTest, EmptyWorkloadOrNoGpusIsAnError) {
  auto config = Must(PolicyConfig("fgd"));
  auto empty = RunFgdProtocol(Nodes(1, 1), {}, config, 1, ProtocolOptions{});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos) << empty.status().message();
  auto no_gpus =
      RunFgdProtocol(Nodes(1, 0), Copies(1, 1000, 1, 1000), config, 1, ProtocolOptions{});
  ASSERT_FALSE(no_gpus.ok());
  EXPECT_NE(no_gpus.status().message().find("no GPUs"), std::string::npos)
      << no_gpus.status().message();
}

TEST(FgdProtocolTest, OpenbDefaultWithFgd) {
  // The paper's experiment, one seed. Expected values from the FGD notes (section 6.13,
  // section 7): FGD's allocation follows arrived demand to about 94 %, and the value at
  // 130 % arrived is 95.29 for seed 42 in the authors' results (95.39 over ten seeds).
  auto nodes = Must(ReadNodeCsv(DataPath("openb_node_list_gpu_node.csv")));
  ClusterState cluster;
  ASSERT_TRUE(AddTraceNodes(nodes, &cluster).ok());
  auto pods = Must(ReadPodCsv(DataPath("openb_pod_list_default.csv")));
  auto result =
      Must(RunFgdProtocol(cluster, pods, Must(PolicyConfig("fgd")), 42, ProtocolOptions{}));
  EXPECT_GT(result.pods, 8152 + 2400);
  ASSERT_EQ(result.alloc_pct.size(), 131u);
  for (int p = 1; p <= 90; ++p) {
    // No failures yet: the mean allocation is the mean arrived demand of the bucket.
    EXPECT_NEAR(result.alloc_pct[p], p, 0.5 + 1e-9) << p << " % arrived";
  }
  EXPECT_GT(result.alloc_pct[130], 94.3);
  EXPECT_LT(result.alloc_pct[130], 96.3);
  EXPECT_GT(result.failed_pods, 0);
}

TEST(FgdProtocolTest, ArrivalScaleOutsideItsRangeIsAnError) {
  // NaN, negative and infinite scales once aborted with std::length_error (the number of
  // percent buckets came from them); below 1 % the curve is empty; 1e12 asks for a
  // sequence of pods no memory holds.
  ClusterState cluster = Nodes(1, 1);
  const auto config = Must(PolicyConfig("fgd"));
  for (double scale :
       {std::nan(""), -1.0, HUGE_VAL, -HUGE_VAL, 0.0, 1e12, kMaxArrivalScale * 1.001}) {
    auto r =
        RunFgdProtocol(cluster, Copies(2, 1000, 1, 1000), config, 1, ProtocolOptions{scale, 0.95});
    ASSERT_FALSE(r.ok()) << scale;
    EXPECT_NE(r.status().message().find("arrival scale"), std::string::npos)
        << r.status().message();
  }
  EXPECT_TRUE(RunFgdProtocol(cluster, Copies(2, 1000, 1, 1000), config, 1,
                             ProtocolOptions{kMaxArrivalScale, 0.95})
                  .ok());
  EXPECT_TRUE(RunFgdProtocol(cluster, Copies(2, 1000, 1, 1000), config, 1,
                             ProtocolOptions{kMinArrivalScale, 0.95})
                  .ok());
}

TEST(FgdProtocolTest, CoverageOutsideItsRangeIsAnError) {
  ClusterState cluster = Nodes(1, 1);
  for (double coverage : {std::nan(""), 0.0, -0.5, 1.5}) {
    auto r = RunFgdProtocol(cluster, Copies(2, 1000, 1, 1000), Must(PolicyConfig("fgd")), 1,
                            ProtocolOptions{1.3, coverage});
    ASSERT_FALSE(r.ok()) << coverage;
    EXPECT_NE(r.status().message().find("coverage"), std::string::npos) << r.status().message();
  }
}

TEST(FgdProtocolTest, InvalidConfigIsAnError) {
  SchedulerConfig config = Must(PolicyConfig("fgd"));
  config.nodes_to_score = -1;
  auto r = RunFgdProtocol(Nodes(1, 1), Copies(2, 1000, 1, 1000), config, 1, ProtocolOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nodesToScore"), std::string::npos) << r.status().message();
}

TEST(FgdProtocolTest, MalformedPodsAreErrorsNamingThePod) {
  std::vector<TracePod> pods = Copies(2, 1000, 1, 1000);
  pods[1].num_gpu = kMaxGpusPerNode + 1;
  pods[1].line = 7;
  auto r = RunFgdProtocol(Nodes(1, 1), pods, Must(PolicyConfig("fgd")), 1, ProtocolOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("\"p1\""), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(std::to_string(kMaxGpusPerNode)), std::string::npos)
      << r.status().message();
}

TEST(ProtocolSequenceTest, DroppingMostOfALongListIsNotQuadratic) {
  // 1 000 000 whole-GPU pods against one GPU: all but one are dropped. Erasing each from the
  // middle of a vector took about 35 s (200 000 took 1.4 s); the tree takes 0.1 s (a second
  // or two in the sanitizer build), so 15 s leaves room for a loaded machine.
  const auto pods = Copies(1000000, 1000, 1, 1000);
  EXPECT_TRUE(ReturnsWithin([&] { (void)ProtocolSequence(pods, 1000, 1, 1.0); },
                            std::chrono::milliseconds(15000)))
      << "ProtocolSequence took too long";
}

TEST(ProtocolSequenceTest, RefusesBadScalesAndASequencePastTheTaskLimit) {
  const auto pods = Copies(4, 1000, 1, 1000);
  for (double scale : {std::nan(""), -1.0, 0.0, HUGE_VAL, 1e12}) {
    auto seq = ProtocolSequence(pods, 4000, 1, scale);
    ASSERT_FALSE(seq.ok()) << scale;
    EXPECT_NE(seq.status().message().find("arrival scale"), std::string::npos)
        << seq.status().message();
  }
  EXPECT_FALSE(ProtocolSequence(pods, 0, 1, 1.3).ok());
  EXPECT_FALSE(ProtocolSequence(pods, -1000, 1, 1.3).ok());
  // Pods of 1 milli to 100 x a capacity of 100 000 GPUs would be 1e10 pods: refused once
  // the sequence passes kMaxTasks, without holding more.
  const auto tiny = Copies(1, 100, 1, 1);
  auto seq = ProtocolSequence(tiny, 100'000'000, 1, kMaxArrivalScale);
  ASSERT_FALSE(seq.ok());
  EXPECT_NE(seq.status().message().find("limit of " + std::to_string(kMaxTasks)), std::string::npos)
      << seq.status().message();
  // And a capacity whose target passes int64.
  EXPECT_FALSE(ProtocolSequence(pods, INT64_MAX / 2, 1, kMaxArrivalScale).ok());
}

// The sequence as it was drawn before the drop became tree-based: erasing the k-th pod
// from a vector. The two must agree draw for draw.
std::vector<size_t> ErasingSequence(const std::vector<TracePod>& pods, int64_t capacity,
                                    uint64_t seed, double scale) {
  Rng rng(seed);
  std::vector<size_t> order(pods.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Uniform(i)]);
  const auto target = static_cast<int64_t>(scale * static_cast<double>(capacity));
  int64_t total = 0;
  for (const TracePod& p : pods) total += Demand(p);
  while (total > target && !order.empty()) {
    size_t k = rng.Uniform(order.size());
    total -= Demand(pods[order[k]]);
    order.erase(order.begin() + static_cast<std::ptrdiff_t>(k));
  }
  const bool any_gpu =
      std::any_of(pods.begin(), pods.end(), [](const TracePod& p) { return p.gpu_milli > 0; });
  while (any_gpu) {
    size_t k = rng.Uniform(pods.size());
    if (total + pods[k].gpu_milli > target) break;
    order.push_back(k);
    total += Demand(pods[k]);
  }
  return order;
}

TEST(ProtocolSequenceTest, TheTreeBasedDropDrawsWhatErasingDid) {
  std::vector<TracePod> pods;
  for (int i = 0; i < 300; ++i) {
    pods.push_back(i % 5 == 0 ? Pod("c" + std::to_string(i), 1000, 0, 0)
                              : Pod("p" + std::to_string(i), 1000, 1 + (i % 3 == 0), 100 + 3 * i));
  }
  int64_t demand = 0;
  for (const TracePod& p : pods) demand += Demand(p);
  for (double scale : {0.01, 0.3, 0.7, 0.99, 1.0, 1.3}) {
    for (uint64_t seed = 0; seed < 30; ++seed) {
      EXPECT_EQ(Must(ProtocolSequence(pods, demand, seed, scale)),
                ErasingSequence(pods, demand, seed, scale))
          << "scale " << scale << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace gantry

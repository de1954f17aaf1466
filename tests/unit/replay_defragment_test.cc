// The replay's defragmentation figures: idle GPUs a waiting whole-GPU job could not use
// (time-weighted), defragment evictions and the work they cost; and which jobs are movable
// (--movable, --generate movable=).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/policies.h"
#include "sim/replay.h"
#include "sim/workload.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

ClusterState TwoEightGpuNodes() {
  ClusterState cluster;
  EXPECT_TRUE(AddTraceNodes({TraceNode{"n0", 64000, 262144, 8, "G1", 0},
                             TraceNode{"n1", 64000, 262144, 8, "G1", 0}},
                            &cluster)
                  .ok());
  return cluster;
}

SimJob Job(const std::string& name, int64_t submit, int64_t duration, int32_t gpus,
           bool movable = false) {
  SimJob j;
  j.name = name;
  j.submit = submit;
  j.duration = duration;
  j.spec.role = "pod";
  j.spec.requests.Set(kCpu, 1000);
  j.spec.gpu.count = gpus;
  j.movable = movable;
  return j;
}

// At t=0 big0 (7 GPUs, 100 s) goes to one node, big1 (6 GPUs, 1000 s) to the other, then
// the movable 1-GPU s0 and s1 (1000 s) fill big0's node and leave one GPU on big1's (best
// fit). At t=100 big0 ends and the 8-GPU w (10 s) arrives: 8 GPUs are free, 7 on one node
// and 1 on the other. The last arrival, a 1-GPU job at t=2000, closes the arrivals.
std::vector<SimJob> Fragmenting() {
  return {Job("big0", 0, 100, 7),      Job("big1", 0, 1000, 6), Job("s0", 0, 1000, 1, true),
          Job("s1", 0, 1000, 1, true), Job("w", 100, 10, 8),    Job("late", 2000, 10, 1)};
}

ReplayResult ReplayWith(const std::vector<std::string>& actions) {
  SchedulerConfig config = Must(ReplayPolicyConfig("bestfit", 0));
  config.actions = actions;
  return Must(RunReplay(TwoEightGpuNodes(), Fragmenting(), config, 1, ReplayOptions{10, 2000}));
}

TEST(ReplayDefragmentTest, IdleGpusAWaitingWholeGpuJobCouldNotUseAreTimeWeighted) {
  const ReplayResult r = ReplayWith({"enqueue", "allocate", "backfill"});
  // Over the arrivals [0, 2000): [0, 100) 1 idle, nothing waits; [100, 1000) w waits with 8
  // idle that would hold it; [1000, 1010) w runs, 8 idle; [1010, 2000) 16 idle.
  EXPECT_NEAR(r.idle_unusable_gpus_mean, 8.0 * 900 / 2000, 1e-9);
  EXPECT_NEAR(r.idle_gpus_mean, (1.0 * 100 + 8.0 * 900 + 8.0 * 10 + 16.0 * 990) / 2000, 1e-9);
  EXPECT_NEAR(r.idle_unusable_gpu_hours, 8.0 * 900 / 3600, 1e-9);
  EXPECT_EQ(r.defragment_evictions, 0);
  EXPECT_EQ(r.preempted_tasks, 0);
  EXPECT_EQ(r.movable_tasks, 2);
  EXPECT_EQ(r.work_lost_gpu_s, 0);
}

TEST(ReplayDefragmentTest, DefragmentMovesAMovableTaskAndTheWaitEnds) {
  const ReplayResult r = ReplayWith({"enqueue", "allocate", "backfill", "defragment"});
  // At t=100 s0 leaves n0 for n1's free GPU and w is pipelined onto n0; at t=110 w binds
  // and s0 starts over on n1. Only [100, 110) has an idle GPU a waiting job (s0) would use.
  EXPECT_EQ(r.defragment_evictions, 1);
  EXPECT_EQ(r.preempted_tasks, 1);
  EXPECT_EQ(r.pipelined_tasks, 1);
  EXPECT_EQ(r.failed_tasks, 0);
  EXPECT_EQ(r.eviction_loops, 0);
  EXPECT_NEAR(r.work_lost_gpu_s, 100.0, 1e-9);  // s0 had run 100 s on one GPU
  EXPECT_NEAR(r.idle_unusable_gpus_mean, 1.0 * 10 / 2000, 1e-9);
  EXPECT_NEAR(r.idle_unusable_gpu_hours, 1.0 * 10 / 3600, 1e-9);
  ASSERT_EQ(r.evictions.size(), 1u);
  EXPECT_EQ(r.evictions[0].t, 100);
}

TEST(ReplayDefragmentTest, TheBudgetIsCountedOverTheReplaysClock) {
  SchedulerConfig config = Must(ReplayPolicyConfig("bestfit", 0));
  config.actions = {"enqueue", "allocate", "backfill", "defragment"};
  config.defragment_evictions_per_hour = 0;
  const ReplayResult r =
      Must(RunReplay(TwoEightGpuNodes(), Fragmenting(), config, 1, ReplayOptions{10, 2000}));
  EXPECT_EQ(r.defragment_evictions, 0);
  EXPECT_NEAR(r.idle_unusable_gpus_mean, 8.0 * 900 / 2000, 1e-9);
}

TEST(MovableSelectionTest, AllSharedOrAPercentChosenPerSeed) {
  SimJob whole = Job("w", 0, 1, 1);
  SimJob shared = Job("s", 0, 1, 0);
  shared.spec.gpu.milli = 500;
  MovableSelection none;
  EXPECT_FALSE(SelectsMovable(none, whole, 0, 1));
  const MovableSelection all{MovableSelection::Kind::kAll, 0};
  EXPECT_TRUE(SelectsMovable(all, whole, 0, 1));
  const MovableSelection shared_only{MovableSelection::Kind::kShared, 0};
  EXPECT_FALSE(SelectsMovable(shared_only, whole, 0, 1));
  EXPECT_TRUE(SelectsMovable(shared_only, shared, 0, 1));
  const MovableSelection third{MovableSelection::Kind::kPercent, 30};
  int chosen = 0, same = 0, other_seed = 0;
  for (size_t i = 0; i < 10000; ++i) {
    const bool a = SelectsMovable(third, whole, i, 42);
    chosen += a ? 1 : 0;
    same += a == SelectsMovable(third, whole, i, 42) ? 1 : 0;
    other_seed += a != SelectsMovable(third, whole, i, 43) ? 1 : 0;
  }
  EXPECT_GT(chosen, 2700);
  EXPECT_LT(chosen, 3300);
  EXPECT_EQ(same, 10000);       // deterministic
  EXPECT_GT(other_seed, 1000);  // another seed, another choice
  EXPECT_FALSE(SelectsMovable({MovableSelection::Kind::kPercent, 0}, whole, 7, 42));
  EXPECT_TRUE(SelectsMovable({MovableSelection::Kind::kPercent, 100}, whole, 7, 42));
}

TEST(MovableSelectionTest, GeneratedMovableJobsLeaveTheRestOfTheWorkloadAsItWas) {
  GeneratorOptions o;
  o.pods = 2000;
  const std::vector<SimJob> plain = Must(GenerateWorkload(o));
  o.pct_movable = 40;
  const std::vector<SimJob> some = Must(GenerateWorkload(o));
  ASSERT_EQ(plain.size(), some.size());
  size_t movable = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_FALSE(plain[i].movable);
    EXPECT_EQ(plain[i].name, some[i].name);
    EXPECT_EQ(plain[i].submit, some[i].submit);
    EXPECT_EQ(plain[i].duration, some[i].duration);
    EXPECT_EQ(plain[i].spec, some[i].spec);
    movable += some[i].movable ? 1 : 0;
  }
  EXPECT_GT(movable, plain.size() * 30 / 100);
  EXPECT_LT(movable, plain.size() * 50 / 100);
  o.pct_movable = 101;
  EXPECT_FALSE(GenerateWorkload(o).ok());
}

TEST(MovableSelectionTest, ReplayOptionsRefuseAPercentOutOfRange) {
  ReplayOptions o;
  o.movable = {MovableSelection::Kind::kPercent, 120};
  const Status st = CheckReplayOptions(o);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "the percent of movable jobs 120 is out of range [0, 100]"));
}

}  // namespace
}  // namespace gantry

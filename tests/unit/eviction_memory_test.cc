// RememberEviction (engine/eviction_memory.h): the one function by which the simulator and
// the daemon remember a session's evictions, so that neither forgets a part.
#include "engine/eviction_memory.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/test_cluster.h"

namespace gantry {
namespace {

struct TwoJobs {
  ClusterState cluster;
  JobId victim = kNone, preemptor = kNone;
  TaskId victim_task = kNone;

  TwoJobs() {
    const QueueId q = AddQueue(cluster, "q");
    victim = AddJob(cluster, "victim", q, CpuSpec(1000), 1);
    preemptor = AddJob(cluster, "preemptor", q, CpuSpec(1000), 1);
    victim_task = cluster.job(victim).tasks[0];
  }
};

TEST(RememberEviction, APreemptionIsRememberedAgainstLoopsAndNotAgainstTheBudget) {
  TwoJobs t;
  EvictDecision e{t.victim, t.victim_task, kNone, "for preemptor", t.preemptor};
  RememberEviction(t.cluster, e, 100);
  EXPECT_EQ(t.cluster.job(t.victim).evicted_by, std::vector<JobId>{t.preemptor});
  EXPECT_EQ(t.cluster.job(t.preemptor).evicted, std::vector<JobId>{t.victim});
  EXPECT_EQ(t.cluster.defragment_evictions().Since(0), 0);
}

TEST(RememberEviction, ADefragmentMoveCountsAgainstTheBudgetAndAgainstLoops) {
  TwoJobs t;
  EvictDecision e{t.victim,     t.victim_task, kNone,
                  "defragment", t.preemptor,   EvictionCause::kDefragment};
  RememberEviction(t.cluster, e, 100);
  RememberEviction(t.cluster, e, 200);
  EXPECT_EQ(t.cluster.defragment_evictions().Since(0), 2);
  EXPECT_EQ(t.cluster.defragment_evictions().Since(100), 1);
  EXPECT_EQ(t.cluster.job(t.victim).evicted_by, std::vector<JobId>{t.preemptor});
}

TEST(RememberEviction, WithoutAPreemptorOnlyTheBudgetRemembers) {
  TwoJobs t;
  EvictDecision e{t.victim, t.victim_task, kNone, "defragment", kNone, EvictionCause::kDefragment};
  RememberEviction(t.cluster, e, 100);
  EXPECT_EQ(t.cluster.defragment_evictions().Since(0), 1);
  EXPECT_TRUE(t.cluster.job(t.victim).evicted_by.empty());
  EXPECT_TRUE(t.cluster.job(t.preemptor).evicted.empty());
}

// The daemon's decisions may name a task or a job its cache has since forgotten: nothing is
// remembered of the loop then, and nothing is read out of bounds.
TEST(RememberEviction, ATaskOrPreemptorNotInTheClusterIsNotRememberedAgainstLoops) {
  TwoJobs t;
  const auto jobs = static_cast<JobId>(t.cluster.jobs().size());
  const auto tasks = static_cast<TaskId>(t.cluster.tasks().size());
  RememberEviction(t.cluster, {t.victim, t.victim_task, kNone, "gone", jobs}, 100);
  RememberEviction(t.cluster, {t.victim, tasks, kNone, "gone", t.preemptor}, 100);
  EXPECT_TRUE(t.cluster.job(t.victim).evicted_by.empty());
  EXPECT_TRUE(t.cluster.job(t.preemptor).evicted.empty());
  EXPECT_EQ(t.cluster.defragment_evictions().Since(0), 0);
}

}  // namespace
}  // namespace gantry

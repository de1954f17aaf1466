// The preempt and reclaim actions: the order victims are taken in, the fewest victims, and
// the rollback that evicts nothing for a preemptor that still would not fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "engine/actions/place_job_evicting.h"
#include "engine/actions/victims.h"
#include "engine/session.h"
#include "engine/statement.h"
#include "model/limits.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"
#include "tests/unit/working_state_text.h"

namespace gantry {
namespace {

SchedulerConfig WithActions(std::vector<std::string> actions) {
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions = std::move(actions);
  return config;
}

// Runs each of the job's tasks on `node`, `gpus_each` devices apiece from device `from`.
void RunOn(ClusterState& c, JobId job, NodeId node, int32_t gpus_each, int32_t from = 0) {
  for (TaskId t : c.job(job).tasks) {
    std::vector<int32_t> devices;
    for (int32_t i = 0; i < gpus_each; ++i) devices.push_back(from++);
    Status st = c.Place(t, node, devices);
    ASSERT_TRUE(st.ok()) << st.message();
  }
}

std::string EvictedOf(const ClusterState& c, const Decisions& d) {
  std::vector<std::string> names;
  for (const EvictDecision& e : d.evictions) names.push_back(c.task(e.task).name);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

TEST(VictimOrderTest, LowerPriorityThenYoungerJobThenNameThenLastAddedTask) {
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  const JobId high = AddJob(c, "high", q, GpuSpec(1), 1, 1, /*priority=*/5, /*creation=*/0);
  const JobId old_low = AddJob(c, "b-old", q, GpuSpec(1), 1, 1, 1, /*creation=*/1);
  const JobId young_low = AddJob(c, "z-young", q, GpuSpec(1), 2, 1, 1, /*creation=*/2);
  const JobId twin = AddJob(c, "a-twin", q, GpuSpec(1), 1, 1, 1, /*creation=*/2);
  // Same job priority, lower task priority: goes before its job-mates' equals.
  const JobId low_task = AddJob(c, "y-low-task", q, GpuSpec(1, 0, /*priority=*/-1), 1, 1, 1, 0);
  std::vector<TaskId> tasks;
  for (JobId j : {high, old_low, young_low, twin, low_task}) {
    for (TaskId t : c.job(j).tasks) tasks.push_back(t);
  }
  std::sort(tasks.begin(), tasks.end(),
            [&](TaskId a, TaskId b) { return VictimGoesFirst(c, a, b); });
  std::vector<std::string> names;
  for (TaskId t : tasks) names.push_back(c.task(t).name);
  EXPECT_EQ(names, (std::vector<std::string>{"y-low-task-0", "a-twin-0", "z-young-1", "z-young-0",
                                             "b-old-0", "high-0"}));
  // A total order: irreflexive, and exactly one of a<b, b<a for distinct tasks.
  for (TaskId a : tasks) {
    EXPECT_FALSE(VictimGoesFirst(c, a, a));
    for (TaskId b : tasks) {
      if (a != b) {
        EXPECT_NE(VictimGoesFirst(c, a, b), VictimGoesFirst(c, b, a));
      }
    }
  }
}

TEST(PreemptTest, EvictsTheFewestAndPipelinesThePreemptorOntoTheirRoom) {
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 4);
  const NodeId n1 = AddGpuNode(c, "n1", 4);
  const QueueId q = AddQueue(c, "q");
  RunOn(c, AddJob(c, "ones", q, GpuSpec(1), 4, 1, /*priority=*/1), n0, 1);
  RunOn(c, AddJob(c, "twos", q, GpuSpec(2), 2, 1, /*priority=*/2), n1, 2);
  const JobId high = AddJob(c, "high", q, GpuSpec(2), 1, 1, 100);
  const Decisions d = RunSession(c, WithActions({"preempt"}));
  EXPECT_EQ(EvictedOf(c, d), "twos-1");
  ASSERT_EQ(d.evictions.size(), 1u);
  EXPECT_EQ(d.evictions[0].for_job, high);  // the preemptor is named
  ASSERT_EQ(d.pipelined.size(), 1u);
  EXPECT_EQ(d.pipelined[0].job, high);
  EXPECT_EQ(d.pipelined[0].node, n1);
  EXPECT_EQ(d.pipelined[0].gpus, (std::vector<int32_t>{2, 3}));
  EXPECT_TRUE(d.binds.empty());
}

TEST(PreemptTest, APreemptorThatStillWouldNotFitEvictsNothingAndLeavesTheStateAsItWas) {
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 4);
  const NodeId n1 = AddGpuNode(c, "n1", 4);
  const QueueId q = AddQueue(c, "q");
  RunOn(c, AddJob(c, "low", q, GpuSpec(4), 1, 1, 1), n0, 4);
  RunOn(c, AddJob(c, "top", q, GpuSpec(4), 1, 1, 1000), n1, 4);
  const JobId gang = AddJob(c, "gang", q, GpuSpec(4), 2, /*min_member=*/2, 100);
  const Policy policy = MustCompile(WithActions({}));
  Snapshot snapshot(c);
  Session s(snapshot, policy);
  const std::string before = WorkingStateText(s);
  EXPECT_EQ(PlaceJobEvicting(s, gang, EvictionCause::kPreempt), 0);
  EXPECT_EQ(WorkingStateText(s), before);
  EXPECT_NE(s.job(gang).reason.find("nothing was evicted"), std::string::npos)
      << s.job(gang).reason;
  const Decisions d = s.Run();  // no actions: just the decisions made so far
  EXPECT_TRUE(d.evictions.empty());
  EXPECT_TRUE(d.pipelined.empty());
}

TEST(PreemptTest, WithoutAFilterThatGrantsPreemptionNothingIsEvicted) {
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 4);
  const QueueId q = AddQueue(c, "q");
  RunOn(c, AddJob(c, "low", q, GpuSpec(4), 1, 1, 1), n0, 4);
  AddJob(c, "high", q, GpuSpec(4), 1, 1, 100);
  SchedulerConfig config = WithActions({"preempt"});
  std::erase_if(config.plugins, [](const PluginConfig& p) { return p.name == "priority"; });
  EXPECT_TRUE(RunSession(c, config).evictions.empty());
  EXPECT_EQ(EvictedOf(c, RunSession(c, WithActions({"preempt"}))), "low-0");
}

TEST(ReclaimTest, TheReclaimerIsNeverLiftedAboveItsDeservedShare) {
  // 8 GPUs, all held by "rich"; "poor" asks for 4 + 1 one-GPU tasks as separate jobs and
  // deserves 4 of them (weights 1:1, rich asks 8): the fifth reclaims nothing.
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 8);
  const QueueId rich = AddQueue(c, "rich");
  const QueueId poor = AddQueue(c, "poor");
  RunOn(c, AddJob(c, "hog", rich, GpuSpec(1), 8, 1, 100), n0, 1);
  for (int i = 0; i < 5; ++i) AddJob(c, "p" + std::to_string(i), poor, GpuSpec(1), 1);
  const Decisions d = RunSession(c, WithActions({"reclaim"}));
  EXPECT_EQ(d.evictions.size(), 4u);
  EXPECT_EQ(d.pipelined.size(), 4u);
  EXPECT_EQ(EvictedOf(c, d), "hog-4 hog-5 hog-6 hog-7");
}

TEST(EvictionChainTest, AJobNeverEvictsAJobThatEvictedItDirectlyOrThroughAChain) {
  // 4 GPUs held by "a" (queue qa); "b" and "c" wait in qb, weights 1:1, and each would
  // reclaim a GPU from a. Once the chain a evicted b, b evicted c is known, neither may:
  // b since a evicted it, c since a did through b.
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 4);
  const QueueId qa = AddQueue(c, "qa");
  const QueueId qb = AddQueue(c, "qb");
  const JobId a = AddJob(c, "a", qa, GpuSpec(1), 4, 1, 1);
  RunOn(c, a, n0, 1);
  const JobId b = AddJob(c, "b", qb, GpuSpec(1), 1, 1, 1);
  const JobId cc = AddJob(c, "c", qb, GpuSpec(1), 1, 1, 1);
  ASSERT_EQ(RunSession(c, WithActions({"reclaim"})).evictions.size(), 2u);  // no memory yet
  c.NoteEviction(b, a);
  c.NoteEviction(cc, b);
  EXPECT_EQ(c.job(cc).evicted_by, (std::vector<JobId>{a, b}));
  const Decisions d = RunSession(c, WithActions({"reclaim"}));
  EXPECT_TRUE(d.evictions.empty()) << EvictedOf(c, d);
  // Once a is gone its id names no chain.
  for (TaskId t : std::vector<TaskId>(c.job(a).tasks)) c.RemoveTask(t);
  c.RemoveJob(a);
  EXPECT_EQ(c.job(cc).evicted_by, (std::vector<JobId>{b}));
}

// The loop the simulator found (make fairness with reserve and a grace): x evicted y,
// then z evicted x, then y would evict z, closing z -> x -> y -> z. What z's eviction of
// x adds must reach y, which x had evicted before.
TEST(EvictionChainTest, ALaterEvictionUpTheChainReachesTheJobsBelow) {
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 1);
  const QueueId q = AddQueue(c, "q");
  const JobId z = AddJob(c, "z", q, GpuSpec(1), 1, 1, 1);
  RunOn(c, z, n0, 1);
  const JobId x = AddJob(c, "x", q, GpuSpec(1), 1, 1, 1);
  const JobId y = AddJob(c, "y", q, GpuSpec(1), 1, 1, 100);
  ASSERT_EQ(RunSession(c, WithActions({"preempt"})).evictions.size(), 1u);  // no memory yet
  c.NoteEviction(y, x);
  c.NoteEviction(x, z);
  EXPECT_EQ(c.job(x).evicted_by, (std::vector<JobId>{z}));
  EXPECT_EQ(c.job(y).evicted_by, (std::vector<JobId>{z, x}));
  EXPECT_EQ(c.job(z).evicted, (std::vector<JobId>{x}));
  const Decisions d = RunSession(c, WithActions({"preempt"}));
  EXPECT_TRUE(d.evictions.empty()) << EvictedOf(c, d);
}

// The loop the simulator found with reserve before reclaim: two evictions of one session
// closing a loop that neither closes alone. b had evicted a and d had evicted c; in one
// session a evicts d, and then c may not evict b (c -> b -> a -> d -> c), though neither
// b nor a is in c's evicted_by until the session's evictions are noted.
TEST(EvictionChainTest, TwoEvictionsOfOneSessionCloseNoLoop) {
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 1);
  const NodeId n1 = AddGpuNode(c, "n1", 1);
  const QueueId q = AddQueue(c, "q");
  const JobId d = AddJob(c, "d", q, GpuSpec(1), 1, 1, 1, /*creation=*/0);
  RunOn(c, d, n0, 1);
  const JobId b = AddJob(c, "b", q, GpuSpec(1), 1, 1, 1, /*creation=*/1);
  RunOn(c, b, n1, 1);
  const JobId a = AddJob(c, "a", q, GpuSpec(1), 1, 1, 100, /*creation=*/2);
  const JobId cc = AddJob(c, "c", q, GpuSpec(1), 1, 1, 100, /*creation=*/3);
  ASSERT_EQ(RunSession(c, WithActions({"preempt"})).evictions.size(), 2u);  // no memory yet
  c.NoteEviction(a, b);
  c.NoteEviction(cc, d);
  const Decisions decisions = RunSession(c, WithActions({"preempt"}));
  ASSERT_EQ(decisions.evictions.size(), 1u) << EvictedOf(c, decisions);
  // Whichever went first evicted the job its memory allows, and the other none.
  const EvictDecision& e = decisions.evictions[0];
  EXPECT_TRUE((e.for_job == a && e.job == d) || (e.for_job == cc && e.job == b))
      << c.job(e.for_job).name << " evicted " << c.job(e.job).name;
}

TEST(EvictionChainTest, FullnessGoesDownTheChain) {
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  const JobId top = AddJob(c, "top", q, GpuSpec(1), 1, 1, 1);
  const JobId below = AddJob(c, "below", q, GpuSpec(1), 1, 1, 1);
  c.NoteEviction(below, top);  // top evicted below
  for (size_t i = 0; i < kMaxEvictionChain; ++i) {
    c.NoteEviction(top, AddJob(c, "o" + std::to_string(i), q, GpuSpec(1), 1, 1, 1));
  }
  // top remembers kMaxEvictionChain jobs, which is not past the bound; below would have
  // to remember one more (top too).
  EXPECT_FALSE(c.EvictionChainFull(top));
  EXPECT_TRUE(c.EvictionChainFull(below));
  // One more above top: its list no longer holds every job above it, and below stays full.
  c.NoteEviction(top, AddJob(c, "one-more", q, GpuSpec(1), 1, 1, 1));
  EXPECT_TRUE(c.EvictionChainFull(top));
  EXPECT_TRUE(c.EvictionChainFull(below));
  EXPECT_EQ(c.job(below).evicted_by.size(), kMaxEvictionChain);
}

TEST(EvictionChainTest, AFullChainKeepsTheJobFromEvictingAndFromBeingEvicted) {
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  const JobId victim = AddJob(c, "victim", q, GpuSpec(1), 1, 1, 1);
  std::vector<JobId> others;
  for (size_t i = 0; i <= kMaxEvictionChain; ++i) {
    others.push_back(AddJob(c, "o" + std::to_string(i), q, GpuSpec(1), 1, 1, 1));
    c.NoteEviction(victim, others.back());
    ASSERT_EQ(c.EvictionChainFull(victim), i == kMaxEvictionChain) << i;
  }
  EXPECT_EQ(c.job(victim).evicted_by.size(), kMaxEvictionChain);
  c.NoteEviction(victim, AddJob(c, "one-more", q, GpuSpec(1), 1, 1, 1));  // stays full
  EXPECT_EQ(c.job(victim).evicted_by.size(), kMaxEvictionChain);
  EXPECT_TRUE(c.EvictionChainFull(victim));
  // A full job is no candidate, and evicts nothing.
  const NodeId n0 = AddGpuNode(c, "n0", 1);
  RunOn(c, victim, n0, 1);
  AddJob(c, "high", q, GpuSpec(1), 1, 1, 100);
  EXPECT_TRUE(RunSession(c, WithActions({"preempt"})).evictions.empty());
}

}  // namespace
}  // namespace gantry

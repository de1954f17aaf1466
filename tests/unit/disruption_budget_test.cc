// The disruptionbudget plugin: victims are kept, in the caller's order, only while every
// budget that covers them allows one more disruption, counting evictions already planned.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/session.h"
#include "engine/statement.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

TaskSpec Labelled(const std::string& app, const std::string& ns = "") {
  TaskSpec spec = GpuSpec(1);
  spec.labels = Labels({{"app", app}});
  spec.namespace_ = ns;
  return spec;
}

DisruptionBudget Budget(const std::string& name, const std::string& app, int32_t allowed,
                        const std::string& ns = "") {
  DisruptionBudget b;
  b.name = name;
  b.namespace_ = ns;
  b.selector.emplace();
  b.selector->match_labels = Labels({{"app", app}});
  b.disruptions_allowed = allowed;
  return b;
}

void RunAll(ClusterState& c, JobId job, NodeId node, int32_t& next_device) {
  for (TaskId t : c.job(job).tasks) {
    const int32_t d = next_device++;
    Status st = c.Place(t, node, std::span<const int32_t>(&d, 1));
    ASSERT_TRUE(st.ok()) << st.message();
  }
}

std::vector<std::string> Names(const ClusterState& c, const std::vector<TaskId>& tasks) {
  std::vector<std::string> out;
  for (TaskId t : tasks) out.push_back(c.task(t).name);
  return out;
}

class DisruptionBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const NodeId n0 = AddGpuNode(c_, "n0", 8);
    q_ = AddQueue(c_, "q");
    int32_t device = 0;
    a_ = AddJob(c_, "a", q_, Labelled("a"), 3, 1, 1);
    RunAll(c_, a_, n0, device);
    b_ = AddJob(c_, "b", q_, Labelled("b"), 1, 1, 1);
    RunAll(c_, b_, n0, device);
    free_ = AddJob(c_, "free", q_, Labelled("free"), 1, 1, 1);
    RunAll(c_, free_, n0, device);
    other_ns_ = AddJob(c_, "other", q_, Labelled("a", "elsewhere"), 1, 1, 1);
    RunAll(c_, other_ns_, n0, device);
    high_ = AddJob(c_, "high", q_, GpuSpec(8), 1, 1, 100);
    c_.SetDisruptionBudgets(
        {Budget("pdb-a", "a", 1), Budget("pdb-b", "b", 0), Budget("pdb-x", "x", 0)});
  }
  std::vector<TaskId> Candidates() const {
    return {c_.job(a_).tasks[0],    c_.job(b_).tasks[0],        c_.job(a_).tasks[1],
            c_.job(free_).tasks[0], c_.job(other_ns_).tasks[0], c_.job(a_).tasks[2]};
  }
  ClusterState c_;
  QueueId q_ = kNone;
  JobId a_ = kNone, b_ = kNone, free_ = kNone, other_ns_ = kNone, high_ = kNone;
};

TEST_F(DisruptionBudgetTest, KeepsInOrderOnlyVictimsTheirBudgetsStillAllow) {
  const Policy policy = MustCompile(SchedulerConfig::Default());
  Snapshot snapshot(c_);
  Session s(snapshot, policy);
  const TaskId preemptor = c_.job(high_).tasks[0];
  // pdb-a allows one: a-0 is kept, then a-1, other-0 and a-2 are not; pdb-b allows none.
  EXPECT_EQ(Names(c_, s.Victims(EvictionCause::kPreempt, preemptor, Candidates())),
            (std::vector<std::string>{"a-0", "free-0"}));
}

TEST_F(DisruptionBudgetTest, ABudgetInANamespaceCoversOnlyItsTasks) {
  std::vector<DisruptionBudget> budgets = c_.disruption_budgets();
  budgets[0].namespace_ = "elsewhere";  // now covers other-0 alone
  c_.SetDisruptionBudgets(budgets);
  const Policy policy = MustCompile(SchedulerConfig::Default());
  Snapshot snapshot(c_);
  Session s(snapshot, policy);
  const TaskId preemptor = c_.job(high_).tasks[0];
  EXPECT_EQ(Names(c_, s.Victims(EvictionCause::kPreempt, preemptor, Candidates())),
            (std::vector<std::string>{"a-0", "a-1", "free-0", "other-0", "a-2"}));
}

TEST_F(DisruptionBudgetTest, EvictionsPlannedInTheSessionCountUntilRolledBack) {
  const Policy policy = MustCompile(SchedulerConfig::Default());
  Snapshot snapshot(c_);
  Session s(snapshot, policy);
  const TaskId preemptor = c_.job(high_).tasks[0];
  const std::vector<TaskId> a1 = {c_.job(a_).tasks[1]};
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Evict(c_.job(a_).tasks[0], "test").ok());
  EXPECT_TRUE(s.Victims(EvictionCause::kPreempt, preemptor, a1).empty());
  st.Discard();
  EXPECT_EQ(Names(c_, s.Victims(EvictionCause::kPreempt, preemptor, a1)),
            (std::vector<std::string>{"a-1"}));
}

TEST_F(DisruptionBudgetTest, WithoutThePluginBudgetsAreNotHonoured) {
  SchedulerConfig config = SchedulerConfig::Default();
  std::erase_if(config.plugins, [](const PluginConfig& p) { return p.name == "disruptionbudget"; });
  const Policy policy = MustCompile(config);
  Snapshot snapshot(c_);
  Session s(snapshot, policy);
  const TaskId preemptor = c_.job(high_).tasks[0];
  EXPECT_EQ(s.Victims(EvictionCause::kPreempt, preemptor, Candidates()).size(), 6u);
}

TEST_F(DisruptionBudgetTest, APreemptorLeftPendingByABudgetSaysWhichBudget) {
  // high needs all 8 GPUs: every running task would have to go, and pdb-b keeps b-0.
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions = {"preempt"};
  const Decisions d = RunSession(c_, config);
  EXPECT_TRUE(d.evictions.empty());
  const std::string reason = PendingReasonOf(d, high_);
  EXPECT_NE(reason.find("disruption budget \"pdb-b\" (0 allowed)"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("pdb-x"), std::string::npos) << reason;
}

}  // namespace
}  // namespace gantry

// The daemon's cluster cache for preempt, reclaim and defragment: PodDisruptionBudgets into the
// model, terminating pods as releasing, and evictions sent once.
#include <gtest/gtest.h>

#include <string>

#include "daemon/cluster_cache.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;

json NodeObject(const std::string& name) {
  return {{"metadata", {{"name", name}, {"uid", "uid-" + name}, {"resourceVersion", "1"}}},
          {"status",
           {{"allocatable",
             {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}}}}};
}

json BoundPod(const std::string& name, const std::string& node) {
  return {{"metadata",
           {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}, {"resourceVersion", "1"}}},
          {"spec",
           {{"schedulerName", "gantry"},
            {"nodeName", node},
            {"containers",
             {{{"name", "c"},
               {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
}

json Budget(int64_t generation, int64_t observed, int allowed) {
  return {
      {"metadata",
       {{"name", "guard"}, {"namespace", "ml"}, {"uid", "uid-guard"}, {"generation", generation}}},
      {"spec", {{"selector", {{"matchLabels", {{"app", "train"}}}}}}},
      {"status", {{"observedGeneration", observed}, {"disruptionsAllowed", allowed}}}};
}

TaskId TaskOf(const ClusterState& s, const std::string& key) {
  for (TaskId t = 0; t < s.tasks().size(); ++t) {
    if (s.task(t).name == key && s.task(t).job != kNone) return t;
  }
  return kNone;
}

TEST(ClusterCacheEvictions, BudgetsFollowTheirObjectsAndCountNothingWhileTheirStatusIsOld) {
  ClusterCache c("gantry");
  c.OnDisruptionBudget(EventType::kAdded, Budget(2, 1, 3));
  ASSERT_EQ(c.state().disruption_budgets().size(), 1u);
  const DisruptionBudget& b = c.state().disruption_budgets()[0];
  EXPECT_EQ(b.name, "ml/guard");
  EXPECT_EQ(b.namespace_, "ml");
  ASSERT_TRUE(b.selector.has_value());
  EXPECT_EQ(b.disruptions_allowed, 0);  // the Eviction API refuses until status catches up
  c.OnDisruptionBudget(EventType::kModified, Budget(2, 2, 3));
  EXPECT_EQ(c.state().disruption_budgets()[0].disruptions_allowed, 3);
  json no_selector = Budget(1, 1, 1);
  no_selector["spec"].erase("selector");
  c.OnDisruptionBudget(EventType::kModified, no_selector);
  EXPECT_FALSE(c.state().disruption_budgets()[0].selector.has_value());  // covers no pod
  c.OnDisruptionBudget(EventType::kDeleted, no_selector);
  EXPECT_TRUE(c.state().disruption_budgets().empty());
}

TEST(ClusterCacheEvictions, ATerminatingPodIsReleasing) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  json pod = BoundPod("p", "n1");
  c.OnPod(EventType::kAdded, pod);
  const TaskId t = TaskOf(c.state(), "ml/p");
  ASSERT_NE(t, kNone);
  EXPECT_FALSE(c.state().task(t).releasing);
  pod["metadata"]["deletionTimestamp"] = "2026-12-02T05:00:00Z";
  pod["metadata"]["resourceVersion"] = "2";
  c.OnPod(EventType::kModified, pod);
  ASSERT_EQ(TaskOf(c.state(), "ml/p"), t);
  EXPECT_TRUE(c.state().task(t).releasing);
}

TEST(ClusterCacheEvictions, AnEvictionIsSentOnceAndAnEvictedPodIsReleasing) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnPod(EventType::kAdded, BoundPod("p", "n1"));
  const TaskId t = TaskOf(c.state(), "ml/p");
  ASSERT_NE(t, kNone);
  Decisions d;
  d.evictions.push_back({c.state().task(t).job, t, c.state().FindNode("n1"), "preempted for q"});
  std::vector<EvictRequest> sent = c.TakeEvictions(d, 0);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].name, "p");
  EXPECT_EQ(sent[0].uid, "uid-p");
  EXPECT_EQ(sent[0].reason, "preempted for q");
  EXPECT_TRUE(c.TakeEvictions(d, 0).empty());  // in flight
  // Refused (a budget): reported once per run of refusals, and sent again later.
  EXPECT_TRUE(c.EvictionDone(sent[0], /*evicted=*/false));
  ASSERT_EQ(c.TakeEvictions(d, 0).size(), 1u);
  EXPECT_FALSE(c.EvictionDone(sent[0], false));
  EXPECT_FALSE(c.state().task(t).releasing);
  ASSERT_EQ(c.TakeEvictions(d, 0).size(), 1u);
  EXPECT_FALSE(c.EvictionDone(sent[0], /*evicted=*/true));
  EXPECT_TRUE(c.state().task(t).releasing);
  EXPECT_TRUE(c.TakeEvictions(d, 0).empty());  // evicted: not again
}

TEST(ClusterCacheEvictions, AVictimRemembersItsPreemptorSoThatItNeverEvictsItBack) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnPod(EventType::kAdded, BoundPod("victim", "n1"));
  c.OnPod(EventType::kAdded, BoundPod("preemptor", "n1"));
  const TaskId victim = TaskOf(c.state(), "ml/victim");
  const TaskId preemptor = TaskOf(c.state(), "ml/preemptor");
  ASSERT_NE(victim, kNone);
  ASSERT_NE(preemptor, kNone);
  const JobId victim_job = c.state().task(victim).job;
  const JobId preemptor_job = c.state().task(preemptor).job;
  ASSERT_NE(victim_job, preemptor_job);
  Decisions d;
  d.evictions.push_back({victim_job, victim, c.state().FindNode("n1"), "preempted", preemptor_job});
  ASSERT_EQ(c.TakeEvictions(d, 0).size(), 1u);
  EXPECT_EQ(c.state().job(victim_job).evicted_by, std::vector<JobId>{preemptor_job});
  EXPECT_TRUE(c.state().job(preemptor_job).evicted_by.empty());
}

TEST(ClusterCacheEvictions, ADefragmentEvictionCarriesItsCauseAndCountsAgainstTheBudget) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnPod(EventType::kAdded, BoundPod("moved", "n1"));
  c.OnPod(EventType::kAdded, BoundPod("other", "n1"));
  const TaskId moved = TaskOf(c.state(), "ml/moved");
  const TaskId other = TaskOf(c.state(), "ml/other");
  ASSERT_NE(moved, kNone);
  ASSERT_NE(other, kNone);
  Decisions d;
  d.evictions.push_back({c.state().task(moved).job, moved, c.state().FindNode("n1"),
                         "defragment: moved to free node n1 for job j", kNone,
                         EvictionCause::kDefragment});
  d.evictions.push_back({c.state().task(other).job, other, c.state().FindNode("n1"), "preempted"});
  const std::vector<EvictRequest> sent = c.TakeEvictions(d, /*now=*/5000);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].cause, EvictionCause::kDefragment);
  EXPECT_EQ(sent[1].cause, EvictionCause::kPreempt);
  // Only the defragment eviction is remembered, at the session's time.
  EXPECT_EQ(c.state().defragment_evictions().Since(4999), 1);
  EXPECT_EQ(c.state().defragment_evictions().Since(5000), 0);
  // In flight: not sent, nor counted, again.
  EXPECT_TRUE(c.TakeEvictions(d, 5001).empty());
  EXPECT_EQ(c.state().defragment_evictions().Since(0), 1);
}

TEST(ClusterCacheEvictions, APodsMovableAnnotationMakesItsTaskMovable) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  json pod = BoundPod("p", "n1");
  c.OnPod(EventType::kAdded, pod);
  const TaskId t = TaskOf(c.state(), "ml/p");
  ASSERT_NE(t, kNone);
  EXPECT_FALSE(c.state().task(t).movable);
  pod["metadata"]["annotations"] = {{"gantry.dev/movable", "true"}};
  pod["metadata"]["resourceVersion"] = "2";
  c.OnPod(EventType::kModified, pod);
  ASSERT_EQ(TaskOf(c.state(), "ml/p"), t);
  EXPECT_TRUE(c.state().task(t).movable);
  // Malformed: the bound pod still counts on its node, and is not movable.
  pod["metadata"]["annotations"] = {{"gantry.dev/movable", "yes"}};
  pod["metadata"]["resourceVersion"] = "3";
  c.OnPod(EventType::kModified, pod);
  const TaskId again = TaskOf(c.state(), "ml/p");
  ASSERT_NE(again, kNone);
  EXPECT_FALSE(c.state().task(again).movable);
}

TEST(ClusterCacheEvictions, AQueuesMovableAnnotationMakesItMovable) {
  ClusterCache c("gantry");
  json queue = {{"metadata",
                 {{"name", "batch"},
                  {"uid", "uid-batch"},
                  {"resourceVersion", "1"},
                  {"annotations", {{"gantry.dev/movable", "true"}}}}},
                {"spec", {{"weight", 1}}}};
  c.OnQueue(EventType::kAdded, queue);
  const QueueId q = c.state().FindQueue("batch");
  ASSERT_NE(q, kNone);
  EXPECT_TRUE(c.state().queue(q).movable);
  queue["metadata"]["annotations"]["gantry.dev/movable"] = "false";
  c.OnQueue(EventType::kModified, queue);
  EXPECT_FALSE(c.state().queue(q).movable);
  queue["metadata"]["annotations"]["gantry.dev/movable"] = "true";
  c.OnQueue(EventType::kModified, queue);
  c.OnQueue(EventType::kDeleted, queue);
  EXPECT_FALSE(c.state().queue(q).movable);  // what is left of a deleted queue is plain
}

TEST(ClusterCacheEvictions, APipelinedPodIsNominatedOnceForItsNode) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  json pending = BoundPod("w", "n1");
  pending["spec"].erase("nodeName");
  pending["status"]["phase"] = "Pending";
  c.OnPod(EventType::kAdded, pending);
  const TaskId t = TaskOf(c.state(), "ml/w");
  ASSERT_NE(t, kNone);
  Decisions d;
  d.pipelined.push_back({c.state().task(t).job, t, c.state().FindNode("n1"), {0}});
  std::vector<NominatedNode> n = c.Nominations(d);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].node, "n1");
  EXPECT_TRUE(c.Nominations(d).empty());
}

// What is remembered of a pod (an eviction in flight or refused, the node it was nominated
// for) goes with it: a pod made again under its name starts afresh.
TEST(ClusterCacheEvictions, WhatIsRememberedOfAPodGoesWithIt) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  const json victim = BoundPod("p", "n1");
  c.OnPod(EventType::kAdded, victim);
  json waiting = BoundPod("w", "n1");
  waiting["spec"].erase("nodeName");
  waiting["status"]["phase"] = "Pending";
  c.OnPod(EventType::kAdded, waiting);
  auto evict = [&] {
    const TaskId t = TaskOf(c.state(), "ml/p");
    Decisions d;
    d.evictions.push_back({c.state().task(t).job, t, c.state().FindNode("n1"), "for w"});
    return c.TakeEvictions(d, 0);
  };
  std::vector<EvictRequest> sent = evict();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(c.EvictionDone(sent[0], /*evicted=*/false));  // the first refusal
  ASSERT_EQ(evict().size(), 1u);                            // in flight again
  const TaskId w = TaskOf(c.state(), "ml/w");
  Decisions d;
  d.pipelined.push_back({c.state().task(w).job, w, c.state().FindNode("n1"), {0}});
  ASSERT_EQ(c.Nominations(d).size(), 1u);
  EXPECT_GT(c.sizes().component_records, 0u);
  c.OnPod(EventType::kDeleted, victim);
  c.OnPod(EventType::kDeleted, waiting);
  EXPECT_EQ(c.sizes().component_records, 0u);
  c.OnPod(EventType::kAdded, victim);
  sent = evict();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(c.EvictionDone(sent[0], /*evicted=*/false)) << "its first refusal again";
}

}  // namespace
}  // namespace gantry

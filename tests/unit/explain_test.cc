// ExplainPending (engine/explain.h) after Session::Run, and its JSON and words
// (explain/explanation_json.h). Expected values are written by hand from the clusters.
#include "engine/explain.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "explain/explanation_json.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

// One session on `c` and its explanations of up to `max_jobs` pending jobs.
struct Explained {
  Decisions decisions;
  std::vector<PendingExplanation> explanations;
};
Explained RunExplained(const ClusterState& c, size_t max_jobs = 100) {
  const Policy policy = MustCompile(SchedulerConfig::Default());
  const Snapshot snapshot(c);
  Session session(snapshot, policy);
  Explained out;
  out.decisions = session.Run();
  out.explanations = ExplainPending(session, out.decisions, max_jobs);
  return out;
}

const PendingExplanation& ExplanationOf(const Explained& x, JobId job) {
  for (const PendingExplanation& e : x.explanations) {
    if (e.job == job) return e;
  }
  ADD_FAILURE() << "job " << job << " is not explained";
  static const PendingExplanation none;
  return none;
}

const PendingJob& PendingOf(const Decisions& d, JobId job) {
  for (const PendingJob& p : d.pending) {
    if (p.job == job) return p;
  }
  ADD_FAILURE() << "job " << job << " is not pending";
  static const PendingJob none;
  return none;
}

TEST(Explain, NoNodeFitsNamesThePredicatesAndTheClosestNodes) {
  ClusterState c;
  const NodeId a = AddGpuNode(c, "gpu-a", 8);
  const NodeId b = AddGpuNode(c, "gpu-b", 8);
  AddGpuNode(c, "gpu-c", 4);  // too small ever: not close, though short of room
  AddCpuNode(c, "cpu-0", 64000);
  const QueueId q = AddQueue(c, "default");
  Occupy(c, q, a, {0, 1, 2, 3, 4, 5});  // 2 free
  Occupy(c, q, b, {0, 1, 2, 3});        // 4 free
  const JobId wide = AddJob(c, "wide", q, GpuSpec(8, 1000), 1);
  const Explained x = RunExplained(c);
  const PendingExplanation& e = ExplanationOf(x, wide);
  EXPECT_FALSE(e.queue_limit.has_value());
  EXPECT_EQ(e.nodes_looked_at, 4);
  EXPECT_EQ(e.nodes_fit, 0);
  ASSERT_EQ(e.closest.size(), 2u);
  // gpu-b is 4 short, gpu-a 6; gpu-c could never hold it.
  EXPECT_EQ(c.node(e.closest[0].node).name, "gpu-b");
  EXPECT_EQ(e.closest[0].lacks, "4 GPUs free, needs 8");
  EXPECT_EQ(c.node(e.closest[1].node).name, "gpu-a");
  EXPECT_EQ(e.closest[1].lacks, "2 GPUs free, needs 8");
  EXPECT_EQ(e.min_member, 1);
  EXPECT_EQ(e.placeable_now, 0);
  EXPECT_EQ(e.would_take, "1 more node with 8 free GPUs");
  int64_t counted = 0;
  for (const PredicateCount& pc : e.predicates) counted += pc.nodes;
  EXPECT_EQ(counted, 4);  // every node rejected once
}

TEST(Explain, CpuShortfallIsWordedPerResource) {
  ClusterState c;
  const NodeId node = AddCpuNode(c, "cpu-0", 10000);
  const QueueId q = AddQueue(c, "default");
  const JobId running = AddJob(c, "running", q, CpuSpec(4000), 1);
  ASSERT_TRUE(c.Place(c.job(running).tasks[0], node, {}).ok());
  const JobId big = AddJob(c, "big", q, CpuSpec(8000), 1);
  const Explained x = RunExplained(c);
  const PendingExplanation& e = ExplanationOf(x, big);
  ASSERT_EQ(e.closest.size(), 1u);
  EXPECT_EQ(e.closest[0].lacks, "cpu 2 short");
  ASSERT_EQ(e.predicates.size(), 1u);
  EXPECT_EQ(e.predicates[0].words, "Insufficient cpu");
  EXPECT_EQ(e.predicates[0].nodes, 1);
  EXPECT_EQ(e.would_take, "room for 1 more pod of cpu 8");
}

TEST(Explain, QueueCapabilityHoldsTheJob) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 8);
  AddGpuNode(c, "gpu-1", 8);
  const QueueId team = AddQueue(c, "team-a", 1, {}, ResourceVector{{kGpu, 4000}});
  Occupy(c, team, 0, {0, 1, 2});  // 3 of its 4 GPUs in use
  const JobId job = AddJob(c, "two", team, GpuSpec(1), 2, /*min_member=*/2);
  const Explained x = RunExplained(c);
  const PendingExplanation& e = ExplanationOf(x, job);
  ASSERT_TRUE(e.queue_limit.has_value());
  EXPECT_EQ(c.queue(e.queue_limit->queue).name, "team-a");
  EXPECT_EQ(e.queue_limit->resource, kGpu);
  EXPECT_EQ(e.queue_limit->used, 3000);
  EXPECT_EQ(e.queue_limit->limit, 4000);
  EXPECT_EQ(e.queue_limit->needs, 2000);
  EXPECT_EQ(e.would_take, "queue team-a's limit on nvidia.com/gpu raised by 1");
  EXPECT_EQ(e.placeable_now, 2);  // the room is there
}

TEST(Explain, GangShortCountsWhatTheRoomTakes) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 8);
  AddGpuNode(c, "gpu-1", 8);
  const QueueId q = AddQueue(c, "default");
  const JobId gang = AddJob(c, "gang", q, GpuSpec(4), 5, /*min_member=*/5);
  const Explained x = RunExplained(c);
  const PendingExplanation& e = ExplanationOf(x, gang);
  EXPECT_EQ(e.min_member, 5);
  EXPECT_EQ(e.running, 0);
  EXPECT_EQ(e.placeable_now, 4);
  EXPECT_EQ(e.nodes_fit, 2);
  EXPECT_TRUE(e.closest.empty());  // each pod fits alone: no node is "close"
  EXPECT_EQ(e.would_take, "1 more node with 4 free GPUs");
}

TEST(Explain, LeavesTheDecisionsAsTheyWere) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 8);
  AddGpuNode(c, "gpu-1", 8);
  const QueueId q = AddQueue(c, "default");
  AddJob(c, "gang", q, GpuSpec(4), 5, /*min_member=*/5);
  AddJob(c, "small", q, GpuSpec(2), 3);
  const Decisions plain = RunSession(c);
  const Decisions explained = RunExplained(c).decisions;
  EXPECT_EQ(BindsOf(c, plain), BindsOf(c, explained));
  ASSERT_EQ(plain.pending.size(), explained.pending.size());
  for (size_t i = 0; i < plain.pending.size(); ++i) {
    EXPECT_EQ(plain.pending[i].reason, explained.pending[i].reason);
  }
}

// Trial placements are discarded: explaining again, after the first, says the same.
TEST(Explain, LeavesTheSessionAsItWas) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 8);
  AddGpuNode(c, "gpu-1", 8);
  const QueueId q = AddQueue(c, "default");
  const JobId gang = AddJob(c, "gang", q, GpuSpec(4), 5, /*min_member=*/5);
  const JobId wide = AddJob(c, "wide", q, GpuSpec(16), 1);
  const Policy policy = MustCompile(SchedulerConfig::Default());
  const Snapshot snapshot(c);
  Session session(snapshot, policy);
  const Decisions d = session.Run();
  const std::vector<PendingExplanation> first = ExplainPending(session, d, 10);
  const std::vector<PendingExplanation> again = ExplainPending(session, d, 10);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(again.size(), 2u);
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].placeable_now, again[i].placeable_now);
    EXPECT_EQ(first[i].nodes_fit, again[i].nodes_fit);
    EXPECT_EQ(first[i].would_take, again[i].would_take);
  }
  EXPECT_EQ(first[0].job, gang);
  EXPECT_EQ(first[0].placeable_now, 4);
  EXPECT_EQ(first[1].job, wide);
  EXPECT_EQ(first[1].nodes_fit, 0);
  EXPECT_TRUE(first[1].closest.empty());  // no node could ever hold 16 GPUs
  for (NodeId n = 0; n < 2; ++n) EXPECT_EQ(session.free_vector(n).Get(kGpu), 8000);
}

TEST(Explain, OnlyAsManyJobsAsAsked) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 1);
  const QueueId q = AddQueue(c, "default");
  AddJob(c, "a", q, GpuSpec(2), 1);
  AddJob(c, "b", q, GpuSpec(2), 1);
  const Explained x = RunExplained(c, 1);
  ASSERT_EQ(x.decisions.pending.size(), 2u);
  ASSERT_EQ(x.explanations.size(), 1u);
  EXPECT_EQ(x.explanations[0].job, x.decisions.pending[0].job);
}

TEST(ExplainJson, WordsFromTheJson) {
  ClusterState c;
  AddGpuNode(c, "gpu-a", 8);
  const QueueId q = AddQueue(c, "default");
  Occupy(c, q, 0, {0, 1, 2, 3, 4, 5});
  const JobId wide = AddJob(c, "wide", q, GpuSpec(8), 1);
  const Explained x = RunExplained(c);
  const nlohmann::ordered_json j =
      ExplanationJson(c, PendingOf(x.decisions, wide), &ExplanationOf(x, wide));
  EXPECT_EQ(j["closestNodes"].dump(), R"([{"node":"gpu-a","lacks":"2 GPUs free, needs 8"}])");
  EXPECT_EQ(j["gang"].dump(), R"({"minMember":1,"running":0,"placeableNow":0,"short":1})");
  const std::string words = ExplanationText(nlohmann::json::parse(j.dump()), "ns/wide");
  EXPECT_EQ(words,
            "ns/wide is pending (1 pod not placed).\n"
            "Why: 0/1 nodes are available: 1 Insufficient free whole GPUs (nvidia.com/gpu).\n"
            "Queue limit: none holds it.\n"
            "Nodes: 0 of 1 fit one of its pods now; rejected by:\n"
            "  1 node(s): Insufficient free whole GPUs (nvidia.com/gpu)\n"
            "Closest nodes:\n"
            "  gpu-a: 2 GPUs free, needs 8\n"
            "Gang: none (one pod at a time); room for it now: no.\n"
            "Reservation: none.\n"
            "What it would take: 1 more node with 8 free GPUs.\n");
}

TEST(ExplainJson, WithoutAnExplanationOnlyTheReason) {
  const std::string words = ExplanationText(
      nlohmann::json::parse(R"({"job":"x","pendingTasks":2,"reason":"waiting"})"), "ns/x");
  EXPECT_EQ(words, "ns/x is pending (2 pods not placed).\nWhy: waiting\n");
}

}  // namespace
}  // namespace gantry

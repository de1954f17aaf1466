// A property test of the engine: random clusters and workloads (seeded) through rounds of
// sessions, checking after each what must hold whatever the input:
//   - no node over its allocatable on any resource, no device over its share or memory;
//   - every bind respects the node's static rules (selector, affinity, taints, cordon, and
//     the whole static verdict for that node alone: capacity, GPU models, MIG readiness);
//   - no partial gang: a job that gets binds has minMember running or placed;
//   - no queue pushed past its capability;
//   - the same decisions on a second run, and with the node-table cache as without;
//   - every job left with pending tasks is pending with a reason.
// A failure prints its seed; rerun one with GANTRY_PROPERTY_SEED=N.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/filter.h"
#include "engine/random.h"
#include "engine/registry.h"
#include "engine/session.h"
#include "model/cluster.h"
#include "sim/policies.h"
#include "tests/unit/random_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

// The decisions as text, to compare two runs.
std::string Text(const Decisions& d) {
  std::string out;
  for (const BindDecision& b : d.binds) {
    out += "bind " + std::to_string(b.task) + "@" + std::to_string(b.node) + ":";
    for (int32_t g : b.gpus) out += std::to_string(g) + ",";
    out += "\n";
  }
  for (const PendingJob& p : d.pending) {
    out += "pending " + std::to_string(p.job) + " " + std::to_string(p.pending_tasks) + " " +
           p.reason + "\n";
  }
  return out;
}

const NodePredicate& StaticPredicates() {
  static const std::unique_ptr<Plugin> plugin = Must(MakePlugin(PluginConfig{"predicates", {}}));
  return dynamic_cast<const NodePredicate&>(*plugin);
}

// Applies a session's binds through ClusterState::Place, which checks room on every
// resource and device, and checks what Place does not.
void CheckAndApply(const Decisions& d, ClusterState* c, const std::string& where) {
  const ClusterState before = *c;
  std::map<JobId, int32_t> placed;
  for (const BindDecision& b : d.binds) {
    const Node& node = c->node(b.node);
    const TaskSpec& spec = c->spec_of(b.task);
    EXPECT_EQ(c->task(b.task).job, b.job) << where;
    EXPECT_FALSE(node.removed || node.unschedulable) << where << ": bound to " << node.name;
    EXPECT_TRUE(MatchesNodeSelector(spec.node_selector, node.labels)) << where;
    EXPECT_TRUE(spec.affinity.Matches(node.labels)) << where;
    const Taint* blocking = nullptr;
    EXPECT_TRUE(ToleratesAll(spec.tolerations, node.taints, &blocking)) << where;
    // The whole static verdict, computed for this node alone (the session caches it per
    // node class): capacity, GPU models, MIG devices on a node whose MIG manager is done.
    const FilterResult alone = StaticPredicates().FilterStatic(spec, node);
    EXPECT_TRUE(alone.ok()) << where << ": bound to " << node.name
                            << ", which it fails: " << DescribeFilter(alone, spec);
    Status placed_ok = c->Place(b.task, b.node, b.gpus);
    ASSERT_TRUE(placed_ok.ok()) << where << ": " << placed_ok.message();
    placed[b.job]++;
  }
  // Nothing over capacity, whichever way it got there.
  for (const Node& node : c->nodes()) {
    const Milli pods = node.allocatable.Get(kPods);
    for (const auto& e : node.used.entries()) {
      if (e.id == kPods && pods == 0) continue;  // no pod limit on this node
      EXPECT_LE(e.amount, node.allocatable.Get(e.id))
          << where << ": node " << node.name << " uses " << node.used.ToString() << " of "
          << node.allocatable.ToString();
    }
    if (pods > 0) {
      EXPECT_LE(node.task_count * kMilliPerUnit, pods) << where << ": " << node.name;
    }
    for (const GpuDevice& g : node.gpus) {
      EXPECT_LE(g.used_milli, kGpuMilliWhole) << where << ": " << node.name;
      // Devices of unknown memory (0) are not sized by memory: a memory request takes all
      // of the device's share instead.
      if (g.memory_mib > 0) {
        EXPECT_LE(g.used_memory_mib, g.memory_mib) << where << ": " << node.name;
      }
    }
  }
  for (const auto& [job, n] : placed) {
    EXPECT_GE(c->job(job).running, c->job(job).min_member)
        << where << ": job " << c->job(job).name << " got " << n << " binds, "
        << c->job(job).running << " running of minMember " << c->job(job).min_member;
  }
  for (QueueId q = 0; q < c->queues().size(); ++q) {
    const Queue& queue = c->queue(q);
    if (before.queue(q).allocated.FitsInNamed(queue.capability)) {
      EXPECT_TRUE(queue.allocated.FitsInNamed(queue.capability))
          << where << ": queue " << queue.name << " has " << queue.allocated.ToString()
          << " past its capability " << queue.capability.ToString();
    }
  }
  // Every job still waiting says why.
  std::map<JobId, const PendingJob*> pending;
  for (const PendingJob& p : d.pending) pending[p.job] = &p;
  for (JobId j : c->jobs_with_pending()) {
    ASSERT_TRUE(pending.count(j)) << where << ": job " << c->job(j).name << " is not reported";
    EXPECT_FALSE(pending[j]->reason.empty()) << where << ": job " << c->job(j).name;
    EXPECT_EQ(pending[j]->pending_tasks, c->job(j).pending) << where;
  }
}

void RunSeed(uint64_t seed) {
  const std::string where = "seed " + std::to_string(seed);
  SCOPED_TRACE(where + " (rerun with GANTRY_PROPERTY_SEED=" + std::to_string(seed) + ")");
  Generator gen(seed);
  ClusterState c;
  gen.MakeCluster(&c);
  gen.AddJobs(&c, gen.Between(1, 12));
  const SchedulerConfig config = gen.MakeConfig();
  ASSERT_TRUE(ValidateSchedulerConfig(config).ok());
  WorkloadProfile profile;
  for (const TaskSpec& spec : c.specs())
    profile.types.push_back(TaskType{spec.requests, spec.gpu, 1});
  profile.total = static_cast<int64_t>(profile.types.size());
  c.SetWorkloadProfile(profile);
  NodeTableCache cache;
  for (int round = 0; round < 4; ++round) {
    const std::string at = where + " round " + std::to_string(round);
    const SessionOptions options{round * 10, seed + static_cast<uint64_t>(round)};
    Decisions first, second, cached;
    {
      Snapshot snapshot(c);
      first = Session(snapshot, MustCompile(config), options).Run();
    }
    {
      Snapshot snapshot(c);
      second = Session(snapshot, MustCompile(config), options).Run();
    }
    {
      Snapshot snapshot(c, &cache);
      cached = Session(snapshot, MustCompile(config), options).Run();
    }
    ASSERT_EQ(Text(first), Text(second)) << at << ": two runs differ";
    ASSERT_EQ(Text(first), Text(cached)) << at << ": the node-table cache changed decisions";
    CheckAndApply(first, &c, at);
    if (::testing::Test::HasFailure()) return;
    // The world moves on: some tasks end, a node may leave, new jobs arrive.
    for (TaskId t = 0; t < c.tasks().size(); ++t) {
      if (c.task(t).state == TaskState::kRunning && gen.OneIn(3)) c.Release(t);
    }
    if (gen.OneIn(4) && !c.nodes().empty()) {
      c.RemoveNode(static_cast<NodeId>(gen.Between(0, static_cast<int64_t>(c.nodes().size()) - 1)));
    }
    if (gen.OneIn(3)) gen.AddNode(&c);
    gen.AddJobs(&c, gen.Between(0, 5));
  }
}

TEST(EnginePropertyTest, RandomClustersAndWorkloads) {
  ForEachSeed("GANTRY_PROPERTY_SEED", 1500, 300, [](uint64_t seed) { RunSeed(seed); });
}

}  // namespace
}  // namespace gantry

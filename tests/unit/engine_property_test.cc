// A property test of the engine: random clusters and workloads (seeded) through rounds of
// sessions, checking after each what must hold whatever the input:
//   - no node over its allocatable on any resource, no device over its share or memory;
//   - every bind respects the node's static rules (selector, affinity, taints, cordon);
//   - no partial gang: a job that gets binds has minMember running or placed;
//   - no queue pushed past its capability;
//   - the same decisions on a second run, and with the node-table cache as without;
//   - every job left with pending tasks is pending with a reason.
// A failure prints its seed; rerun one with GANTRY_PROPERTY_SEED=N.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/random.h"
#include "engine/session.h"
#include "model/cluster.h"
#include "sim/policies.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr Milli kGi = Milli{1024} * 1024 * 1024 * kMilliPerUnit;

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  int64_t Between(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(rng_.Uniform(static_cast<uint64_t>(hi - lo + 1)));
  }
  bool OneIn(int64_t n) { return Between(1, n) == 1; }

  Node MakeNode(const std::string& name) {
    // Half the nodes are twins of the last one, but for their name and labels: nodes alike
    // share a shape class, and a label a spec reads must still tell them apart.
    if (last_node_ && OneIn(2)) {
      Node twin = *last_node_;
      twin.name = name;
      twin.labels.Set("zone", OneIn(2) ? "a" : "b");
      twin.labels.Set("kubernetes.io/hostname", name);
      return twin;
    }
    Node node = MakeNewNode(name);
    last_node_ = node;
    return node;
  }

  Node MakeNewNode(const std::string& name) {
    const GpuModelId models[] = {GpuModels().Intern("prop-A100"), GpuModels().Intern("prop-T4")};
    Node node;
    node.name = name;
    node.allocatable.Set(kCpu, Between(1, 64) * 1000);
    node.allocatable.Set(kMemory, Between(1, 512) * kGi);
    // A pod limit on most nodes (Kubernetes' always have one; scenario nodes may not).
    if (!OneIn(3)) node.allocatable.Set(kPods, Between(1, 6) * kMilliPerUnit);
    if (OneIn(4)) node.allocatable.Set(rdma_, Between(1, 4) * kMilliPerUnit);
    node.labels.Set("zone", OneIn(2) ? "a" : "b");
    // As kubelet labels every node: no two alike, read only by specs pinned to a host.
    node.labels.Set("kubernetes.io/hostname", name);
    if (OneIn(5)) node.taints.push_back(Taint{"dedicated", "infer", TaintEffect::kNoSchedule});
    if (OneIn(8)) node.taints.push_back(Taint{"soft", "", TaintEffect::kPreferNoSchedule});
    node.unschedulable = OneIn(10);
    const int64_t gpus = OneIn(4) ? 0 : Between(1, 8);
    const GpuModelId model = models[Between(0, 1)];
    const int64_t memory = OneIn(2) ? 81920 : 16384;
    for (int64_t g = 0; g < gpus; ++g) {
      GpuDevice device;
      device.model = model;
      device.memory_mib = memory;
      device.nvlink_domain = static_cast<int32_t>(g / 4);
      node.gpus.push_back(device);
    }
    return node;
  }

  // A node that joins later (it may take the slot of one that left).
  void AddNode(ClusterState* c) {
    Must(c->AddNode(MakeNode("late" + std::to_string(next_node_++))));
  }

  void MakeCluster(ClusterState* c) {
    const int64_t nodes = Between(1, 16);
    for (int64_t i = 0; i < nodes; ++i) Must(c->AddNode(MakeNode("n" + std::to_string(i))));
    for (int64_t q = 0, n = Between(1, 3); q < n; ++q) {
      Queue queue;
      queue.name = "q" + std::to_string(q);
      queue.weight = Between(1, 4);
      if (OneIn(3)) queue.capability.Set(kGpu, Between(1, 16) * 1000);
      if (OneIn(4)) queue.capability.Set(kCpu, Between(4, 64) * 1000);
      if (OneIn(3)) queue.guarantee = Min(queue.capability, ResourceVector{{kGpu, 2000}});
      Must(c->AddQueue(std::move(queue)));
    }
  }

  TaskSpec MakeSpec() {
    TaskSpec spec;
    spec.role = "r";
    spec.requests.Set(kCpu, Between(0, 16) * 500);
    spec.requests.Set(kMemory, Between(0, 64) * kGi);
    // Pods from the API ask for one "pods" each; scenario tasks need not.
    if (OneIn(2)) spec.requests.Set(kPods, kMilliPerUnit);
    if (OneIn(8)) spec.requests.Set(rdma_, kMilliPerUnit);
    switch (Between(0, 3)) {
      case 0:
        break;  // CPU only
      case 1:
        spec.gpu.count = static_cast<int32_t>(Between(1, 4));
        break;
      case 2:
        spec.gpu.milli = static_cast<int32_t>(Between(1, 9) * 100);
        break;
      default:
        spec.gpu.memory_mib = Between(1, 20) * 1024;
        if (OneIn(2)) spec.gpu.milli = static_cast<int32_t>(Between(1, 9) * 100);
    }
    if (spec.gpu.wants_gpu() && OneIn(4)) spec.gpu.models = {GpuModels().Intern("prop-A100")};
    if (OneIn(5)) spec.node_selector.Set("zone", OneIn(2) ? "a" : "b");
    if (OneIn(8))
      spec.node_selector.Set("kubernetes.io/hostname", "n" + std::to_string(Between(0, 15)));
    if (OneIn(6)) {
      spec.affinity.terms.push_back(
          {SelectorRequirement{"zone", SelectorRequirement::Op::kNotIn, {"a"}}});
    }
    if (OneIn(3)) {
      Toleration t;
      t.key = "dedicated";
      t.op = Toleration::Op::kExists;
      spec.tolerations.push_back(t);
    }
    spec.priority = static_cast<int32_t>(Between(0, 2) * 100);
    return spec;
  }

  // Jobs of 1..6 tasks (one or two roles), gangs of minMember 1..tasks.
  void AddJobs(ClusterState* c, int64_t how_many) {
    for (int64_t k = 0; k < how_many; ++k) {
      Job job;
      job.name = "j" + std::to_string(next_job_++);
      job.queue = static_cast<QueueId>(Between(0, static_cast<int64_t>(c->queues().size()) - 1));
      job.priority = static_cast<int32_t>(Between(0, 2) * 100);
      job.creation = next_job_;
      std::vector<std::pair<SpecId, int64_t>> roles;
      int64_t tasks = 0;
      for (int64_t r = 0, n = Between(1, 2); r < n; ++r) {
        roles.emplace_back(c->AddSpec(MakeSpec()), Between(1, 3));
        tasks += roles.back().second;
      }
      job.min_member = static_cast<int32_t>(Between(1, tasks));
      JobId id = Must(c->AddJob(job));
      int64_t t = 0;
      for (const auto& [spec, count] : roles) {
        for (int64_t i = 0; i < count; ++i) {
          Must(c->AddTask(id, spec, job.name + "-" + std::to_string(t++)));
        }
      }
    }
  }

  SchedulerConfig MakeConfig() {
    static const char* kPolicies[] = {"default", "spread", "fgd", "gantry", "bestfit", "random"};
    const std::string policy = kPolicies[Between(0, 5)];
    SchedulerConfig config = SchedulerConfig::Default();
    if (policy == "spread") {
      config.plugins.back() = PluginConfig{"spread", {}};
    } else if (policy != "default") {
      // The simulator's policies, behind the full pipeline (queues and gangs), as a
      // replay runs them.
      SchedulerConfig scorer = Must(PolicyConfig(policy));
      config.plugins.pop_back();
      config.plugins.push_back(scorer.plugins.back());
      config.tie_break = scorer.tie_break;
    }
    if (OneIn(3)) config.nodes_to_score = static_cast<int32_t>(Between(0, 3));
    if (OneIn(4)) config.tie_break = SchedulerConfig::TieBreak::kShuffled;
    return config;
  }

  Rng& rng() { return rng_; }

 private:
  Rng rng_;
  ResourceId rdma_ = InternResource("rdma.example/hca");
  int64_t next_job_ = 0;
  int64_t next_node_ = 0;
  std::optional<Node> last_node_;
};

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
      EXPECT_LE(g.used_memory_mib, g.memory_mib) << where << ": " << node.name;
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
      first = Session(snapshot, config, options).Run();
    }
    {
      Snapshot snapshot(c);
      second = Session(snapshot, config, options).Run();
    }
    {
      Snapshot snapshot(c, &cache);
      cached = Session(snapshot, config, options).Run();
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
  if (const char* one = std::getenv("GANTRY_PROPERTY_SEED")) {
    RunSeed(std::strtoull(one, nullptr, 10));
    return;
  }
#ifdef __SANITIZE_ADDRESS__
  constexpr uint64_t kSeeds = 300;  // the sanitizer build runs about 50 times slower
#else
  constexpr uint64_t kSeeds = 1500;
#endif
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    RunSeed(seed);
    if (HasFailure()) break;  // one seed's failures are enough to read
  }
}

}  // namespace
}  // namespace gantry

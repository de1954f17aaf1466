// Random clusters, workloads and configurations for property tests, from a seed.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/config.h"
#include "engine/random.h"
#include "model/cluster.h"
#include "sim/policies.h"
#include "tests/unit/test_util.h"

namespace gantry {

class Generator {
 public:
  static constexpr Milli kGiB = Milli{1024} * 1024 * 1024 * kMilliPerUnit;

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
      // What else a twin may differ in: its MIG manager's state (a node being re-cut takes no
      // MIG pod, issue 27), NUMA policy, cached datasets, topology.
      if (twin.labels.Find(std::string(kMigStrategyLabel)) != nullptr && OneIn(2))
        SetMigState(twin);
      if (OneIn(4)) twin.numa = NodeNuma{};
      if (OneIn(3)) twin.cached_datasets = {OneIn(2) ? "ns/a" : "ns/b"};
      if (OneIn(3)) twin.labels.Set("topology.gantry.dev/rack", OneIn(2) ? "r0" : "r1");
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
    node.allocatable.Set(kMemory, Between(1, 512) * kGiB);
    // A pod limit on most nodes (Kubernetes' always have one; scenario nodes may not).
    if (!OneIn(3)) node.allocatable.Set(kPods, Between(1, 6) * kMilliPerUnit);
    if (OneIn(4)) node.allocatable.Set(rdma_, Between(1, 4) * kMilliPerUnit);
    node.labels.Set("zone", OneIn(2) ? "a" : "b");
    // As kubelet labels every node: no two alike, read only by specs pinned to a host.
    node.labels.Set("kubernetes.io/hostname", name);
    if (OneIn(5)) node.taints.push_back(Taint{"dedicated", "infer", TaintEffect::kNoSchedule});
    if (OneIn(8)) node.taints.push_back(Taint{"soft", "", TaintEffect::kPreferNoSchedule});
    node.unschedulable = OneIn(10);
    if (OneIn(5)) {
      AddMig(node);
      return node;
    }
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
    if (gpus > 0 && gpus % 2 == 0 && OneIn(4)) {
      // Two NUMA zones, each with half the CPUs and GPUs.
      node.numa.policy = OneIn(2) ? NumaPolicy::kSingleNumaNode : NumaPolicy::kBestEffort;
      for (int32_t z = 0; z < 2; ++z) {
        NumaZone zone;
        zone.id = z;
        zone.allocatable.Set(kCpu, node.allocatable.Get(kCpu) / 2);
        zone.allocatable.Set(kGpu, gpus / 2 * kMilliPerUnit);
        node.numa.zones.push_back(zone);
      }
    }
    return node;
  }

  // Two A100-80GB GPUs cut into MIG devices (mixed strategy, 7 x 1g.10gb + 2 x 3g.40gb), or
  // 2..4 of one profile (single strategy), its MIG manager's state absent or any of its
  // values.
  void AddMig(Node& node) {
    const std::string product = "NVIDIA-A100-SXM4-80GB";
    if (OneIn(2)) {
      node.labels.Set(std::string(kMigStrategyLabel), "mixed");
      node.labels.Set("nvidia.com/gpu.product", product);
      node.allocatable.Set(mig_small_, 7 * kMilliPerUnit);
      node.allocatable.Set(mig_large_, 2 * kMilliPerUnit);
      node.gpus.assign(2, GpuDevice{.model = GpuModels().Intern(product), .memory_mib = 81920});
    } else {
      node.labels.Set(std::string(kMigStrategyLabel), "single");
      node.gpus.assign(static_cast<size_t>(Between(2, 4)),
                       GpuDevice{.model = GpuModels().Intern(product + "-MIG-1g.10gb")});
    }
    SetMigState(node);
  }

  void SetMigState(Node& node) {
    static const char* kStates[] = {"success", "pending", "failed"};
    const std::string key(kMigConfigStateLabel);
    if (OneIn(4)) {  // no state label at all
      std::vector<std::pair<std::string, std::string>> kept;
      for (const auto& pair : node.labels.pairs()) {
        if (pair.first != key) kept.push_back(pair);
      }
      node.labels = Labels(std::move(kept));
    } else {
      node.labels.Set(key, kStates[Between(0, 2)]);
    }
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
    spec.requests.Set(kMemory, Between(0, 64) * kGiB);
    // Pods from the API ask for one "pods" each; scenario tasks need not.
    if (OneIn(2)) spec.requests.Set(kPods, kMilliPerUnit);
    if (OneIn(8)) spec.requests.Set(rdma_, kMilliPerUnit);
    switch (Between(0, 4)) {
      case 0:
        break;  // CPU only
      case 4:
        spec.requests.Set(OneIn(2) ? mig_small_ : mig_large_, Between(1, 2) * kMilliPerUnit);
        break;
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
    spec.numa.guaranteed = OneIn(4);
    if (OneIn(4)) spec.datasets = {OneIn(2) ? "ns/a" : "ns/b"};
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
  ResourceId mig_small_ = InternResource("nvidia.com/mig-1g.10gb");
  ResourceId mig_large_ = InternResource("nvidia.com/mig-3g.40gb");
  int64_t next_job_ = 0;
  int64_t next_node_ = 0;
  std::optional<Node> last_node_;
};

// Runs `run(seed)` for seeds 1..`seeds` (`asan_seeds` in the sanitizer build, which runs
// about 50 times slower), stopping at the first seed that fails; or for the one seed the
// environment variable `env` names, to rerun a failure.
template <typename Fn>
void ForEachSeed(const char* env, uint64_t seeds, uint64_t asan_seeds, Fn run) {
  if (const char* one = std::getenv(env)) {
    run(std::strtoull(one, nullptr, 10));
    return;
  }
#ifdef __SANITIZE_ADDRESS__
  seeds = asan_seeds;
#else
  (void)asan_seeds;
#endif
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    run(seed);
    if (::testing::Test::HasFailure()) break;  // one seed's failures are enough to read
  }
}

}  // namespace gantry

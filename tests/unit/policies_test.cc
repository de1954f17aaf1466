#include "sim/policies.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/plugins/plugins.h"
#include "engine/registry.h"
#include "engine/session.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr Milli kGi = 1024LL * 1024 * 1024 * kMilliPerUnit;

GpuModelId Model() {
  return GpuModels().Intern("policy-G1");
}

TaskSpec WholeSpec(int32_t gpus, Milli cpu) {
  TaskSpec spec;
  spec.role = "pod";
  spec.requests.Set(kCpu, cpu);
  spec.gpu.count = gpus;
  return spec;
}

TaskSpec SharedSpec(int32_t milli, Milli cpu) {
  TaskSpec spec;
  spec.role = "pod";
  spec.requests.Set(kCpu, cpu);
  spec.gpu.milli = milli;
  return spec;
}

TaskSpec CpuSpec(Milli cpu) {
  TaskSpec spec;
  spec.role = "pod";
  spec.requests.Set(kCpu, cpu);
  return spec;
}

// A small cluster: GPU nodes, one queue, tasks already running, and tasks to place.
class TestCluster {
 public:
  TestCluster() {
    Queue q;
    q.name = "default";
    queue_ = Must(cluster_.AddQueue(std::move(q)));
  }

  NodeId AddNode(const std::string& name, int gpus, Milli cpu) {
    Node node;
    node.name = name;
    node.allocatable = ResourceVector{{kCpu, cpu}, {kMemory, 512 * kGi}};
    for (int i = 0; i < gpus; ++i) node.gpus.push_back(GpuDevice{Model(), 0, 0, 0, 0, 0});
    return Must(cluster_.AddNode(std::move(node)));
  }

  // A task of `spec` running on `node` with `devices`.
  void Occupy(NodeId node, const TaskSpec& spec, std::vector<int32_t> devices) {
    TaskId task = NewTask(spec);
    Status st = cluster_.Place(task, node, devices);
    ASSERT_TRUE(st.ok()) << st.message();
  }

  // A pending single-task job, placed in submission order.
  TaskId Submit(const TaskSpec& spec) { return NewTask(spec); }

  Decisions Run(const std::string& policy, uint64_t seed) const {
    SchedulerConfig config = Must(PolicyConfig(policy));
    Snapshot snapshot(cluster_);
    const Policy compiled = MustCompile(config);
    Session session(snapshot, compiled, SessionOptions{0, seed});
    return session.Run();
  }

  // Where one pending task goes: its bind, or a bind with node kNone.
  BindDecision PlaceOne(const std::string& policy, uint64_t seed = 1) const {
    Decisions d = Run(policy, seed);
    EXPECT_LE(d.binds.size(), 1u);
    return d.binds.empty() ? BindDecision{} : d.binds[0];
  }

  ClusterState& cluster() { return cluster_; }
  const std::string& name(NodeId n) const { return cluster_.node(n).name; }

 private:
  TaskId NewTask(const TaskSpec& spec) {
    Job job;
    job.name = "job-" + std::to_string(cluster_.jobs().size());
    job.queue = queue_;
    job.creation = static_cast<int64_t>(cluster_.jobs().size());
    JobId id = Must(cluster_.AddJob(std::move(job)));
    SpecId spec_id = cluster_.AddSpec(spec);
    return Must(cluster_.AddTask(id, spec_id, "task-" + std::to_string(id)));
  }

  ClusterState cluster_;
  QueueId queue_;
};

// A policy's plugin scoring on a session over `cluster`, as the session would.
class DirectScorer {
 public:
  DirectScorer(const ClusterState& cluster, const std::string& policy)
      : policy_(MustCompile(Must(PolicyConfig(policy)))),
        snapshot_(cluster),
        session_(snapshot_, policy_, SessionOptions{0, 1}),
        plugin_(Must(MakePlugin(PluginConfig{policy, {}}))) {
    plugin_->OnSessionOpen(session_);
    scorer_ = dynamic_cast<const NodeScorer*>(plugin_.get());
    chooser_ = dynamic_cast<const DeviceChooser*>(plugin_.get());
  }
  int64_t Score(const TaskSpec& spec, NodeId node, const GpuChoice& choice) const {
    return scorer_->ScoreNode(session_, spec, node, choice);
  }
  // The score of the devices the scorer itself chooses, as the search takes it: the one
  // ChooseDevices gave, which must be what ScoreNode says of that choice.
  // REQUIRES: the scorer chooses devices on this node.
  int64_t ScoreOwnChoice(const TaskSpec& spec, NodeId node) const {
    GpuChoice choice;
    int64_t chosen_score = -1;
    EXPECT_NE(chooser_, nullptr);
    if (chooser_ == nullptr) return -1;
    EXPECT_TRUE(chooser_->ChooseDevices(session_, spec, node, &choice, &chosen_score));
    const int64_t scored = scorer_->ScoreNode(session_, spec, node, choice);
    if (chosen_score >= 0) {
      EXPECT_EQ(chosen_score, scored) << "ChooseDevices and ScoreNode disagree";
    }
    return chosen_score >= 0 ? chosen_score : scored;
  }
  bool Choose(const TaskSpec& spec, NodeId node, GpuChoice* out) const {
    int64_t score = -1;
    return chooser_ != nullptr && chooser_->ChooseDevices(session_, spec, node, out, &score);
  }
  const NodeScorer* scorer() const { return scorer_; }

 private:
  Policy policy_;
  Snapshot snapshot_;
  Session session_;
  std::unique_ptr<Plugin> plugin_;
  const NodeScorer* scorer_ = nullptr;
  const DeviceChooser* chooser_ = nullptr;  // null for scorers that do not choose devices
};

GpuChoice Whole(std::vector<int32_t> devices) {
  GpuChoice c;
  c.devices = std::move(devices);
  c.milli_each = kGpuMilliWhole;
  return c;
}

// Largest node 64 cores and 4 GPUs (C = 64000, Gm = 4000):
//   idle:  64 cores, 4 GPUs, idle
//   used:  64 cores, 4 GPUs, 32 cores and GPUs 0, 1 in use
//   small: 48 cores, 2 GPUs, idle
struct ThreeNodes {
  TestCluster c;
  NodeId idle, used, small;
  ThreeNodes() {
    idle = c.AddNode("idle", 4, 64000);
    used = c.AddNode("used", 4, 64000);
    small = c.AddNode("small", 2, 48000);
    c.Occupy(used, WholeSpec(2, 32000), {0, 1});
  }
};

// ---------------------------------------------------------------- PolicyConfig

TEST(PolicyConfigTest, EachPolicyScoresEveryNodeWithShuffledTies) {
  for (std::string_view policy : KnownPolicies()) {
    SchedulerConfig config = Must(PolicyConfig(policy));
    EXPECT_EQ(config.actions, std::vector<std::string>{"allocate"}) << policy;
    EXPECT_EQ(config.nodes_to_score, 0) << policy;
    EXPECT_EQ(config.tie_break, SchedulerConfig::TieBreak::kShuffled) << policy;
    ASSERT_EQ(config.plugins.size(), 2u) << policy;
    EXPECT_EQ(config.plugins[0].name, "predicates");
    EXPECT_EQ(config.plugins[1].name, policy);
  }
  EXPECT_EQ(KnownPolicies().size(), 7u);
}

TEST(PolicyConfigTest, UnknownPolicyErrorListsTheKnownOnes) {
  auto config = PolicyConfig("nope");
  ASSERT_FALSE(config.ok());
  const std::string& message = config.status().message();
  EXPECT_NE(message.find("\"nope\""), std::string::npos) << message;
  for (const char* name :
       {"random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd", "gantry"}) {
    EXPECT_NE(message.find(name), std::string::npos) << name << " missing from: " << message;
  }
  EXPECT_FALSE(PolicyConfig("").ok());
  EXPECT_FALSE(PolicyConfig("FGD").ok());
}

TEST(PolicyConfigTest, ReplayConfigIsTheDefaultPipelineWithThePolicyInPlaceOfBinpack) {
  const SchedulerConfig defaults = SchedulerConfig::Default();
  for (std::string_view policy : KnownPolicies()) {
    SchedulerConfig config = Must(ReplayPolicyConfig(policy, 37));
    EXPECT_EQ(config.actions, defaults.actions) << policy;
    EXPECT_EQ(config.nodes_to_score, 37) << policy;
    EXPECT_EQ(config.tie_break, SchedulerConfig::TieBreak::kShuffled) << policy;
    ASSERT_EQ(config.plugins.size(), defaults.plugins.size()) << policy;
    for (size_t i = 0; i < defaults.plugins.size(); ++i) {
      const std::string want =
          defaults.plugins[i].name == "binpack" ? std::string(policy) : defaults.plugins[i].name;
      EXPECT_EQ(config.plugins[i].name, want) << policy << " plugin " << i;
    }
  }
  EXPECT_EQ(Must(ReplayPolicyConfig("fgd", 0)).nodes_to_score, 0);
  auto unknown = ReplayPolicyConfig("nope", 100);
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(Contains(unknown.status().message(), "unknown policy \"nope\""));
}

// ---------------------------------------------------------------- bestfit

TEST(BestFitTest, PicksTheNodeLeftWithLeastCpuAndGpu) {
  // 1 GPU, 8 cores. Raw int(100 (1 - (0.5 (c - 8000) / 64000 + 0.5 (G - 1000) / 4000))):
  //   idle:  1 - 0.5 (0.875 + 0.75) = 0.1875 -> 18
  //   used:  1 - 0.5 (0.375 + 0.25) = 0.6875 -> 68
  //   small: 1 - 0.5 (0.625 + 0.25) = 0.5625 -> 56
  // Normalized: 0, 100, 76. The used node's first free GPU is device 2.
  ThreeNodes t;
  t.c.Submit(WholeSpec(1, 8000));
  BindDecision b = t.c.PlaceOne("bestfit");
  EXPECT_EQ(b.node, t.used);
  EXPECT_EQ(b.gpus, std::vector<int32_t>{2});
}

TEST(BestFitTest, CpuOnlyTaskCountsFreeGpusToo) {
  // 4 cores, no GPU. Add "cpuhungry": 16 cores free of 64, all 4 GPUs free.
  //   idle:  1 - 0.5 (60/64 + 1) = 0.03125 -> 3
  //   used:  1 - 0.5 (28/64 + 0.5) = 0.53125 -> 53
  //   small: 1 - 0.5 (44/64 + 0.5) = 0.40625 -> 40
  //   cpuhungry: 1 - 0.5 (12/64 + 1) = 0.40625 -> 40
  // The node with least CPU free (cpuhungry) loses to "used", which has less GPU free.
  ThreeNodes t;
  NodeId hungry = t.c.AddNode("cpuhungry", 4, 64000);
  t.c.Occupy(hungry, CpuSpec(48000), {});
  t.c.Submit(CpuSpec(4000));
  BindDecision b = t.c.PlaceOne("bestfit");
  EXPECT_EQ(b.node, t.used);
  EXPECT_TRUE(b.gpus.empty());
}

TEST(BestFitTest, NormalizesMinMaxInIntegers) {
  auto plugin = Must(MakePlugin(PluginConfig{"bestfit", {}}));
  auto* scorer = dynamic_cast<const NodeScorer*>(plugin.get());
  ASSERT_NE(scorer, nullptr);
  EXPECT_TRUE(scorer->normalizes());
  struct Case {
    std::vector<int64_t> raw, want;
  };
  const Case cases[] = {
      {{18, 68, 56}, {0, 100, 76}},  // (56 - 18) x 100 / 50 = 76
      {{3, 53, 40, 40}, {0, 100, 74, 74}},
      {{10, 11, 12}, {0, 50, 100}},
      {{0, 1, 99, 100}, {0, 1, 99, 100}},
      {{5, 5, 5}, {0, 0, 0}},  // all equal: all 0
      {{42}, {0}},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> scores = c.raw;
    scorer->NormalizeScores(scores);
    EXPECT_EQ(scores, c.want);
  }
}

// ---------------------------------------------------------------- dotprod

TEST(DotProdTest, FormulaValueOnEachNode) {
  // 16 cores and 1 GPU: int(100 (1 - (c/C x 0.25 + G/Gm x 0.25) / 2)).
  ThreeNodes t;
  DirectScorer d(t.c.cluster(), "dotprod");
  const TaskSpec spec = WholeSpec(1, 16000);
  EXPECT_EQ(d.Score(spec, t.idle, Whole({0})), 75);   // (0.25 + 0.25) / 2 = 0.25
  EXPECT_EQ(d.Score(spec, t.used, Whole({2})), 87);   // (0.125 + 0.125) / 2 = 0.125 -> 87.5
  EXPECT_EQ(d.Score(spec, t.small, Whole({0})), 84);  // (0.1875 + 0.125) / 2 -> 84.375
  // CPU-only, 16 cores: the GPU term is 0.
  const TaskSpec cpu = CpuSpec(16000);
  EXPECT_EQ(d.Score(cpu, t.idle, GpuChoice{}), 87);   // 0.25 / 2 -> 87.5
  EXPECT_EQ(d.Score(cpu, t.used, GpuChoice{}), 93);   // 0.125 / 2 -> 93.75
  EXPECT_EQ(d.Score(cpu, t.small, GpuChoice{}), 90);  // 0.1875 / 2 -> 90.625
}

TEST(DotProdTest, SessionPicksTheHighestScore) {
  ThreeNodes t;
  t.c.Submit(WholeSpec(1, 16000));
  BindDecision b = t.c.PlaceOne("dotprod");
  EXPECT_EQ(b.node, t.used);
  EXPECT_EQ(b.gpus, std::vector<int32_t>{2});
}

// ---------------------------------------------------------------- gpupacking

struct PackingCase {
  const char* what;
  std::vector<std::string> nodes;  // of: idle8, idle2, used, partial, partial900
  std::string want;
  std::vector<int32_t> want_gpus;
};

TEST(GpuPackingTest, PrefersSharedGpuThenUsedNodeThenSmallIdleNode) {
  // A shared task of 500 milli. Scores:
  //   partial    (4 GPUs, device 0 has 700 free): 100 - 70 / 10 = 93
  //   partial900 (4 GPUs, device 0 has 900 free): 100 - 90 / 10 = 91
  //   used       (4 GPUs, device 0 wholly used):  max(50 - 1, 33) = 49
  //   idle2      (2 idle GPUs):                    max(33 - 2, 2) = 31
  //   idle8      (8 idle GPUs):                    max(33 - 8, 8) = 25
  const PackingCase cases[] = {
      {"all", {"idle8", "idle2", "used", "partial", "partial900"}, "partial", {0}},
      {"fuller shared device first", {"partial900", "partial"}, "partial", {0}},
      {"a partly used GPU over a used node", {"used", "partial900"}, "partial900", {0}},
      {"a used node over idle ones", {"idle8", "idle2", "used"}, "used", {1}},
      {"the smaller idle node", {"idle8", "idle2"}, "idle2", {0}},
  };
  for (const PackingCase& c : cases) {
    TestCluster t;
    for (const std::string& n : c.nodes) {
      if (n == "idle8") t.AddNode(n, 8, 64000);
      if (n == "idle2") t.AddNode(n, 2, 64000);
      if (n == "used") t.Occupy(t.AddNode(n, 4, 64000), WholeSpec(1, 1000), {0});
      if (n == "partial") t.Occupy(t.AddNode(n, 4, 64000), SharedSpec(300, 1000), {0});
      if (n == "partial900") t.Occupy(t.AddNode(n, 4, 64000), SharedSpec(100, 1000), {0});
    }
    t.Submit(SharedSpec(500, 1000));
    for (uint64_t seed : {1, 2, 3}) {
      BindDecision b = t.PlaceOne("gpupacking", seed);
      ASSERT_NE(b.node, kNone) << c.what;
      EXPECT_EQ(t.name(b.node), c.want) << c.what << ", seed " << seed;
      EXPECT_EQ(b.gpus, c.want_gpus) << c.what;
    }
  }
}

TEST(GpuPackingTest, ScoresByFormula) {
  TestCluster t;
  NodeId idle8 = t.AddNode("idle8", 8, 64000);
  NodeId idle1 = t.AddNode("idle1", 1, 64000);
  NodeId mixed = t.AddNode("mixed", 4, 64000);
  t.Occupy(mixed, SharedSpec(400, 1000), {1});  // free: 1000, 600, 1000, 1000
  NodeId halves = t.AddNode("halves", 2, 64000);
  t.Occupy(halves, SharedSpec(500, 1000), {0});
  t.Occupy(halves, SharedSpec(450, 1000), {1});  // free: 500, 550
  DirectScorer d(t.cluster(), "gpupacking");
  EXPECT_EQ(d.Score(SharedSpec(500, 0), idle8, GpuChoice{}), 25);
  EXPECT_EQ(d.Score(SharedSpec(500, 0), idle1, GpuChoice{}), 32);  // max(33 - 1, 1)
  EXPECT_EQ(d.Score(SharedSpec(500, 0), mixed, GpuChoice{}), 94);  // device 1: 100 - 60 / 10
  EXPECT_EQ(d.Score(SharedSpec(700, 0), mixed, GpuChoice{}), 49);  // 600 too small: a free GPU
  EXPECT_EQ(d.Score(WholeSpec(2, 0), mixed, GpuChoice{}), 48);     // two free GPUs
  EXPECT_EQ(d.Score(WholeSpec(3, 0), mixed, GpuChoice{}), 47);
  EXPECT_EQ(d.Score(SharedSpec(500, 0), halves, GpuChoice{}), 95);  // device 0: 100 - 50 / 10
  EXPECT_EQ(d.Score(CpuSpec(1000), mixed, GpuChoice{}), 0);
}

// ---------------------------------------------------------------- gpuclustering

TEST(GpuClusteringTest, PrefersNodesRunningTheSameKindOfGpuTask) {
  // Four nodes of 4 GPUs (Gm = 4000): base + 25 (4000 - G) / 4000 in integers.
  //   shares: a shared task (500)             G = 3500
  //   wholes: a 1-GPU task                    G = 3000
  //   empty:  idle                            G = 4000
  //   both:   a shared task and a 1-GPU task  G = 2500
  TestCluster t;
  NodeId shares = t.AddNode("shares", 4, 64000);
  NodeId wholes = t.AddNode("wholes", 4, 64000);
  NodeId empty = t.AddNode("empty", 4, 64000);
  NodeId both = t.AddNode("both", 4, 64000);
  t.Occupy(shares, SharedSpec(500, 1000), {0});
  t.Occupy(wholes, WholeSpec(1, 1000), {0});
  t.Occupy(both, SharedSpec(500, 1000), {0});
  t.Occupy(both, WholeSpec(1, 1000), {1});

  DirectScorer d(t.cluster(), "gpuclustering");
  // Shared: 75 + 3, 0 + 6, 25 + 0, 50 + 9.
  EXPECT_EQ(d.Score(SharedSpec(300, 0), shares, GpuChoice{}), 78);
  EXPECT_EQ(d.Score(SharedSpec(300, 0), wholes, GpuChoice{}), 6);
  EXPECT_EQ(d.Score(SharedSpec(300, 0), empty, GpuChoice{}), 25);
  EXPECT_EQ(d.Score(SharedSpec(300, 0), both, GpuChoice{}), 59);
  // One whole GPU: 0 + 3, 75 + 6, 25, 50 + 9.
  EXPECT_EQ(d.Score(WholeSpec(1, 0), shares, GpuChoice{}), 3);
  EXPECT_EQ(d.Score(WholeSpec(1, 0), wholes, GpuChoice{}), 81);
  EXPECT_EQ(d.Score(WholeSpec(1, 0), both, GpuChoice{}), 59);
  // Two whole GPUs are another kind: 0 + 3, 0 + 6, 25, 0 + 9.
  EXPECT_EQ(d.Score(WholeSpec(2, 0), wholes, GpuChoice{}), 6);
  EXPECT_EQ(d.Score(WholeSpec(2, 0), both, GpuChoice{}), 9);
  EXPECT_EQ(d.Score(CpuSpec(1000), both, GpuChoice{}), 0);

  struct Case {
    TaskSpec spec;
    NodeId want;
  };
  for (const Case& c : {Case{SharedSpec(300, 1000), shares}, Case{WholeSpec(1, 1000), wholes},
                        Case{WholeSpec(2, 1000), empty}}) {
    TestCluster fresh = t;  // same running tasks, one pending task
    fresh.Submit(c.spec);
    BindDecision b = fresh.PlaceOne("gpuclustering");
    EXPECT_EQ(b.node, c.want) << c.spec.gpu.count << " x " << c.spec.gpu.milli;
  }
}

TEST(GpuClusteringTest, SeesPlacementsMadeEarlierInTheSession) {
  // Two idle nodes. A 1-GPU task goes to one (P); then a shared task avoids P, which runs
  // only another kind (0 + 6 < 25 on the idle node); then a 1-GPU task joins P (75 + 6).
  for (uint64_t seed = 0; seed < 8; ++seed) {
    TestCluster t;
    t.AddNode("x", 4, 64000);
    t.AddNode("y", 4, 64000);
    TaskId first = t.Submit(WholeSpec(1, 1000));
    TaskId shared = t.Submit(SharedSpec(500, 1000));
    TaskId third = t.Submit(WholeSpec(1, 1000));
    Decisions d = t.Run("gpuclustering", seed);
    ASSERT_EQ(d.binds.size(), 3u);
    std::map<TaskId, NodeId> where;
    for (const BindDecision& b : d.binds) where[b.task] = b.node;
    EXPECT_NE(where[shared], where[first]) << "seed " << seed;
    EXPECT_EQ(where[third], where[first]) << "seed " << seed;
  }
}

// ---------------------------------------------------------------- fgd

WorkloadProfile OneType(Milli cpu, int32_t milli) {
  WorkloadProfile p;
  TaskType t;
  t.requests.Set(kCpu, cpu);
  t.gpu.milli = milli;
  t.count = 1;
  p.types.push_back(t);
  p.total = 1;
  return p;
}

TEST(FgdPolicyTest, PutsASharedTaskOnTheDeviceWhereFragmentationGrowsLeast) {
  // Typical task: 500 milli. Devices free 600 and 1000; a 300 task:
  //   on device 0: free (300, 1000): F = 300 (device 0 too small), score int(100 s(-0.3)) = 42;
  //   on device 1: free (600, 700): both still fit, F = 0, score 50.
  // Tightest fit (device 0) would be wrong here.
  TestCluster t;
  NodeId n = t.AddNode("n", 2, 64000);
  t.Occupy(n, SharedSpec(400, 1000), {0});
  t.cluster().SetWorkloadProfile(OneType(1000, 500));
  t.Submit(SharedSpec(300, 1000));
  BindDecision b = t.PlaceOne("fgd");
  EXPECT_EQ(b.node, n);
  EXPECT_EQ(b.gpus, std::vector<int32_t>{1});
}

TEST(FgdPolicyTest, PicksTheNodeWhereFragmentationGrowsLeast) {
  // "partial": one GPU with 600 free; "idle": one GPU. A 300 task leaves 300 on partial
  // (too small for the typical 500: F 0 -> 300, score 42) and 700 on idle (F stays 0, 50).
  TestCluster t;
  NodeId partial = t.AddNode("partial", 1, 64000);
  NodeId idle = t.AddNode("idle", 1, 64000);
  t.Occupy(partial, SharedSpec(400, 1000), {0});
  t.cluster().SetWorkloadProfile(OneType(1000, 500));
  t.Submit(SharedSpec(300, 1000));
  for (uint64_t seed : {1, 2, 3, 4}) {
    BindDecision b = t.PlaceOne("fgd", seed);
    EXPECT_EQ(b.node, idle) << "seed " << seed;
  }
  (void)partial;
}

TEST(FgdPolicyTest, CountsCpuThatTypicalTasksNeed) {
  // Typical task: 500 milli and 8 cores. "tight": 10 cores, one idle GPU; "roomy": 64
  // cores, one idle GPU. A 300-milli, 4-core task on tight leaves 6 cores: the typical task
  // no longer fits, all 700 free milli become a fragment (score int(100 s(-0.7)) = 33);
  // on roomy nothing changes (50).
  TestCluster t;
  t.AddNode("tight", 1, 10000);
  NodeId roomy = t.AddNode("roomy", 1, 64000);
  t.cluster().SetWorkloadProfile(OneType(8000, 500));
  t.Submit(SharedSpec(300, 4000));
  for (uint64_t seed : {1, 2, 3, 4})
    EXPECT_EQ(t.PlaceOne("fgd", seed).node, roomy) << "seed " << seed;
}

TEST(FgdPolicyTest, ScoresAreTheSigmoidOfTheFragmentationDrop) {
  TestCluster t;
  NodeId partial = t.AddNode("partial", 1, 64000);
  NodeId idle = t.AddNode("idle", 1, 64000);
  NodeId tight = t.AddNode("tight", 1, 10000);
  t.Occupy(partial, SharedSpec(400, 1000), {0});
  WorkloadProfile p = OneType(8000, 500);
  t.cluster().SetWorkloadProfile(p);
  DirectScorer d(t.cluster(), "fgd");
  EXPECT_EQ(d.ScoreOwnChoice(SharedSpec(300, 4000), partial), 42);
  EXPECT_EQ(d.ScoreOwnChoice(SharedSpec(300, 4000), idle), 50);
  EXPECT_EQ(d.ScoreOwnChoice(SharedSpec(300, 4000), tight), 33);
  // Filling the partial GPU: F 0 -> 0 (no free GPU left), 50.
  EXPECT_EQ(d.ScoreOwnChoice(SharedSpec(600, 4000), partial), 50);
  // A whole GPU on the tight node: F 0 -> 0.
  EXPECT_EQ(d.ScoreOwnChoice(WholeSpec(1, 4000), tight), 50);
}

TEST(FgdPolicyTest, ScoresThePlacementItIsGivenNotTheLastOneItChose) {
  // FGD remembers the score of the devices it chose last, for the session's next question
  // (the score of that same choice). It must not answer that score for another task, or
  // for devices another scorer chose, on the same node.
  TestCluster t;
  NodeId node = t.AddNode("two", 2, 64000);
  t.Occupy(node, SharedSpec(400, 1000), {0});
  t.cluster().SetWorkloadProfile(OneType(8000, 500));
  DirectScorer fresh(t.cluster(), "fgd");
  const TaskSpec small = SharedSpec(300, 4000), whole = WholeSpec(1, 4000);
  GpuChoice on_partial;
  on_partial.devices = {0};
  on_partial.milli_each = 300;
  GpuChoice on_idle = on_partial;
  on_idle.devices = {1};
  const int64_t small_partial = fresh.Score(small, node, on_partial);
  const int64_t small_idle = fresh.Score(small, node, on_idle);
  const int64_t whole_idle = fresh.Score(whole, node, Whole({1}));
  ASSERT_NE(small_partial, small_idle);  // else the test could not tell them apart
  ASSERT_NE(whole_idle, small_partial);

  DirectScorer d(t.cluster(), "fgd");
  GpuChoice chosen;
  ASSERT_TRUE(d.Choose(small, node, &chosen));
  EXPECT_EQ(d.Score(small, node, chosen), chosen == on_partial ? small_partial : small_idle);
  // Another scorer chose the other device for the same task:
  const GpuChoice other = chosen == on_partial ? on_idle : on_partial;
  EXPECT_EQ(d.Score(small, node, other), other == on_partial ? small_partial : small_idle);
  // Another task on the same node, without a choice of its own:
  ASSERT_TRUE(d.Choose(small, node, &chosen));
  EXPECT_EQ(d.Score(whole, node, Whole({1})), whole_idle);
}

// ---------------------------------------------------------------- gantry

// A workload of one kind of task: one whole GPU and `cpu` milli-CPU.
WorkloadProfile OneWholeGpuType(Milli cpu) {
  return TypesProfile({WholeGpuType(cpu, 1, 1)});
}

TEST(GantryPolicyTest, GpuTaskGoesToANodeInUseBeforeAnIdleOneWhenFgdTies) {
  // Typical task: one whole GPU, 4 cores. "busy": 2 GPUs, GPU 0 taken; "idle": 2 GPUs.
  // A whole 1-GPU task: FGD's F is 0 before and after on both (whole GPUs stay whole), so
  // both score 50 and fgd alone would take either; gantry takes the node in use.
  TestCluster t;
  NodeId idle = t.AddNode("idle", 2, 64000);
  NodeId busy = t.AddNode("busy", 2, 64000);
  t.Occupy(busy, WholeSpec(1, 4000), {0});
  t.cluster().SetWorkloadProfile(OneWholeGpuType(4000));
  t.Submit(WholeSpec(1, 4000));
  for (uint64_t seed : {1, 2, 3, 4, 5, 6})
    EXPECT_EQ(t.PlaceOne("gantry", seed).node, busy) << "seed " << seed;
  (void)idle;
}

TEST(GantryPolicyTest, AmongNodesInUseTheCpuToGpuShapeDecides) {
  // Both nodes in use, 4 GPUs of which 2 free each. "cpu-rich": 60 of 64 cores free;
  // "cpu-poor": 8 of 64 free. Task: 1 GPU, 4 cores, i.e. (rc, rg) = (1/16, 1/4).
  // Free shares: rich (0.94, 0.5), poor (0.125, 0.5). Cosine with (1/16, 1/4):
  //   rich: (0.94*0.0625 + 0.5*0.25) / (1.0625 * 0.2577) = 0.1836 / 0.2738 = 0.67
  //   poor: (0.125*0.0625 + 0.5*0.25) / (0.5154 * 0.2577) = 0.1328 / 0.1328 = 1.00
  // FGD ties (typical whole-GPU task fits both before and after), so gantry takes "poor":
  // its CPU and GPUs run out together.
  TestCluster t;
  NodeId rich = t.AddNode("cpu-rich", 4, 64000);
  NodeId poor = t.AddNode("cpu-poor", 4, 64000);
  t.Occupy(rich, WholeSpec(2, 4000), {0, 1});
  t.Occupy(poor, WholeSpec(2, 56000), {0, 1});
  t.cluster().SetWorkloadProfile(OneWholeGpuType(4000));
  t.Submit(WholeSpec(1, 4000));
  for (uint64_t seed : {1, 2, 3, 4})
    EXPECT_EQ(t.PlaceOne("gantry", seed).node, poor) << "seed " << seed;
  (void)rich;
}

TEST(GantryPolicyTest, CpuOnlyTaskGoesWhereNoGpuIsLeftToServe) {
  // "full": both GPUs taken; "free": both GPUs free. A CPU-only task: FGD sees no change
  // on either (no typical task stops fitting), gantry takes the node whose GPUs are all
  // in use, keeping the free node's CPU for GPU tasks.
  TestCluster t;
  NodeId free_node = t.AddNode("free", 2, 64000);
  NodeId full = t.AddNode("full", 2, 64000);
  t.Occupy(full, WholeSpec(2, 8000), {0, 1});
  t.cluster().SetWorkloadProfile(OneWholeGpuType(4000));
  t.Submit(CpuSpec(4000));
  for (uint64_t seed : {1, 2, 3, 4})
    EXPECT_EQ(t.PlaceOne("gantry", seed).node, full) << "seed " << seed;
  (void)free_node;
}

TEST(GantryPolicyTest, WhenTasksWithoutGpusAreAQuarterOfTheWorkloadItOrdersLikeFgd) {
  // The set-up of AmongNodesInUseTheCpuToGpuShapeDecides, but a third of the typical tasks
  // ask for no GPU: gantry then drops its CPU-shape tie-breaks and, with both nodes in
  // use, takes whatever fgd takes, which varies with the seed.
  TestCluster t;
  NodeId rich = t.AddNode("cpu-rich", 4, 64000);
  NodeId poor = t.AddNode("cpu-poor", 4, 64000);
  t.Occupy(rich, WholeSpec(2, 4000), {0, 1});
  t.Occupy(poor, WholeSpec(2, 56000), {0, 1});
  t.cluster().SetWorkloadProfile(TypesProfile({WholeGpuType(4000, 1, 2), CpuOnlyType(2000, 1)}));
  t.Submit(WholeSpec(1, 4000));
  std::set<NodeId> chosen;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    NodeId node = t.PlaceOne("gantry", seed).node;
    EXPECT_EQ(node, t.PlaceOne("fgd", seed).node) << "seed " << seed;
    chosen.insert(node);
  }
  EXPECT_EQ(chosen, (std::set<NodeId>{rich, poor}));
}

TEST(GantryPolicyTest, OpensIdleNodesThatARareTaskNeedsLast) {
  // 19 idle 8-GPU nodes with 96 cores and one with 128 cores. The workload has a rare
  // 8-GPU task with 120 cores: only the 128-core node (1 of 20 = 5%) can host it. A
  // 1-GPU task with 32 cores ties under FGD on all of them (the typical 1-GPU task fits
  // everywhere before and after); the CPU-rich node is what its shape matches best, but
  // gantry keeps it whole for the rare task and opens a 96-core node.
  TestCluster t;
  NodeId rich = t.AddNode("rich", 8, 128000);
  for (int i = 0; i < 19; ++i) t.AddNode("plain-" + std::to_string(i), 8, 96000);
  t.cluster().SetWorkloadProfile(
      TypesProfile({WholeGpuType(32000, 1, 99), WholeGpuType(120000, 8, 1)}));
  const TaskSpec task = WholeSpec(1, 32000);
  DirectScorer gantry(t.cluster(), "gantry");
  DirectScorer fgd(t.cluster(), "fgd");
  for (NodeId plain = 1; plain < 20; ++plain) {
    EXPECT_EQ(fgd.Score(task, plain, Whole({0})), fgd.Score(task, rich, Whole({0})));
    EXPECT_GT(gantry.Score(task, plain, Whole({0})), gantry.Score(task, rich, Whole({0})));
  }
  t.Submit(task);
  for (uint64_t seed = 1; seed <= 8; ++seed)
    EXPECT_NE(t.PlaceOne("gantry", seed).node, rich) << "seed " << seed;
}

TEST(GantryPolicyTest, SmallIdleNodesOpenByShapeBigOnesInFgdOrder) {
  // The workload's largest task needs 4 GPUs. Idle nodes: two with 2 GPUs ("small-poor",
  // 8 cores; "small-rich", 64 cores) and two with 4 GPUs ("big-poor" 16 cores, "big-rich"
  // 128 cores). A 1-GPU task with 2 cores: (rc, rg) on small-poor (0.25, 0.5), cosine with
  // (1, 1) 0.95; on small-rich (0.03, 0.5), 0.75. Among the small nodes the shape decides;
  // the big ones are left in FGD's order: they score alike whatever their CPU.
  TestCluster t;
  NodeId small_poor = t.AddNode("small-poor", 2, 8000);
  NodeId small_rich = t.AddNode("small-rich", 2, 64000);
  NodeId big_poor = t.AddNode("big-poor", 4, 16000);
  NodeId big_rich = t.AddNode("big-rich", 4, 128000);
  t.cluster().SetWorkloadProfile(
      TypesProfile({WholeGpuType(2000, 1, 9), WholeGpuType(8000, 4, 1)}));
  const TaskSpec task = WholeSpec(1, 2000);
  DirectScorer gantry(t.cluster(), "gantry");
  EXPECT_GT(gantry.Score(task, small_poor, Whole({0})), gantry.Score(task, small_rich, Whole({0})));
  EXPECT_EQ(gantry.Score(task, big_poor, Whole({0})), gantry.Score(task, big_rich, Whole({0})));
}

TEST(GantryPolicyTest, WhenCpuIsAMainDemandItLooksAheadToCpuRunningOut) {
  // A third of the tasks need no GPU (so the CPU rules are off). Typical GPU task: 1 GPU,
  // 12 cores. Idle 4-GPU nodes "tight" (26 cores) and "roomy" (64 cores); the task: 1 GPU,
  // 2 cores. FGD's one-task view sees the same change on both (the typical task fits
  // before and after; one GPU fewer for the CPU-only tasks), so fgd takes either.
  // The look-ahead: filled with typical tasks, "tight" runs 2 (24 cores) and strands 2
  // GPUs; after the task it has 3 GPUs and 24 cores: 2 tasks, 1 GPU stranded: 1000 milli
  // less. "roomy" strands none before or after. Gantry takes "tight".
  TestCluster t;
  NodeId tight = t.AddNode("tight", 4, 26000);
  NodeId roomy = t.AddNode("roomy", 4, 64000);
  t.cluster().SetWorkloadProfile(TypesProfile({WholeGpuType(12000, 1, 2), CpuOnlyType(2000, 1)}));
  t.Submit(WholeSpec(1, 2000));
  std::set<NodeId> fgd_chose;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    EXPECT_EQ(t.PlaceOne("gantry", seed).node, tight) << "seed " << seed;
    fgd_chose.insert(t.PlaceOne("fgd", seed).node);
  }
  EXPECT_EQ(fgd_chose, (std::set<NodeId>{tight, roomy}));
}

// ---------------------------------------------------------------- random

TEST(RandomPolicyTest, SpreadsOverFeasibleNodesOnly) {
  TestCluster t;
  NodeId a = t.AddNode("a", 1, 64000);
  NodeId b = t.AddNode("b", 2, 64000);
  NodeId c = t.AddNode("c", 4, 64000);
  NodeId starved = t.AddNode("starved", 4, 2000);  // too little CPU
  NodeId cpu_only = t.AddNode("cpu", 0, 64000);
  NodeId full = t.AddNode("full", 1, 64000);
  t.Occupy(full, WholeSpec(1, 1000), {0});
  t.Submit(WholeSpec(1, 4000));
  std::map<NodeId, int> count;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    BindDecision bind = t.PlaceOne("random", seed);
    ASSERT_NE(bind.node, kNone);
    count[bind.node]++;
  }
  EXPECT_EQ(count[starved], 0);
  EXPECT_EQ(count[cpu_only], 0);
  EXPECT_EQ(count[full], 0);
  // Uniform over a, b, c: 100 each expected; 50 is over 5 standard deviations away.
  for (NodeId n : {a, b, c}) EXPECT_GT(count[n], 50) << t.name(n);
}

TEST(RandomPolicyTest, PicksARandomDeviceWithRoom) {
  // Devices free: 0, 200, 1000, 600. A 500 task fits on devices 2 and 3 only.
  TestCluster t;
  NodeId n = t.AddNode("n", 4, 64000);
  t.Occupy(n, WholeSpec(1, 1000), {0});
  t.Occupy(n, SharedSpec(800, 1000), {1});
  t.Occupy(n, SharedSpec(400, 1000), {3});
  t.Submit(SharedSpec(500, 1000));
  std::map<int32_t, int> count;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    BindDecision bind = t.PlaceOne("random", seed);
    ASSERT_EQ(bind.gpus.size(), 1u);
    count[bind.gpus[0]]++;
  }
  EXPECT_EQ(count[0], 0);
  EXPECT_EQ(count[1], 0);
  EXPECT_GT(count[2], 0);
  EXPECT_GT(count[3], 0);
}

// ---------------------------------------------------------------- tie-breaking

TEST(ShuffledTieBreakTest, DeterministicPerSeedAndVariesAcrossSeeds) {
  // Eight identical idle nodes: every node ties for a 1-GPU task.
  TestCluster t;
  for (int i = 0; i < 8; ++i) t.AddNode("n" + std::to_string(i), 2, 64000);
  t.Submit(WholeSpec(1, 1000));
  std::set<NodeId> chosen;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    NodeId first = t.PlaceOne("gpupacking", seed).node;
    ASSERT_NE(first, kNone);
    for (int again = 0; again < 3; ++again) EXPECT_EQ(t.PlaceOne("gpupacking", seed).node, first);
    chosen.insert(first);
  }
  EXPECT_GE(chosen.size(), 4u);
}

TEST(ShuffledTieBreakTest, TiesGoToTheSameNodeWithinASession) {
  // gpuclustering scores CPU-only tasks 0 everywhere: pure ties, so every one of them goes
  // to the first node of the session's shuffled order.
  for (uint64_t seed = 0; seed < 8; ++seed) {
    TestCluster t;
    for (int i = 0; i < 6; ++i) t.AddNode("n" + std::to_string(i), 1, 64000);
    for (int i = 0; i < 5; ++i) t.Submit(CpuSpec(1000));
    Decisions d = t.Run("gpuclustering", seed);
    ASSERT_EQ(d.binds.size(), 5u);
    for (const BindDecision& b : d.binds) EXPECT_EQ(b.node, d.binds[0].node) << "seed " << seed;
  }
}

}  // namespace
}  // namespace gantry

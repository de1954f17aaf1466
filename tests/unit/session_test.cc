#include "engine/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/registry.h"
#include "engine/statement.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

SchedulerConfig WithActions(std::vector<std::string> actions) {
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions = std::move(actions);
  return config;
}

Decisions RunOnce(const ClusterState& c, const SchedulerConfig& config = SchedulerConfig::Default(),
                  SessionOptions options = {}) {
  EXPECT_TRUE(ValidateSchedulerConfig(config).ok());
  return RunSession(c, config, options);
}

// "task@node[d,d]" for each bind, in decision order, space-separated.
std::string Binds(const ClusterState& c, const Decisions& d) {
  std::string out;
  for (const BindDecision& b : d.binds) {
    if (!out.empty()) out += ' ';
    out += c.task(b.task).name + "@" + c.node(b.node).name + "[";
    for (size_t i = 0; i < b.gpus.size(); ++i) out += (i ? "," : "") + std::to_string(b.gpus[i]);
    out += "]";
  }
  return out;
}

// Everything a session decided, as text.
std::string Describe(const ClusterState& c, const Decisions& d) {
  std::string out = Binds(c, d) + "\n";
  for (const BindDecision& b : d.binds) {
    if (b.job != c.task(b.task).job)
      out += "bind of " + c.task(b.task).name + " names the wrong job\n";
  }
  for (const EvictDecision& e : d.evictions)
    out += "evict " + c.task(e.task).name + ": " + e.reason + "\n";
  for (const PendingJob& p : d.pending) {
    out += "pending " + c.job(p.job).name + " (" + std::to_string(p.pending_tasks) +
           "): " + p.reason + "\n";
  }
  return out;
}

std::map<std::string, int> BindsPerQueue(const ClusterState& c, const Decisions& d) {
  std::map<std::string, int> out;
  for (const BindDecision& b : d.binds) out[c.queue(c.job(b.job).queue).name]++;
  return out;
}

const PendingJob* PendingOf(const Decisions& d, JobId job) {
  for (const PendingJob& p : d.pending) {
    if (p.job == job) return &p;
  }
  return nullptr;
}

// ---------------------------------------------------------------- determinism

// Nodes of several shapes, three queues, and jobs of every kind: gangs that fit and one
// that does not, shared GPUs, GPU memory requests, a taint and a selector, CPU tasks.
void BuildMixedCluster(ClusterState& c) {
  for (int i = 0; i < 4; ++i) AddGpuNode(c, "gpu-" + std::to_string(i), 8);
  {
    Node infer;
    infer.name = "infer-0";
    infer.allocatable = ResourceVector{{kCpu, 32000}, {kMemory, 128 * kGi}};
    infer.labels.Set("pool", "infer");
    infer.taints.push_back(Taint{"dedicated", "infer", TaintEffect::kNoSchedule});
    for (int i = 0; i < 4; ++i) {
      GpuDevice g;
      g.model = A100();
      g.memory_mib = 81920;
      infer.gpus.push_back(g);
    }
    Must(c.AddNode(std::move(infer)));
  }
  AddCpuNode(c, "cpu-0", 32000);
  AddCpuNode(c, "cpu-1", 32000);
  QueueId a = AddQueue(c, "a", 1);
  QueueId b = AddQueue(c, "b", 2);
  QueueId q = AddQueue(c, "c", 1, {}, ResourceVector{{kGpu, 8000}});
  Occupy(c, a, 1, {0, 1, 2});

  AddJob(c, "a-train", a, GpuSpec(8, 8000), 4, /*min_member=*/4, 0, 1);  // needs 4 free nodes
  AddJob(c, "a-small", a, GpuSpec(2, 2000), 3, 1, 0, 2);
  AddJob(c, "b-train", b, GpuSpec(4, 4000), 2, 2, 5, 3);
  TaskSpec infer = SharedSpec(500);
  infer.node_selector.Set("pool", "infer");
  infer.tolerations.push_back(
      Toleration{"dedicated", Toleration::Op::kEqual, "infer", true, TaintEffect::kNoSchedule});
  AddJob(c, "b-infer", b, infer, 6, 1, 0, 4);
  AddJob(c, "b-mem", b, SharedSpec(0, 20480), 3, 1, 0, 5);
  AddJob(c, "c-batch", q, GpuSpec(1), 10, 1, 0, 6);
  AddJob(c, "c-cpu", q, CpuSpec(4000), 4, 1, 0, 7);
  AddJob(c, "c-huge", q, GpuSpec(16), 1, 1, 0, 8);  // fits nowhere
}

TEST(SessionDeterminismTest, SameInputGivesIdenticalDecisions) {
  SchedulerConfig spread = DefaultWithout("binpack");
  spread.plugins.push_back(PluginConfig{"spread", {}});
  // No scorer: candidates are scanned from a seeded rotation instead of best-first.
  SchedulerConfig unscored = DefaultWithout("binpack");
  SchedulerConfig few = SchedulerConfig::Default();
  few.nodes_to_score = 1;
  struct {
    const char* name;
    SchedulerConfig config;
    SessionOptions options;
  } cases[] = {
      {"default", SchedulerConfig::Default(), {}},
      {"spread", spread, {}},
      {"unscored, seed 7", unscored, {0, 7}},
      {"unscored, seed 8", unscored, {0, 8}},
      {"nodesToScore 1", few, {}},
  };
  for (const auto& tc : cases) {
    ClusterState c;
    BuildMixedCluster(c);
    ClusterState twin;
    BuildMixedCluster(twin);
    const std::string first = Describe(c, RunOnce(c, tc.config, tc.options));
    const std::string second = Describe(c, RunOnce(c, tc.config, tc.options));
    const std::string other = Describe(twin, RunOnce(twin, tc.config, tc.options));
    EXPECT_EQ(first, second) << tc.name;
    EXPECT_EQ(first, other) << tc.name;
    // Not vacuous: something is placed and something stays pending.
    Decisions d = RunOnce(c, tc.config, tc.options);
    EXPECT_GE(d.binds.size(), 10u) << tc.name << "\n" << first;
    EXPECT_NE(PendingOf(d, c.FindJob("c-huge")), nullptr) << tc.name << "\n" << first;
    EXPECT_NE(PendingOf(d, c.FindJob("a-train")), nullptr) << tc.name << "\n" << first;
    // The engine never edits the cluster it read.
    EXPECT_EQ(c.node(1).used, (ResourceVector{{kGpu, 3000}})) << tc.name;
    EXPECT_EQ(c.node(0).task_count, 0) << tc.name;
  }
}

TEST(SessionDeterminismTest, DecisionsAreInternallyConsistent) {
  ClusterState c;
  BuildMixedCluster(c);
  Decisions d = RunOnce(c);
  std::map<TaskId, int> bound;
  for (const BindDecision& b : d.binds) {
    EXPECT_EQ(b.job, c.task(b.task).job);
    EXPECT_EQ(c.task(b.task).state, TaskState::kPending);
    EXPECT_EQ(++bound[b.task], 1) << c.task(b.task).name << " bound twice";
  }
  // Pending jobs come in job id order, each with a reason.
  for (size_t i = 1; i < d.pending.size(); ++i) EXPECT_LT(d.pending[i - 1].job, d.pending[i].job);
  for (const PendingJob& p : d.pending) EXPECT_FALSE(p.reason.empty()) << c.job(p.job).name;
  // Placing the binds in the model succeeds: no device or resource is overbooked.
  ClusterState replay;
  BuildMixedCluster(replay);
  for (const BindDecision& b : d.binds) {
    Status st = replay.Place(b.task, b.node, b.gpus);
    EXPECT_TRUE(st.ok()) << st.message();
  }
}

// ---------------------------------------------------------------- gangs

// Two nodes of four GPUs; queue "q".
class SessionGangTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddGpuNode(c_, "gpu-0", 4);
    AddGpuNode(c_, "gpu-1", 4);
    q_ = AddQueue(c_, "q");
    four_ = c_.AddSpec(GpuSpec(4, 1000));
  }
  ClusterState c_;
  QueueId q_ = 0;
  SpecId four_ = 0;  // four GPUs and one CPU
};

TEST_F(SessionGangTest, FailedGangLeavesNoTrace) {
  JobId a = AddJobWithSpec(c_, "a", q_, four_, 3, /*min_member=*/3);
  SchedulerConfig config = SchedulerConfig::Default();
  Snapshot snapshot(c_);
  const Policy policy = MustCompile(config);
  Session s(snapshot, policy);
  Decisions d = s.Run();
  EXPECT_TRUE(d.binds.empty()) << Describe(c_, d);
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].job, a);
  EXPECT_EQ(d.pending[0].pending_tasks, 3);
  EXPECT_EQ(d.pending[0].reason,
            "gang: 2 of minMember 3 tasks could be placed (1 short), so none were; task a-2: 0/2 "
            "nodes are available: 2 Insufficient free whole GPUs (nvidia.com/gpu).");
  // The working state is as it was before the session tried.
  for (NodeId n : {0u, 1u}) {
    EXPECT_EQ(s.free_node(n).whole_free, 4) << n;
    EXPECT_EQ(s.free_node(n).partial_count, 0) << n;
    EXPECT_EQ(s.free_node(n).tasks, 0) << n;
    EXPECT_EQ(s.free_node(n).gpu_used, 0) << n;
    EXPECT_EQ(s.free_vector(n), c_.node(n).allocatable) << n;
    for (int32_t free : s.free_gpus(n).free_milli) EXPECT_EQ(free, 1000) << n;
  }
  EXPECT_TRUE(s.queue(q_).allocated.empty());
  EXPECT_EQ(s.job(a).placed, 0);
  EXPECT_EQ(s.job(a).ready, 0);
  EXPECT_TRUE(s.job(a).allocated.empty());
  EXPECT_EQ(s.job(a).unplaced.size(), 3u);
  // And the cluster itself was never touched.
  EXPECT_TRUE(c_.node(0).used.empty());
  EXPECT_EQ(c_.job(a).pending, 3);
}

TEST_F(SessionGangTest, FailedGangDoesNotReduceCapacityForTheNextJob) {
  // "a" goes first (earlier) and cannot be placed whole; "b", with the same spec, fits
  // only if "a" gave back both nodes and its task's "fits nowhere" verdict.
  JobId a = AddJobWithSpec(c_, "a", q_, four_, 3, /*min_member=*/3, 0, /*creation=*/0);
  JobId b = AddJobWithSpec(c_, "b", q_, four_, 2, /*min_member=*/2, 0, /*creation=*/1);
  Decisions d = RunOnce(c_);
  EXPECT_EQ(Binds(c_, d), "b-0@gpu-0[0,1,2,3] b-1@gpu-1[0,1,2,3]");
  ASSERT_NE(PendingOf(d, a), nullptr);
  EXPECT_EQ(PendingOf(d, a)->pending_tasks, 3);
  EXPECT_TRUE(Contains(PendingOf(d, a)->reason, "gang: 2 of minMember 3 tasks could be placed"));
  EXPECT_EQ(PendingOf(d, b), nullptr);
}

TEST_F(SessionGangTest, GangCommitsWhenMinMemberIsMet) {
  JobId g = AddJobWithSpec(c_, "g", q_, four_, 3, /*min_member=*/2);
  Decisions d = RunOnce(c_);
  EXPECT_EQ(Binds(c_, d), "g-0@gpu-0[0,1,2,3] g-1@gpu-1[0,1,2,3]");
  ASSERT_NE(PendingOf(d, g), nullptr);
  EXPECT_EQ(PendingOf(d, g)->pending_tasks, 1);
  EXPECT_EQ(PendingOf(d, g)->reason,
            "placed 2 task(s); the rest wait: task g-2: 0/2 nodes are available: 2 Insufficient "
            "free whole GPUs (nvidia.com/gpu).");
}

TEST_F(SessionGangTest, RunningMembersCountTowardsTheGang) {
  // minMember 3, one member already running: two more complete the gang.
  JobId w = AddJob(c_, "w", q_, GpuSpec(2), 3, /*min_member=*/3);
  int32_t devices[] = {0, 1};
  ASSERT_TRUE(c_.Place(c_.job(w).tasks[0], 0, devices).ok());
  Decisions d = RunOnce(c_);
  // Tight packing: the half-used node first, then the empty one's first domain.
  EXPECT_EQ(Binds(c_, d), "w-1@gpu-0[2,3] w-2@gpu-1[0,1]");
  EXPECT_TRUE(d.pending.empty()) << Describe(c_, d);
}

// ---------------------------------------------------------------- statements

Placement MakePlacement(NodeId node, std::vector<int32_t> devices, int32_t milli_each,
                        int64_t memory_each) {
  Placement p;
  p.node = node;
  p.gpus.devices = std::move(devices);
  p.gpus.milli_each = milli_each;
  p.gpus.memory_each = memory_each;
  return p;
}

// The whole working state of a session, as text, so that two states compare exactly.
std::string WorkingState(const Session& s) {
  const ClusterState& c = s.cluster();
  std::string out;
  for (NodeId n = 0; n < c.nodes().size(); ++n) {
    const NodeWork& w = s.free_node(n);
    out += c.node(n).name + ": free " + s.free_vector(n).ToString() + ", whole " +
           std::to_string(w.whole_free) + ", partial " + std::to_string(w.partial_count) +
           ", tasks " + std::to_string(w.tasks) + ", used " +
           std::to_string(s.free_node(n).gpu_used) + ", devices";
    NodeGpus g = s.free_gpus(n);
    for (size_t i = 0; i < g.devices.size(); ++i) {
      out += " " + std::to_string(g.free_milli[i]) + "/" + std::to_string(g.free_memory_mib[i]);
    }
    out += "\n";
  }
  for (JobId j : s.pending_jobs()) {
    const JobWork& w = s.job(j);
    out += c.job(j).name + ": ready " + std::to_string(w.ready) + ", placed " +
           std::to_string(w.placed) + ", allocated " + w.allocated.ToString() + ", unplaced";
    for (TaskId t : w.unplaced) out += " " + c.task(t).name;
    out += "\n";
  }
  for (QueueId q = 0; q < c.queues().size(); ++q) {
    out += c.queue(q).name + ": allocated " + s.queue(q).allocated.ToString() + ", request " +
           s.queue(q).request.ToString() + "\n";
  }
  return out;
}

// gpu-0: 8 GPUs of 80000 MiB, 32 CPUs; cpu-0: 16 CPUs. Job "j" (minMember 3) has a
// two-GPU task t0, a shared task t1 (250 milli, 20000 MiB) and a CPU task t2.
class StatementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_ = AddGpuNode(c_, "gpu-0", 8, 32000, 80000, 256 * kGi);
    cpu_ = AddCpuNode(c_, "cpu-0", 16000);
    q_ = AddQueue(c_, "q");
    job_ = AddEmptyJob(c_, "j", q_, 3);
    TaskSpec shared = SharedSpec(250, 20000);
    shared.requests.Set(kCpu, 1000);
    TaskSpec cpu = CpuSpec(2000);
    cpu.requests.Set(kMemory, 1 * kGi);
    t0_ = Must(c_.AddTask(job_, c_.AddSpec(GpuSpec(2, 4000)), "t0"));
    t1_ = Must(c_.AddTask(job_, c_.AddSpec(shared), "t1"));
    t2_ = Must(c_.AddTask(job_, c_.AddSpec(cpu), "t2"));
    config_ = SchedulerConfig::Default();
    config_.actions.clear();  // the test drives the session itself
  }

  void AllocateAll(Statement& st) {
    st.Allocate(t0_, MakePlacement(gpu_, {0, 1}, 1000, 0));
    st.Allocate(t1_, MakePlacement(gpu_, {2}, 250, 20000));
    st.Allocate(t2_, MakePlacement(cpu_, {}, 0, 0));
  }

  ClusterState c_;
  NodeId gpu_ = 0, cpu_ = 0;
  QueueId q_ = 0;
  JobId job_ = 0;
  TaskId t0_ = 0, t1_ = 0, t2_ = 0;
  SchedulerConfig config_;
};

TEST_F(StatementTest, AllocateAppliesAtOnceAndDiscardRestoresExactly) {
  Snapshot snapshot(c_);
  const Policy policy = MustCompile(config_);
  Session s(snapshot, policy);
  const std::string before = WorkingState(s);
  Statement st = s.NewStatement();
  AllocateAll(st);
  EXPECT_EQ(st.size(), 3u);

  // gpu-0: 32000 - 4000 - 1000 CPU; devices 0 and 1 taken, device 2 a quarter used.
  const NodeWork& g = s.free_node(gpu_);
  EXPECT_EQ(s.free_now(gpu_, kCpu), 27000);
  EXPECT_EQ(s.free_now(gpu_, kMemory), 256 * kGi);
  EXPECT_EQ(g.whole_free, 5);
  EXPECT_EQ(g.partial_count, 1);
  EXPECT_EQ(g.tasks, 2);
  EXPECT_EQ(s.free_node(gpu_).gpu_used, 2250);
  NodeGpus devices = s.free_gpus(gpu_);
  EXPECT_EQ(std::vector<int32_t>(devices.free_milli.begin(), devices.free_milli.end()),
            (std::vector<int32_t>{0, 0, 750, 1000, 1000, 1000, 1000, 1000}));
  EXPECT_EQ(devices.free_memory_mib[0], 80000);  // whole GPUs take no memory of their own
  EXPECT_EQ(devices.free_memory_mib[2], 60000);
  EXPECT_EQ(s.free_now(cpu_, kCpu), 14000);
  EXPECT_EQ(s.free_now(cpu_, kMemory), 63 * kGi);
  EXPECT_EQ(s.free_node(cpu_).tasks, 1);
  const ResourceVector all{{kCpu, 7000}, {kMemory, 1 * kGi}, {kGpu, 2250}};
  EXPECT_EQ(s.job(job_).placed, 3);
  EXPECT_EQ(s.job(job_).ready, 3);
  EXPECT_EQ(s.job(job_).allocated, all);
  EXPECT_EQ(s.job(job_).unplaced.size(), 3u);  // only a commit takes them off
  EXPECT_EQ(s.queue(q_).allocated, all);
  EXPECT_NE(WorkingState(s), before);

  st.Discard();
  EXPECT_EQ(st.size(), 0u);
  EXPECT_EQ(WorkingState(s), before);
  EXPECT_EQ(s.free_node(gpu_).whole_free, 8);
  EXPECT_EQ(s.free_node(gpu_).partial_count, 0);
  EXPECT_EQ(s.free_node(gpu_).gpu_used, 0);
  EXPECT_EQ(s.free_now(gpu_, kCpu), 32000);
  EXPECT_TRUE(s.queue(q_).allocated.empty());
  EXPECT_EQ(s.job(job_).placed, 0);
  // Discarding twice (or destroying after a discard) changes nothing more.
  st.Discard();
  EXPECT_EQ(WorkingState(s), before);
}

TEST_F(StatementTest, DestroyingWithoutCommitDiscards) {
  Snapshot snapshot(c_);
  const Policy policy = MustCompile(config_);
  Session s(snapshot, policy);
  const std::string before = WorkingState(s);
  {
    Statement st = s.NewStatement();
    AllocateAll(st);
    EXPECT_NE(WorkingState(s), before);
  }
  EXPECT_EQ(WorkingState(s), before);
  Decisions d = s.Run();
  EXPECT_TRUE(d.binds.empty());
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].pending_tasks, 3);
}

TEST_F(StatementTest, CommitKeepsPlacementsAndRecordsBindsInOrder) {
  Snapshot snapshot(c_);
  const Policy policy = MustCompile(config_);
  Session s(snapshot, policy);
  {
    Statement st = s.NewStatement();
    AllocateAll(st);
    st.Commit();
    EXPECT_EQ(st.size(), 0u);
    EXPECT_TRUE(s.job(job_).unplaced.empty());
  }  // destroying a committed statement takes nothing back
  EXPECT_EQ(s.free_node(gpu_).whole_free, 5);
  EXPECT_EQ(s.free_node(gpu_).gpu_used, 2250);
  EXPECT_EQ(s.free_node(cpu_).tasks, 1);
  EXPECT_EQ(s.job(job_).placed, 3);
  Decisions d = s.Run();
  EXPECT_EQ(Binds(c_, d), "t0@gpu-0[0,1] t1@gpu-0[2] t2@cpu-0[]");
  for (const BindDecision& b : d.binds) EXPECT_EQ(b.job, job_);
  EXPECT_TRUE(d.pending.empty());
}

TEST_F(StatementTest, DiscardLeavesAnotherCommittedStatementAlone) {
  Snapshot snapshot(c_);
  const Policy policy = MustCompile(config_);
  Session s(snapshot, policy);
  Statement first = s.NewStatement();
  first.Allocate(t0_, MakePlacement(gpu_, {0, 1}, 1000, 0));
  first.Commit();
  const std::string committed = WorkingState(s);
  Statement second = s.NewStatement();
  second.Allocate(t1_, MakePlacement(gpu_, {2}, 250, 20000));
  second.Allocate(t2_, MakePlacement(cpu_, {}, 0, 0));
  second.Discard();
  EXPECT_EQ(WorkingState(s), committed);
  EXPECT_EQ(s.free_node(gpu_).whole_free, 6);
  EXPECT_EQ(s.free_node(gpu_).partial_count, 0);
  EXPECT_EQ(s.job(job_).placed, 1);
  EXPECT_EQ(s.job(job_).unplaced, (std::vector<TaskId>{t1_, t2_}));
  EXPECT_EQ(s.queue(q_).allocated, (ResourceVector{{kCpu, 4000}, {kGpu, 2000}}));
}

TEST(StatementUnschedulableTest, DiscardForgetsWhatFailedWhileItHeldRoom) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 2);
  QueueId q = AddQueue(c, "q");
  JobId x = AddJob(c, "x", q, GpuSpec(2), 2, /*min_member=*/2);
  const TaskId x0 = c.job(x).tasks[0];
  const TaskId x1 = c.job(x).tasks[1];
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions.clear();
  Snapshot snapshot(c);
  const Policy policy = MustCompile(config);
  Session s(snapshot, policy);
  Statement st = s.NewStatement();
  Placement p;
  std::string why;
  ASSERT_TRUE(s.FindPlacement(x0, &p, &why));
  EXPECT_EQ(p.node, 0u);
  EXPECT_EQ(p.gpus.devices, (std::vector<int32_t>{0, 1}));
  st.Allocate(x0, p);
  Placement q1;
  EXPECT_FALSE(s.FindPlacement(x1, &q1, &why));
  EXPECT_EQ(why, "0/1 nodes are available: 1 Insufficient free whole GPUs (nvidia.com/gpu).");
  st.Discard();
  // Same spec, room given back: it fits again.
  Placement q2;
  ASSERT_TRUE(s.FindPlacement(x1, &q2, &why)) << why;
  EXPECT_EQ(q2.node, 0u);
  EXPECT_EQ(q2.gpus.devices, (std::vector<int32_t>{0, 1}));
}

// ---------------------------------------------------------------- queues: proportion

struct ShareCase {
  const char* name;
  std::vector<int64_t> weights;
  std::vector<Milli> guarantee_gpus;   // per queue, milli-GPUs; empty: none
  std::vector<Milli> capability_gpus;  // per queue, milli-GPUs, 0: none; empty: none
  int nodes;                           // of four GPUs each
  std::vector<int> demand;             // one-GPU jobs per queue
  std::vector<int> placed;             // expected binds per queue
};

class ProportionShareTest : public ::testing::TestWithParam<ShareCase> {};

TEST_P(ProportionShareTest, PlacesByDeservedShare) {
  const ShareCase& p = GetParam();
  ClusterState c;
  for (int n = 0; n < p.nodes; ++n) AddGpuNode(c, "gpu-" + std::to_string(n), 4);
  std::vector<QueueId> queues;
  for (size_t q = 0; q < p.weights.size(); ++q) {
    ResourceVector guarantee, capability;
    if (!p.guarantee_gpus.empty() && p.guarantee_gpus[q] > 0)
      guarantee.Set(kGpu, p.guarantee_gpus[q]);
    if (!p.capability_gpus.empty() && p.capability_gpus[q] > 0)
      capability.Set(kGpu, p.capability_gpus[q]);
    queues.push_back(AddQueue(c, "q" + std::to_string(q), p.weights[q], guarantee, capability));
  }
  const SpecId one = c.AddSpec(GpuSpec(1));
  int most = *std::max_element(p.demand.begin(), p.demand.end());
  for (int i = 0; i < most; ++i) {
    for (size_t q = 0; q < queues.size(); ++q) {
      if (i >= p.demand[q]) continue;
      AddJobWithSpec(c, "q" + std::to_string(q) + "-j" + std::to_string(i), queues[q], one, 1, 1, 0,
                     /*creation=*/i * 10 + static_cast<int64_t>(q));
    }
  }
  Decisions d = RunOnce(c);
  std::map<std::string, int> per_queue = BindsPerQueue(c, d);
  for (size_t q = 0; q < queues.size(); ++q) {
    EXPECT_EQ(per_queue["q" + std::to_string(q)], p.placed[q]) << p.name << ": queue q" << q << "\n"
                                                               << Describe(c, d);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProportionShareTest,
    ::testing::Values(
        // 12 GPUs, weights 1:2:3, everyone wants all: deserved 2, 4, 6.
        ShareCase{"weights 1:2:3", {1, 2, 3}, {}, {}, 3, {12, 12, 12}, {2, 4, 6}},
        // 8 GPUs, weights 1:1:2: deserved 2, 2, 4.
        ShareCase{"weights 1:1:2", {1, 1, 2}, {}, {}, 2, {8, 8, 8}, {2, 2, 4}},
        // q0 wants only 1: the 12 GPUs water-fill to 1, 4.4 and 6.6. Queues take turns by
        // share (ties to the lower id): q1 reaches 4/4.4 and q2 6/6.6 together, then q1
        // (lower id) takes the last GPU: 1, 5, 6.
        ShareCase{
            "water-filling hands back unused share", {1, 2, 3}, {}, {}, 3, {1, 12, 12}, {1, 5, 6}},
        // Weights 1:3 over 8 GPUs: 2 and 6.
        ShareCase{"weights 1:3", {1, 3}, {}, {}, 2, {8, 8}, {2, 6}},
        // The same with a guarantee of 4 GPUs for q0: it gets its 4 first, then a quarter
        // of the other 4: 5, and q1 3.
        ShareCase{"guarantee lifts a queue", {1, 3}, {4000, 0}, {}, 2, {8, 8}, {5, 3}},
        // Equal weights over 8 GPUs: 4 and 4.
        ShareCase{"equal weights", {1, 1}, {}, {}, 2, {8, 8}, {4, 4}},
        // The same with a capability of 3 GPUs for q0: it deserves and gets 3, q1 the other 5.
        ShareCase{"capability caps a queue", {1, 1}, {}, {3000, 0}, 2, {8, 8}, {3, 5}},
        // Demand below the share: everyone gets what it asks.
        ShareCase{"no contention", {1, 5}, {}, {}, 2, {3, 2}, {3, 2}}),
    [](const ::testing::TestParamInfo<ShareCase>& info) {
      return "case" + std::to_string(info.index);
    });

// Five one-GPU jobs in a queue capped at three GPUs, on eight free GPUs.
class CapabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddGpuNode(c_, "gpu-0", 4);
    AddGpuNode(c_, "gpu-1", 4);
    q_ = AddQueue(c_, "q0", 1, {}, ResourceVector{{kGpu, 3000}});
    SpecId one = c_.AddSpec(GpuSpec(1));
    for (int i = 0; i < 5; ++i) {
      jobs_.push_back(AddJobWithSpec(c_, "j" + std::to_string(i), q_, one, 1, 1, 0, i));
    }
  }
  ClusterState c_;
  QueueId q_ = 0;
  std::vector<JobId> jobs_;
};

TEST_F(CapabilityTest, AdmissionStopsAtTheCapability) {
  Decisions d = RunOnce(c_);
  EXPECT_EQ(d.binds.size(), 3u) << Describe(c_, d);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(PendingOf(d, jobs_[i]), nullptr) << i;
  for (int i = 3; i < 5; ++i) {
    const PendingJob* p = PendingOf(d, jobs_[i]);
    ASSERT_NE(p, nullptr) << i;
    EXPECT_EQ(p->reason,
              "not admitted: queue q0 capability: 3 nvidia.com/gpu (allocated 0, admitted 3, this "
              "job needs 1)");
  }
}

TEST_F(CapabilityTest, AllocationNeverExceedsTheCapabilityEvenWithIdleGpus) {
  // Without the enqueue action every job is considered; backfill would lend idle GPUs,
  // but never past the capability.
  Decisions d = RunOnce(c_, WithActions({"allocate", "backfill"}));
  EXPECT_EQ(d.binds.size(), 3u) << Describe(c_, d);
  const PendingJob* p = PendingOf(d, jobs_[3]);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->reason,
            "queue q0 would exceed its capability of 3 nvidia.com/gpu (allocated 3, the "
            "task needs 1)");
  ASSERT_NE(PendingOf(d, jobs_[4]), nullptr);
  EXPECT_TRUE(Contains(PendingOf(d, jobs_[4])->reason, "would exceed its capability"));
}

struct ShareCapCase {
  const char* name;
  int32_t milli;
  int64_t memory_mib;
  std::vector<std::string> actions;
};

class CapabilityShareTest : public ::testing::TestWithParam<ShareCapCase> {};

// A queue capped at one GPU, three tasks that each take 600 milli of an 80000 MiB device
// (0.6 asked, or 48000 MiB = 600 milli): only one fits under the cap.
TEST_P(CapabilityShareTest, CountsTheShareATaskTakes) {
  const ShareCapCase& p = GetParam();
  ClusterState c;
  AddGpuNode(c, "gpu-0", 2, 64000, /*gpu_memory_mib=*/80000);
  QueueId q = AddQueue(c, "q0", 1, {}, ResourceVector{{kGpu, 1000}});
  SpecId spec = c.AddSpec(SharedSpec(p.milli, p.memory_mib));
  for (int i = 0; i < 3; ++i) AddJobWithSpec(c, "s" + std::to_string(i), q, spec, 1, 1, 0, i);
  Decisions d = RunOnce(c, WithActions(p.actions));
  EXPECT_EQ(Binds(c, d), "s0-0@gpu-0[0]") << p.name << "\n" << Describe(c, d);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CapabilityShareTest,
    ::testing::Values(
        ShareCapCase{"fraction, with enqueue", 600, 0, {"enqueue", "allocate", "backfill"}},
        ShareCapCase{"fraction, no enqueue", 600, 0, {"allocate", "backfill"}},
        ShareCapCase{"memory, with enqueue", 0, 48000, {"enqueue", "allocate", "backfill"}},
        ShareCapCase{"memory, no enqueue", 0, 48000, {"allocate", "backfill"}}),
    [](const ::testing::TestParamInfo<ShareCapCase>& info) {
      return "case" + std::to_string(info.index);
    });

// ---------------------------------------------------------------- job and task order

struct OrderCase {
  const char* name;
  SchedulerConfig config;
  std::string binds;
};

class DrfGpuOrderTest : public ::testing::TestWithParam<OrderCase> {};

// One node of four GPUs. Job a (earlier) runs two GPUs, job b runs one; each has one more
// one-GPU task pending and one GPU is free. b has the smaller dominant share (1/4 < 2/4).
TEST_P(DrfGpuOrderTest, LowerDominantShareFirst) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 4);
  QueueId q = AddQueue(c, "q");
  SpecId two = c.AddSpec(GpuSpec(2));
  SpecId one = c.AddSpec(GpuSpec(1));
  JobId a = AddEmptyJob(c, "a", q, 1, 0, /*creation=*/0);
  JobId b = AddEmptyJob(c, "b", q, 1, 0, /*creation=*/1);
  TaskId a0 = Must(c.AddTask(a, two, "a-0"));
  Must(c.AddTask(a, one, "a-1"));
  TaskId b0 = Must(c.AddTask(b, one, "b-0"));
  Must(c.AddTask(b, one, "b-1"));
  int32_t a_gpus[] = {0, 1};
  int32_t b_gpus[] = {2};
  ASSERT_TRUE(c.Place(a0, 0, a_gpus).ok());
  ASSERT_TRUE(c.Place(b0, 0, b_gpus).ok());
  Decisions d = RunOnce(c, GetParam().config);
  EXPECT_EQ(Binds(c, d), GetParam().binds) << GetParam().name << "\n" << Describe(c, d);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DrfGpuOrderTest,
    ::testing::Values(OrderCase{"drf", SchedulerConfig::Default(), "b-1@gpu-0[3]"},
                      OrderCase{"no drf: creation order", DefaultWithout("drf"), "a-1@gpu-0[3]"}),
    [](const ::testing::TestParamInfo<OrderCase>& info) {
      return "case" + std::to_string(info.index);
    });

class DrfDominantResourceTest : public ::testing::TestWithParam<OrderCase> {};

// One node of four GPUs and 10 CPUs. Job a (earlier) runs a 6-CPU task (share 0.6 of
// CPU, none of GPU); job b runs two GPUs (share 0.5). Each has a pending task of two
// GPUs and one CPU; only two GPUs are free. By dominant share b (0.5) goes before a (0.6),
// although a holds fewer GPUs.
TEST_P(DrfDominantResourceTest, DominantShareAcrossResources) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 4, /*cpu=*/10000);
  QueueId q = AddQueue(c, "q");
  SpecId cpu6 = c.AddSpec(CpuSpec(6000));
  SpecId two = c.AddSpec(GpuSpec(2));
  SpecId two_cpu = c.AddSpec(GpuSpec(2, 1000));
  JobId a = AddEmptyJob(c, "a", q, 1, 0, /*creation=*/0);
  JobId b = AddEmptyJob(c, "b", q, 1, 0, /*creation=*/1);
  TaskId a0 = Must(c.AddTask(a, cpu6, "a-0"));
  Must(c.AddTask(a, two_cpu, "a-1"));
  TaskId b0 = Must(c.AddTask(b, two, "b-0"));
  Must(c.AddTask(b, two_cpu, "b-1"));
  ASSERT_TRUE(c.Place(a0, 0, {}).ok());
  int32_t b_gpus[] = {0, 1};
  ASSERT_TRUE(c.Place(b0, 0, b_gpus).ok());
  Decisions d = RunOnce(c, GetParam().config);
  EXPECT_EQ(Binds(c, d), GetParam().binds) << GetParam().name << "\n" << Describe(c, d);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DrfDominantResourceTest,
    ::testing::Values(OrderCase{"drf", SchedulerConfig::Default(), "b-1@gpu-0[2,3]"},
                      OrderCase{"no drf: creation order", DefaultWithout("drf"), "a-1@gpu-0[2,3]"}),
    [](const ::testing::TestParamInfo<OrderCase>& info) {
      return "case" + std::to_string(info.index);
    });

class PriorityJobOrderTest : public ::testing::TestWithParam<OrderCase> {};

// One GPU free. "low" (priority 0) is older than "high" (priority 10).
TEST_P(PriorityJobOrderTest, HigherPriorityJobFirst) {
  ClusterState c;
  NodeId n = AddGpuNode(c, "gpu-0", 4);
  QueueId busy = AddQueue(c, "busy");
  QueueId q = AddQueue(c, "q");
  Occupy(c, busy, n, {0, 1, 2});
  AddJob(c, "low", q, GpuSpec(1), 1, 1, /*priority=*/0, /*creation=*/0);
  AddJob(c, "high", q, GpuSpec(1), 1, 1, /*priority=*/10, /*creation=*/1);
  Decisions d = RunOnce(c, GetParam().config);
  EXPECT_EQ(Binds(c, d), GetParam().binds) << GetParam().name << "\n" << Describe(c, d);
}

INSTANTIATE_TEST_SUITE_P(Cases, PriorityJobOrderTest,
                         ::testing::Values(OrderCase{"priority", SchedulerConfig::Default(),
                                                     "high-0@gpu-0[3]"},
                                           OrderCase{"no priority: creation order",
                                                     DefaultWithout("priority"), "low-0@gpu-0[3]"}),
                         [](const ::testing::TestParamInfo<OrderCase>& info) {
                           return "case" + std::to_string(info.index);
                         });

class PriorityTaskOrderTest : public ::testing::TestWithParam<OrderCase> {};

// One GPU free; one job with a low-priority task (added first) and a high-priority one.
TEST_P(PriorityTaskOrderTest, HigherPriorityTaskFirst) {
  ClusterState c;
  NodeId n = AddGpuNode(c, "gpu-0", 4);
  QueueId busy = AddQueue(c, "busy");
  QueueId q = AddQueue(c, "q");
  Occupy(c, busy, n, {0, 1, 2});
  JobId job = AddEmptyJob(c, "mixed", q);
  Must(c.AddTask(job, c.AddSpec(GpuSpec(1, 0, /*priority=*/0)), "mixed-low"));
  Must(c.AddTask(job, c.AddSpec(GpuSpec(1, 0, /*priority=*/5)), "mixed-high"));
  Decisions d = RunOnce(c, GetParam().config);
  EXPECT_EQ(Binds(c, d), GetParam().binds) << GetParam().name << "\n" << Describe(c, d);
  ASSERT_NE(PendingOf(d, job), nullptr);
  EXPECT_EQ(PendingOf(d, job)->pending_tasks, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PriorityTaskOrderTest,
    ::testing::Values(OrderCase{"priority", SchedulerConfig::Default(), "mixed-high@gpu-0[3]"},
                      OrderCase{"no priority: task order", DefaultWithout("priority"),
                                "mixed-low@gpu-0[3]"}),
    [](const ::testing::TestParamInfo<OrderCase>& info) {
      return "case" + std::to_string(info.index);
    });

// ---------------------------------------------------------------- why pending

struct ReasonCase {
  const char* name;
  std::function<void(ClusterState&)> build;  // adds nodes, queues and the job "j"
  std::string reason;
};

class PendingReasonTest : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(PendingReasonTest, CountsNodesByFailingPredicate) {
  ClusterState c;
  GetParam().build(c);
  Decisions d = RunOnce(c);
  const PendingJob* p = PendingOf(d, c.FindJob("j"));
  ASSERT_NE(p, nullptr) << Describe(c, d);
  EXPECT_EQ(p->reason, GetParam().reason) << GetParam().name;
  EXPECT_EQ(p->pending_tasks, 1);
  EXPECT_TRUE(d.binds.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PendingReasonTest,
    ::testing::Values(
        ReasonCase{"taint, cordon, too few GPUs",
                   [](ClusterState& c) {
                     Node tainted;
                     tainted.name = "gpu-0";
                     tainted.allocatable = ResourceVector{{kCpu, 64000}};
                     tainted.gpus.resize(8);
                     tainted.taints = {Taint{"dedicated", "infer", TaintEffect::kNoSchedule}};
                     Must(c.AddNode(std::move(tainted)));
                     Node cordoned;
                     cordoned.name = "gpu-1";
                     cordoned.allocatable = ResourceVector{{kCpu, 64000}};
                     cordoned.unschedulable = true;
                     cordoned.gpus.resize(8);
                     Must(c.AddNode(std::move(cordoned)));
                     AddGpuNode(c, "gpu-2", 2);
                     QueueId q = AddQueue(c, "q");
                     AddJob(c, "j", q, GpuSpec(4), 1);
                   },
                   "0/3 nodes are available: 1 Insufficient free whole GPUs "
                   "(nvidia.com/gpu), 1 node(s) had untolerated taint(s), 1 node(s) were "
                   "unschedulable."},
        ReasonCase{"cpu and node selector",
                   [](ClusterState& c) {
                     for (int i = 0; i < 4; ++i) {
                       AddCpuNode(c, "small-" + std::to_string(i), 2000, PoolLabel("a"));
                     }
                     AddCpuNode(c, "big", 8000, PoolLabel("b"));
                     QueueId q = AddQueue(c, "q");
                     TaskSpec spec = CpuSpec(4000);
                     spec.node_selector.Set("pool", "a");
                     AddJob(c, "j", q, spec, 1);
                   },
                   "0/5 nodes are available: 1 node(s) didn't match Pod's node "
                   "affinity/selector, 4 Insufficient cpu."},
        ReasonCase{"a taint the toleration does not cover; full node",
                   [](ClusterState& c) {
                     Node tainted;
                     tainted.name = "gpu-0";
                     tainted.allocatable = ResourceVector{{kCpu, 64000}};
                     tainted.gpus.resize(8);
                     tainted.taints = {Taint{"a", "1", TaintEffect::kNoSchedule},
                                       Taint{"b", "2", TaintEffect::kNoExecute}};
                     Must(c.AddNode(std::move(tainted)));
                     NodeId full = AddGpuNode(c, "gpu-1", 4);
                     QueueId busy = AddQueue(c, "busy");
                     Occupy(c, busy, full, {0, 1, 2, 3});
                     QueueId q = AddQueue(c, "q");
                     TaskSpec spec = GpuSpec(1);
                     spec.tolerations.push_back(Toleration{"a", Toleration::Op::kEqual, "1", true,
                                                           TaintEffect::kNoSchedule});
                     AddJob(c, "j", q, spec, 1);
                   },
                   "0/2 nodes are available: 1 Insufficient free whole GPUs "
                   "(nvidia.com/gpu), 1 node(s) had untolerated taint(s)."},
        ReasonCase{
            "shared GPU without room",
            [](ClusterState& c) {
              NodeId n = AddGpuNode(c, "gpu-0", 1);
              QueueId busy = AddQueue(c, "busy");
              JobId fill = AddJob(c, "fill", busy, SharedSpec(700), 1);
              int32_t device = 0;
              ASSERT_TRUE(
                  c.Place(c.job(fill).tasks[0], n, std::span<const int32_t>(&device, 1)).ok());
              QueueId q = AddQueue(c, "q");
              AddJob(c, "j", q, SharedSpec(500), 1);
            },
            "0/1 nodes are available: 1 node(s) had no single GPU with enough free "
            "share or memory."},
        ReasonCase{"GPU task on CPU nodes",
                   [](ClusterState& c) {
                     AddCpuNode(c, "cpu-0", 8000);
                     AddCpuNode(c, "cpu-1", 8000);
                     QueueId q = AddQueue(c, "q");
                     AddJob(c, "j", q, GpuSpec(1), 1);
                   },
                   "0/2 nodes are available: 2 node(s) had no GPUs."},
        // kube-scheduler's NodeResourcesFit names each resource a node is short of, and a
        // full pod count, each counted once for the node.
        ReasonCase{"short of cpu and memory; pod limit reached",
                   [](ClusterState& c) {
                     // Each pod asks for one of "pods", as the daemon's do.
                     for (Milli pods : {110, 1}) {
                       Node node;
                       node.name = "pods-" + std::to_string(pods);
                       node.allocatable = ResourceVector{
                           {kCpu, 1000}, {kMemory, 64 * kGi}, {kPods, pods * kMilliPerUnit}};
                       Must(c.AddNode(std::move(node)));
                     }
                     QueueId q = AddQueue(c, "q");
                     TaskSpec small = CpuSpec(100);
                     small.requests.Set(kPods, kMilliPerUnit);
                     JobId running = AddJob(c, "running", q, small, 1);
                     ASSERT_TRUE(c.Place(c.job(running).tasks[0], 1, {}).ok());
                     TaskSpec spec = CpuSpec(4000);
                     spec.requests.Set(kMemory, 100 * kGi);
                     spec.requests.Set(kPods, kMilliPerUnit);
                     AddJob(c, "j", q, spec, 1);
                   },
                   "0/2 nodes are available: 1 Too many pods, 2 Insufficient cpu, 2 "
                   "Insufficient memory."},
        // Sorted as kube-scheduler sorts them: as strings, count and all ("10" before "2");
        // a node selector and required node affinity are one reason, as they are one plugin.
        ReasonCase{"sorted as strings; selector and affinity are one reason",
                   [](ClusterState& c) {
                     for (int i = 0; i < 2; ++i) {
                       AddCpuNode(c, "small-" + std::to_string(i), 2000, PoolLabel("a"));
                     }
                     for (int i = 0; i < 8; ++i) {
                       AddCpuNode(c, "other-" + std::to_string(i), 8000, PoolLabel("b"));
                     }
                     Labels zone_b = PoolLabel("a");
                     zone_b.Set("zone", "b");
                     AddCpuNode(c, "big-b", 8000, zone_b);
                     AddCpuNode(c, "big-b2", 8000, zone_b);
                     QueueId q = AddQueue(c, "q");
                     TaskSpec spec = CpuSpec(4000);
                     spec.node_selector.Set("pool", "a");
                     spec.affinity.terms = {
                         {SelectorRequirement{"zone", SelectorRequirement::Op::kNotIn, {"b"}}}};
                     AddJob(c, "j", q, spec, 1);
                   },
                   "0/12 nodes are available: 10 node(s) didn't match Pod's node "
                   "affinity/selector, 2 Insufficient cpu."},
        // Required terms that all name nodes (matchFields metadata.name In): kube-scheduler's
        // NodeAffinity PreFilter leaves only those to the filters.
        ReasonCase{"the nodes the terms name, and the others",
                   [](ClusterState& c) {
                     for (int i = 0; i < 3; ++i) AddCpuNode(c, "n" + std::to_string(i), 2000);
                     QueueId q = AddQueue(c, "q");
                     TaskSpec spec = CpuSpec(4000);
                     spec.affinity.terms = {{SelectorRequirement{
                         std::string(kNodeNameField), SelectorRequirement::Op::kIn, {"n1", "n9"}}}};
                     AddJob(c, "j", q, spec, 1);
                   },
                   "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't "
                   "satisfy plugin(s) [NodeAffinity]."},
        ReasonCase{"a term whose names have no node in common",
                   [](ClusterState& c) {
                     for (int i = 0; i < 2; ++i) AddCpuNode(c, "n" + std::to_string(i), 8000);
                     QueueId q = AddQueue(c, "q");
                     TaskSpec spec = CpuSpec(1000);
                     const std::string name(kNodeNameField);
                     spec.affinity.terms = {
                         {SelectorRequirement{name, SelectorRequirement::Op::kIn, {"n0"}},
                          SelectorRequirement{name, SelectorRequirement::Op::kIn, {"n1"}}}};
                     AddJob(c, "j", q, spec, 1);
                   },
                   "0/2 nodes are available: pod affinity terms conflict."},
        // kube-scheduler's filters run in its default profile's order: NodeUnschedulable,
        // TaintToleration, NodeAffinity, ...; a node is counted for the first that fails.
        ReasonCase{"a cordon before a taint before a node selector",
                   [](ClusterState& c) {
                     for (int i = 0; i < 2; ++i) {
                       Node tainted;
                       tainted.name = "tainted-" + std::to_string(i);
                       tainted.allocatable = ResourceVector{{kCpu, 8000}};
                       tainted.labels = PoolLabel("b");
                       tainted.unschedulable = i == 1;
                       tainted.taints = {Taint{"dedicated", "x", TaintEffect::kNoSchedule}};
                       Must(c.AddNode(std::move(tainted)));
                     }
                     AddCpuNode(c, "other", 8000, PoolLabel("b"));
                     QueueId q = AddQueue(c, "q");
                     TaskSpec spec = CpuSpec(1000);
                     spec.node_selector.Set("pool", "a");
                     AddJob(c, "j", q, spec, 1);
                   },
                   "0/3 nodes are available: 1 node(s) didn't match Pod's node "
                   "affinity/selector, 1 node(s) had untolerated taint(s), 1 node(s) were "
                   "unschedulable."},
        ReasonCase{"no nodes at all",
                   [](ClusterState& c) {
                     QueueId q = AddQueue(c, "q");
                     AddJob(c, "j", q, CpuSpec(1000), 1);
                   },
                   "no nodes available to schedule pods"}),
    [](const ::testing::TestParamInfo<ReasonCase>& info) {
      return "case" + std::to_string(info.index);
    });

// A job of one task is the pod itself: its reason is kube-scheduler's words alone (above).
// A task of a larger job is named.
TEST(PendingReasonTest, ATaskOfALargerJobIsNamed) {
  ClusterState c;
  AddCpuNode(c, "small", 2000);
  QueueId q = AddQueue(c, "q");
  JobId j = AddJob(c, "j", q, CpuSpec(4000), 2);
  Decisions d = RunOnce(c);
  ASSERT_NE(PendingOf(d, j), nullptr) << Describe(c, d);
  EXPECT_EQ(PendingOf(d, j)->reason, "task j-0: 0/1 nodes are available: 1 Insufficient cpu.");
}

// ---------------------------------------------------------------- scoring

// Free GPUs: n0 2 (6,7), n1 8, n2 3 (5,6,7), n3 1 (3). Jobs of 1, 2, 3 and 4 GPUs each go
// where they fill a node: binpack scores the fullest node highest.
TEST(SessionScoringTest, NodesToScoreDoesNotChangeAPlacementOnASmallCluster) {
  for (int32_t nodes_to_score : {100, 0, 1}) {
    ClusterState c;
    NodeId n0 = AddGpuNode(c, "n0", 8);
    AddGpuNode(c, "n1", 8);
    NodeId n2 = AddGpuNode(c, "n2", 8);
    NodeId n3 = AddGpuNode(c, "n3", 4);
    QueueId busy = AddQueue(c, "busy");
    QueueId q = AddQueue(c, "q");
    Occupy(c, busy, n0, {0, 1, 2, 3, 4, 5});
    Occupy(c, busy, n2, {0, 1, 2, 3, 4});
    Occupy(c, busy, n3, {0, 1, 2});
    for (int g = 1; g <= 4; ++g) AddJob(c, "j" + std::to_string(g), q, GpuSpec(g), 1, 1, 0, g);
    SchedulerConfig config = SchedulerConfig::Default();
    config.nodes_to_score = nodes_to_score;
    Decisions d = RunOnce(c, config);
    EXPECT_EQ(Binds(c, d), "j1-0@n3[3] j2-0@n0[6,7] j3-0@n2[5,6,7] j4-0@n1[0,1,2,3]")
        << "nodesToScore " << nodes_to_score << "\n"
        << Describe(c, d);
    EXPECT_TRUE(d.pending.empty()) << "nodesToScore " << nodes_to_score << "\n" << Describe(c, d);
  }
}

TEST(SessionScoringTest, SpreadPrefersTheEmptiestNode) {
  ClusterState c;
  NodeId n0 = AddGpuNode(c, "n0", 8);
  AddGpuNode(c, "n1", 8);
  QueueId busy = AddQueue(c, "busy");
  QueueId q = AddQueue(c, "q");
  Occupy(c, busy, n0, {0});
  AddJob(c, "j", q, GpuSpec(1), 1);
  EXPECT_EQ(Binds(c, RunOnce(c)), "j-0@n0[1]");  // binpack: the fuller node
  SchedulerConfig spread = DefaultWithout("binpack");
  spread.plugins.push_back(PluginConfig{"spread", {}});
  EXPECT_EQ(Binds(c, RunOnce(c, spread)), "j-0@n1[0]");
}

TEST(SessionScoringTest, CpuTasksPreferCpuNodes) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 8);
  AddCpuNode(c, "cpu-0", 32000);
  QueueId q = AddQueue(c, "q");
  AddJob(c, "c", q, CpuSpec(1000), 2);
  SchedulerConfig spread = DefaultWithout("binpack");
  spread.plugins.push_back(PluginConfig{"spread", {}});
  EXPECT_EQ(Binds(c, RunOnce(c)), "c-0@cpu-0[] c-1@cpu-0[]");
  EXPECT_EQ(Binds(c, RunOnce(c, spread)), "c-0@cpu-0[] c-1@cpu-0[]");
}

}  // namespace
}  // namespace gantry

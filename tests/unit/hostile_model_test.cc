// The model and the engine under input that is huge, hostile or churning: sums that
// would overflow, nodes that come and go by the thousand, names beyond the limits.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "engine/session.h"
#include "model/cluster.h"
#include "model/limits.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

Node GpuNode(const std::string& name, int gpus, Milli cpu = 64000) {
  Node node;
  node.name = name;
  node.allocatable = ResourceVector{{kCpu, cpu}, {kPods, 110 * kMilliPerUnit}};
  // Every real node carries its own hostname label: a shape class of its own once a spec
  // reads it.
  node.labels.Set("kubernetes.io/hostname", name);
  for (int i = 0; i < gpus; ++i) node.gpus.push_back(GpuDevice{GpuModels().Intern("H100"), 81920});
  return node;
}

struct World {
  ClusterState c;
  QueueId queue = 0;
  World() {
    Queue q;
    q.name = "default";
    queue = Must(c.AddQueue(q));
  }
  JobId AddJob(const std::string& name, int32_t min_member = 1) {
    Job job;
    job.name = name;
    job.queue = queue;
    job.min_member = min_member;
    job.creation = static_cast<int64_t>(c.jobs().size());
    return Must(c.AddJob(job));
  }
  SpecId Spec(Milli cpu, int32_t gpus = 0) {
    TaskSpec spec;
    spec.role = "w";
    spec.requests = ResourceVector{{kCpu, cpu}, {kPods, kMilliPerUnit}};
    spec.gpu.count = gpus;
    return c.AddSpec(spec);
  }
  Decisions Schedule() {
    Snapshot snapshot(c);
    const SchedulerConfig config = SchedulerConfig::Default();  // the session keeps a reference
    const Policy policy = MustCompile(config);
    Session session(snapshot, policy);
    return session.Run();
  }
};

TEST(HostileModelTest, RemovedNodesAppearInNoMessage) {
  // Nodes came and went; one is left. A pending task used to hear of all of them
  // ("0/42 nodes are available: 41 node(s) were unschedulable, ...").
  World w;
  Must(w.c.AddNode(GpuNode("kept", 8)));
  for (int i = 0; i < 41; ++i)
    w.c.RemoveNode(Must(w.c.AddNode(GpuNode("gone-" + std::to_string(i), 8))));
  JobId j = w.AddJob("too-big");
  Must(w.c.AddTask(j, w.Spec(1000, 16), "t0"));
  Decisions d = w.Schedule();
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(Contains(d.pending[0].reason, "0/1 nodes are available")) << d.pending[0].reason;
  EXPECT_FALSE(Contains(d.pending[0].reason, "unschedulable")) << d.pending[0].reason;
}

TEST(HostileModelTest, NodeChurnKeepsNoMemory) {
  World w;
  // A spec pinned to a host: every node, churned ones too, is a class of its own.
  TaskSpec pinned;
  pinned.node_selector.Set("kubernetes.io/hostname", "kept");
  w.c.AddSpec(pinned);
  Must(w.c.AddNode(GpuNode("kept", 8)));
  for (int i = 0; i < 10'000; ++i) {
    NodeId n = Must(w.c.AddNode(GpuNode("churn-" + std::to_string(i), 8)));
    w.c.RemoveNode(n);
  }
  // One slot for the node that stays and one that every churned node reused; shape
  // classes (each churned node's own, by its hostname) are forgotten with their last node.
  EXPECT_EQ(w.c.nodes().size(), 2u);
  EXPECT_LE(w.c.shape_classes().count(), 3u);
  EXPECT_EQ(w.c.live_node_count(), 1u);
  EXPECT_EQ(w.c.capacity().Get(kGpu), 8000);
  EXPECT_EQ(w.c.FindNode("churn-5"), kNone);
  // Scheduling still works on what is left, and only on it.
  JobId j = w.AddJob("fits");
  Must(w.c.AddTask(j, w.Spec(1000, 8), "t0"));
  Decisions d = w.Schedule();
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(w.c.node(d.binds[0].node).name, "kept");
}

TEST(HostileModelTest, NodeAboveTheGpuLimitIsRefused) {
  World w;
  auto r = w.c.AddNode(GpuNode("huge", kMaxGpusPerNode + 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kOutOfRange);
  EXPECT_TRUE(Contains(r.status().message(), "\"huge\""));
  EXPECT_TRUE(Contains(r.status().message(), std::to_string(kMaxGpusPerNode + 1)));
  EXPECT_TRUE(Contains(r.status().message(), "limit is " + std::to_string(kMaxGpusPerNode)));
  EXPECT_EQ(w.c.FindNode("huge"), kNone);
  EXPECT_TRUE(w.c.AddNode(GpuNode("largest", kMaxGpusPerNode)).ok());
  // An update cannot grow a node past it either, and leaves the node as it was.
  NodeId n = Must(w.c.AddNode(GpuNode("grows", 8)));
  EXPECT_FALSE(w.c.UpdateNode(n, GpuNode("grows", kMaxGpusPerNode + 1)).ok());
  EXPECT_EQ(w.c.node(n).gpus.size(), 8u);
  EXPECT_EQ(w.c.capacity().Get(kGpu), (kMaxGpusPerNode + 8) * Milli{1000});
}

TEST(HostileModelTest, PendingDemandBeyondInt64SaturatesInsteadOfOverflowing) {
  // Two pending tasks of 9223372036854775807m CPU: their queue's demand used to be summed
  // with signed overflow (the sanitizer build aborted in Session::BuildWorkingState).
  World w;
  Must(w.c.AddNode(GpuNode("n0", 8)));
  JobId j = w.AddJob("greedy", 2);
  SpecId huge = w.Spec(INT64_MAX);
  Must(w.c.AddTask(j, huge, "t0"));
  Must(w.c.AddTask(j, huge, "t1"));
  JobId k = w.AddJob("greedy-too");
  Must(w.c.AddTask(k, huge, "t2"));
  Decisions d = w.Schedule();
  EXPECT_TRUE(d.binds.empty());
  ASSERT_EQ(d.pending.size(), 2u);
  for (const PendingJob& p : d.pending) EXPECT_FALSE(p.reason.empty());
}

TEST(HostileModelTest, BoundTasksBeyondInt64CountAsFullAndComeOffExactly) {
  // Tasks that something else bound (PlaceBound trusts the API server) whose requests add
  // up past int64: the node is full while they run, and exact again once they leave.
  World w;
  NodeId n = Must(w.c.AddNode(GpuNode("n0", 2, /*cpu=*/64000)));
  JobId j = w.AddJob("bound");
  const Milli half = INT64_MAX / 2 + 10;
  TaskId a = Must(w.c.AddTask(j, w.Spec(half), "a"));
  TaskId b = Must(w.c.AddTask(j, w.Spec(half), "b"));
  TaskId small = Must(w.c.AddTask(j, w.Spec(3000), "small"));
  ASSERT_TRUE(w.c.PlaceBound(a, n, {}).ok());
  ASSERT_TRUE(w.c.PlaceBound(b, n, {}).ok());
  ASSERT_TRUE(w.c.PlaceBound(small, n, {}).ok());
  EXPECT_EQ(w.c.node(n).used.Get(kCpu), INT64_MAX);
  // Nothing more fits there.
  JobId k = w.AddJob("pending");
  Must(w.c.AddTask(k, w.Spec(1000), "p"));
  EXPECT_TRUE(w.Schedule().binds.empty());
  EXPECT_EQ(w.c.queue(w.queue).allocated.Get(kCpu), INT64_MAX);
  w.c.RemoveTask(b);
  EXPECT_EQ(w.c.node(n).used.Get(kCpu), half + 3000);
  EXPECT_EQ(w.c.node(n).task_count, 2);
  EXPECT_EQ(w.c.job(j).allocated.Get(kCpu), half + 3000);
  EXPECT_EQ(w.c.queue(w.queue).allocated.Get(kCpu), half + 3000);
  w.c.RemoveTask(a);
  EXPECT_EQ(w.c.node(n).used.Get(kCpu), 3000);
  EXPECT_EQ(w.c.job(j).allocated.Get(kCpu), 3000);
  EXPECT_EQ(w.c.queue(w.queue).allocated.Get(kCpu), 3000);
  Decisions d = w.Schedule();
  ASSERT_EQ(d.binds.size(), 1u);
}

TEST(HostileModelTest, DominantShareUsesTheExactCapacity) {
  // Memory in milli-bytes past int64: two nodes of 2^62 milli-bytes each (2^63 in all,
  // one more than an int64 holds). Job "mem" holds 2^61 (a quarter), job "cpu" holds 30%
  // of the CPU. Against the capped total, "mem" looked like half and went second.
  World w;
  const Milli quarter = Milli{1} << 61;
  for (const char* name : {"n0", "n1"}) {
    Node node = GpuNode(name, 0, /*cpu=*/100'000);
    node.allocatable.Set(kMemory, Milli{1} << 62);
    Must(w.c.AddNode(std::move(node)));
  }
  TaskSpec mem;
  mem.requests = ResourceVector{{kMemory, quarter}};
  TaskSpec cpu;
  cpu.requests = ResourceVector{{kCpu, 60'000}};
  TaskSpec tiny;
  tiny.requests = ResourceVector{{kCpu, 1}};
  SpecId mem_spec = w.c.AddSpec(mem), cpu_spec = w.c.AddSpec(cpu), tiny_spec = w.c.AddSpec(tiny);
  JobId cpu_job = w.AddJob("cpu");  // created first: wins ties
  JobId mem_job = w.AddJob("mem");
  ASSERT_TRUE(w.c.PlaceBound(Must(w.c.AddTask(cpu_job, cpu_spec, "c")), 0, {}).ok());
  ASSERT_TRUE(w.c.PlaceBound(Must(w.c.AddTask(mem_job, mem_spec, "m")), 1, {}).ok());
  Must(w.c.AddTask(cpu_job, tiny_spec, "c2"));
  Must(w.c.AddTask(mem_job, tiny_spec, "m2"));
  Snapshot snapshot(w.c);
  SchedulerConfig config = SchedulerConfig::Default();
  config.plugins = {{"drf", {}}, {"predicates", {}}};
  const Policy policy = MustCompile(config);
  Session session(snapshot, policy);
  EXPECT_LT(session.CompareJobs(mem_job, cpu_job), 0);
}

TEST(HostileModelTest, ResourceNamesAreCheckedAndBounded) {
  EXPECT_TRUE(InternResourceName("nvidia.com/mig-1g.10gb", NameSource::kWorkload).ok());
  EXPECT_EQ(*InternResourceName("cpu", NameSource::kWorkload), kCpu);
  const std::vector<std::string> bad = {"",
                                        "has space",
                                        "a/b/c",
                                        "-lead",
                                        "x/",
                                        std::string(400, 'a'),
                                        "example.com/" + std::string(64, 'b'),
                                        "bad\x01name"};
  for (const std::string& name : bad) {
    auto r = InternResourceName(name, NameSource::kWorkload);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_TRUE(Contains(r.status().message(), "is not valid"));
  }
}

TEST(HostileModelTest, ResourceNamesFromWorkloadsAreBounded) {
  // A stream of made-up names from workloads fills their share and is then refused; the
  // table stops growing, and nodes (trusted) still have room. The table is the process's:
  // filled in a child, so that the other tests keep their share of it.
  EXPECT_EXIT(
      {
        Status refused;
        for (size_t i = 0; i <= kMaxResourceNamesFromWorkloads && refused.ok(); ++i) {
          refused =
              InternResourceName("random.example/r" + std::to_string(i), NameSource::kWorkload)
                  .status();
        }
        if (refused.ok()) std::_Exit(1);
        if (!Contains(refused.message(), std::to_string(kMaxResourceNamesFromWorkloads))) {
          std::_Exit(2);
        }
        const size_t size = ResourceNames().size();
        for (int i = 0; i < 100; ++i) {
          if (InternResourceName("more.example/r" + std::to_string(i), NameSource::kWorkload)
                  .ok()) {
            std::_Exit(3);
          }
        }
        if (ResourceNames().size() != size) std::_Exit(4);
        if (!InternResourceName("vendor.example/new-device", NameSource::kTrusted).ok())
          std::_Exit(5);
        // Known names are found whatever the source.
        if (!InternResourceName("vendor.example/new-device", NameSource::kWorkload).ok()) {
          std::_Exit(6);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(HostileModelTest, ExactQuantitiesRefuseWhatWouldRound) {
  EXPECT_EQ(*ParseQuantityExact("0.001"), 1);
  EXPECT_EQ(*ParseQuantityExact("0.5"), 500);
  EXPECT_EQ(*ParseQuantityExact("250m"), 250);
  EXPECT_EQ(*ParseQuantityExact("1e-3"), 1);
  for (const char* fine : {"1e-9", "0.0005", "1n", "1.0001"}) {
    auto r = ParseQuantityExact(fine);
    ASSERT_FALSE(r.ok()) << fine;
    EXPECT_TRUE(Contains(r.status().message(), fine));
    EXPECT_TRUE(Contains(r.status().message(), "0.001"));
    EXPECT_TRUE(ParseQuantity(fine).ok());  // the rounding parser still takes it
  }
}

TEST(HostileModelTest, SaturatingArithmetic) {
  EXPECT_EQ(SaturatingAdd(INT64_MAX, 1), INT64_MAX);
  EXPECT_EQ(SaturatingAdd(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(SaturatingSub(INT64_MIN, 1), INT64_MIN);
  EXPECT_EQ(SaturatingSub(INT64_MAX, -1), INT64_MAX);
  EXPECT_EQ(SaturatingAdd(5, -7), -2);
  ResourceVector v{{kCpu, INT64_MAX - 1}};
  v.Add(ResourceVector{{kCpu, 5}});
  EXPECT_EQ(v.Get(kCpu), INT64_MAX);
  EXPECT_TRUE(v.saturated());
  EXPECT_FALSE(ResourceVector({{kCpu, 5}}).saturated());
}

}  // namespace
}  // namespace gantry

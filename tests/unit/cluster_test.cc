#include "model/cluster.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/unit/test_util.h"

namespace gantry {
namespace {

// True when `text` contains `part` (gmock's HasSubstr without linking gmock).
constexpr Milli kGi = 1024LL * 1024 * 1024 * kMilliPerUnit;

GpuModelId Model(const char* name) {
  return GpuModels().Intern(name);
}

// A node with `gpus` devices of one model, NVLink domains of 4 devices each.
Node GpuNode(std::string name, int gpus, const char* model = "A100-80GB",
             int64_t memory_mib = 81920) {
  Node node;
  node.name = std::move(name);
  node.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, 512 * kGi}};
  for (int i = 0; i < gpus; ++i) {
    GpuDevice g;
    g.model = Model(model);
    g.memory_mib = memory_mib;
    g.nvlink_domain = i / 4;
    g.numa_node = i / 4;
    node.gpus.push_back(g);
  }
  return node;
}

Node CpuNode(std::string name, Milli cpu) {
  Node node;
  node.name = std::move(name);
  node.allocatable = ResourceVector{{kCpu, cpu}, {kMemory, 64 * kGi}};
  return node;
}

TaskSpec WholeGpuSpec(int32_t count, Milli cpu = 0) {
  TaskSpec spec;
  spec.role = "worker";
  spec.requests = ResourceVector{{kCpu, cpu}};
  spec.gpu.count = count;
  return spec;
}

TaskSpec SharedGpuSpec(int32_t milli, int64_t memory_mib = 0) {
  TaskSpec spec;
  spec.role = "infer";
  spec.gpu.milli = milli;
  spec.gpu.memory_mib = memory_mib;
  return spec;
}

TaskSpec CpuSpec(Milli cpu) {
  TaskSpec spec;
  spec.role = "cpu";
  spec.requests = ResourceVector{{kCpu, cpu}};
  return spec;
}

Queue MakeQueue(std::string name, int64_t weight = 1, ResourceVector guarantee = {},
                ResourceVector capability = {}) {
  Queue q;
  q.name = std::move(name);
  q.weight = weight;
  q.guarantee = std::move(guarantee);
  q.capability = std::move(capability);
  return q;
}

Job MakeJob(std::string name, QueueId queue = 0, int32_t min_member = 1) {
  Job j;
  j.name = std::move(name);
  j.queue = queue;
  j.min_member = min_member;
  return j;
}

GpuRequest Gpu(int32_t count, int32_t milli = 0, int64_t memory_mib = 0,
               std::vector<GpuModelId> models = {}) {
  GpuRequest r;
  r.count = count;
  r.milli = milli;
  r.memory_mib = memory_mib;
  r.models = std::move(models);
  return r;
}

// ---------------------------------------------------------------- nodes

TEST(ClusterNodesTest, AddNodeErrors) {
  ClusterState c;
  Node unnamed = GpuNode("", 1);
  auto r = c.AddNode(unnamed);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "no name"));

  ASSERT_TRUE(c.AddNode(GpuNode("gpu-0", 8)).ok());
  r = c.AddNode(CpuNode("gpu-0", 1000));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "\"gpu-0\""));
  EXPECT_TRUE(Contains(r.status().message(), "defined twice"));

  Node negative = CpuNode("neg", 1000);
  negative.allocatable.Set(kMemory, -1);
  r = c.AddNode(negative);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "\"neg\""));
  EXPECT_TRUE(Contains(r.status().message(), "memory"));
  EXPECT_TRUE(Contains(r.status().message(), "negative"));

  // Nothing of the rejected nodes stayed.
  EXPECT_EQ(c.nodes().size(), 1u);
  EXPECT_EQ(c.FindNode("neg"), kNone);
  EXPECT_EQ(c.FindNode(""), kNone);
  EXPECT_EQ(c.node(c.FindNode("gpu-0")).gpus.size(), 8u);
}

TEST(ClusterNodesTest, CapacityPastInt64IsExactAndItsViewSaturates) {
  // 40,000 nodes of 256 GiB hold more milli-bytes than an int64 counts; such a cluster
  // used to be refused ("the cluster's total capacity overflows").
  ClusterState c;
  const Milli node_memory = Milli{256} * 1024 * 1024 * 1024 * kMilliPerUnit;
  for (int i = 0; i < 40'000; ++i) {
    Node node = CpuNode("n" + std::to_string(i), 1000);
    node.allocatable.Set(kMemory, node_memory);
    ASSERT_TRUE(c.AddNode(std::move(node)).ok()) << i;
  }
  EXPECT_EQ(c.exact_capacity(kMemory), static_cast<Int128>(node_memory) * 40'000);
  EXPECT_EQ(c.capacity().Get(kMemory), INT64_MAX);  // the capped view
  EXPECT_EQ(c.capacity().Get(kCpu), 40'000'000);
  // Removing a node takes exactly its amount off the exact total.
  c.RemoveNode(c.FindNode("n7"));
  EXPECT_EQ(c.exact_capacity(kMemory), static_cast<Int128>(node_memory) * 39'999);
  EXPECT_EQ(c.capacity().Get(kCpu), 39'999'000);
  EXPECT_EQ(c.live_node_count(), 39'999u);
}

TEST(ClusterNodesTest, IdsAreDenseAndFindable) {
  ClusterState c;
  EXPECT_EQ(*c.AddNode(GpuNode("a", 8)), 0u);
  EXPECT_EQ(*c.AddNode(CpuNode("b", 1000)), 1u);
  EXPECT_EQ(*c.AddNode(GpuNode("c", 2)), 2u);
  EXPECT_EQ(c.FindNode("a"), 0u);
  EXPECT_EQ(c.FindNode("b"), 1u);
  EXPECT_EQ(c.FindNode("c"), 2u);
  EXPECT_EQ(c.FindNode("d"), kNone);
  EXPECT_EQ(c.node(2).name, "c");
}

TEST(ClusterNodesTest, GpuAllocatableComesFromDevicesAndCapacitySums) {
  ClusterState c;
  Node a = GpuNode("a", 8);
  a.allocatable.Set(kGpu, 3000);  // wrong: the devices say 8
  ASSERT_TRUE(c.AddNode(a).ok());
  Node b = CpuNode("b", 16000);
  b.allocatable.Set(kGpu, 2000);  // no devices: no GPUs
  ASSERT_TRUE(c.AddNode(b).ok());
  ASSERT_TRUE(c.AddNode(GpuNode("c", 2)).ok());

  EXPECT_EQ(c.node(0).allocatable.Get(kGpu), 8000);
  EXPECT_EQ(c.node(1).allocatable.Get(kGpu), 0);
  EXPECT_EQ(c.node(2).allocatable.Get(kGpu), 2000);
  EXPECT_EQ(c.capacity(), (ResourceVector{{kCpu, 64000 + 16000 + 64000},
                                          {kMemory, 512 * kGi + 64 * kGi + 512 * kGi},
                                          {kGpu, 10000}}));
}

TEST(ClusterNodesTest, AddNodeResetsUsage) {
  ClusterState c;
  Node n = GpuNode("a", 2);
  n.used = ResourceVector{{kCpu, 5000}};
  n.task_count = 3;
  n.gpus[1].used_milli = 500;
  n.gpus[1].used_memory_mib = 100;
  ASSERT_TRUE(c.AddNode(n).ok());
  EXPECT_TRUE(c.node(0).used.empty());
  EXPECT_EQ(c.node(0).task_count, 0);
  EXPECT_EQ(c.node(0).gpus[1].used_milli, 0);
  EXPECT_EQ(c.node(0).gpus[1].used_memory_mib, 0);
  EXPECT_EQ(c.node(0).gpus[1].free_milli(), 1000);
}

TEST(ClusterNodesTest, IdenticalNodesShareAShapeClass) {
  ClusterState c;
  ASSERT_TRUE(c.AddNode(GpuNode("a", 8)).ok());
  ASSERT_TRUE(c.AddNode(GpuNode("b", 8)).ok());  // only the name differs
  ASSERT_TRUE(c.AddNode(GpuNode("c", 8)).ok());
  EXPECT_EQ(c.node(0).shape_class, c.node(1).shape_class);
  EXPECT_EQ(c.node(0).shape_class, c.node(2).shape_class);
  EXPECT_EQ(c.shape_classes().count(), 1u);
}

struct ShapeCase {
  const char* name;
  std::function<void(Node&)> change;
};

class ShapeClassTest : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(ShapeClassTest, AnyStaticDifferenceMakesANewClass) {
  ClusterState c;
  // Labels split classes only when some spec reads them: this one reads pool and rack.
  TaskSpec reader;
  reader.node_selector.Set("pool", "train");
  reader.affinity.terms = {{SelectorRequirement{"rack", SelectorRequirement::Op::kExists, {}}}};
  c.AddSpec(reader);
  Node base = GpuNode("base", 4);
  base.labels.Set("pool", "train");
  base.taints.push_back(Taint{"dedicated", "train", TaintEffect::kNoSchedule});
  ASSERT_TRUE(c.AddNode(base).ok());
  Node twin = base;
  twin.name = "twin";
  ASSERT_TRUE(c.AddNode(twin).ok());
  Node other = base;
  other.name = "other";
  GetParam().change(other);
  ASSERT_TRUE(c.AddNode(other).ok());
  EXPECT_EQ(c.node(0).shape_class, c.node(1).shape_class) << GetParam().name;
  EXPECT_NE(c.node(0).shape_class, c.node(2).shape_class) << GetParam().name;
  EXPECT_EQ(c.shape_classes().count(), 2u) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Changes, ShapeClassTest,
    ::testing::Values(
        ShapeCase{"cpu", [](Node& n) { n.allocatable.Set(kCpu, 32000); }},
        ShapeCase{"memory", [](Node& n) { n.allocatable.Set(kMemory, 256 * kGi); }},
        ShapeCase{"extended resource", [](Node& n) { n.allocatable.Set(kPods, 110000); }},
        ShapeCase{"label value", [](Node& n) { n.labels.Set("pool", "infer"); }},
        ShapeCase{"extra label", [](Node& n) { n.labels.Set("rack", "r1"); }},
        ShapeCase{"taint effect",
                  [](Node& n) { n.taints[0].effect = TaintEffect::kPreferNoSchedule; }},
        ShapeCase{"taint value", [](Node& n) { n.taints[0].value = "infer"; }},
        ShapeCase{"no taints", [](Node& n) { n.taints.clear(); }},
        ShapeCase{"gpu count", [](Node& n) { n.gpus.pop_back(); }},
        ShapeCase{"gpu model", [](Node& n) { n.gpus[2].model = Model("H100-80GB"); }},
        ShapeCase{"gpu memory", [](Node& n) { n.gpus[0].memory_mib = 40960; }},
        ShapeCase{"nvlink domain", [](Node& n) { n.gpus[3].nvlink_domain = 7; }},
        ShapeCase{"numa node", [](Node& n) { n.gpus[1].numa_node = 1; }},
        ShapeCase{"cordoned", [](Node& n) { n.unschedulable = true; }}),
    [](const ::testing::TestParamInfo<ShapeCase>& info) {
      return "case" + std::to_string(info.index);
    });

TEST(ClusterNodesTest, TopologyPathFromLabels) {
  ClusterState c;
  EXPECT_EQ(c.topology_keys(),
            (std::vector<std::string>{"topology.kubernetes.io/zone", "topology.gantry.dev/spine",
                                      "topology.gantry.dev/rack"}));
  Node n = GpuNode("a", 1);
  n.labels.Set("topology.kubernetes.io/zone", "z1");
  n.labels.Set("topology.gantry.dev/rack", "r3");
  n.labels.Set("unrelated", "x");
  n.topology = {"stale"};
  ASSERT_TRUE(c.AddNode(n).ok());
  EXPECT_EQ(c.node(0).topology, (std::vector<std::string>{"z1", "", "r3"}));
  ASSERT_TRUE(c.AddNode(GpuNode("b", 1)).ok());
  EXPECT_EQ(c.node(1).topology, (std::vector<std::string>{"", "", ""}));
}

TEST(ClusterNodesTest, CustomTopologyKeys) {
  ClusterState c;
  c.SetTopologyKeys({"superpod", "nvlink"});
  Node n = GpuNode("a", 1);
  n.labels.Set("nvlink", "nvl-7");
  n.labels.Set("superpod", "sp-1");
  n.labels.Set("topology.kubernetes.io/zone", "z1");
  ASSERT_TRUE(c.AddNode(n).ok());
  EXPECT_EQ(c.node(0).topology, (std::vector<std::string>{"sp-1", "nvl-7"}));
}

// ---------------------------------------------------------------- queues, jobs, tasks

TEST(ClusterObjectsTest, AddQueueErrors) {
  ClusterState c;
  EXPECT_FALSE(c.AddQueue(MakeQueue("")).ok());
  ASSERT_TRUE(c.AddQueue(MakeQueue("a")).ok());
  auto dup = c.AddQueue(MakeQueue("a"));
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(Contains(dup.status().message(), "defined twice"));
  for (int64_t weight : {0, -1}) {
    auto r = c.AddQueue(MakeQueue("w", weight));
    ASSERT_FALSE(r.ok()) << weight;
    EXPECT_TRUE(Contains(r.status().message(), "weight must be positive"));
  }
  auto over =
      c.AddQueue(MakeQueue("g", 1, ResourceVector{{kGpu, 4000}}, ResourceVector{{kGpu, 2000}}));
  ASSERT_FALSE(over.ok());
  EXPECT_TRUE(Contains(over.status().message(),
                       "guarantee (nvidia.com/gpu=4) exceeds capability "
                       "(nvidia.com/gpu=2)"));
  // A capability that does not name a resource does not limit its guarantee.
  EXPECT_TRUE(c.AddQueue(MakeQueue("ok", 1, ResourceVector{{kGpu, 4000}, {kCpu, 1000}},
                                   ResourceVector{{kCpu, 2000}}))
                  .ok());
  EXPECT_EQ(c.queues().size(), 2u);
  EXPECT_EQ(c.FindQueue("ok"), 1u);
  EXPECT_EQ(c.FindQueue("w"), kNone);
}

TEST(ClusterObjectsTest, AddJobAndTaskErrors) {
  ClusterState c;
  ASSERT_TRUE(c.AddQueue(MakeQueue("q")).ok());
  EXPECT_FALSE(c.AddJob(MakeJob("")).ok());
  auto bad_queue = c.AddJob(MakeJob("j", 1));
  ASSERT_FALSE(bad_queue.ok());
  EXPECT_TRUE(Contains(bad_queue.status().message(), "unknown queue"));
  auto bad_min = c.AddJob(MakeJob("j", 0, 0));
  ASSERT_FALSE(bad_min.ok());
  EXPECT_TRUE(Contains(bad_min.status().message(), "minMember"));
  auto job = c.AddJob(MakeJob("j"));
  ASSERT_TRUE(job.ok());
  EXPECT_FALSE(c.AddJob(MakeJob("j")).ok());
  EXPECT_EQ(c.FindJob("j"), *job);
  EXPECT_EQ(c.FindJob("k"), kNone);

  SpecId spec = c.AddSpec(CpuSpec(1000));
  EXPECT_FALSE(c.AddTask(*job + 1, spec, "t").ok());
  EXPECT_FALSE(c.AddTask(*job, spec + 1, "t").ok());
  EXPECT_TRUE(c.jobs_with_pending().empty());
  auto t0 = c.AddTask(*job, spec, "t0");
  auto t1 = c.AddTask(*job, spec, "t1");
  ASSERT_TRUE(t0.ok() && t1.ok());
  EXPECT_EQ(c.job(*job).tasks, (std::vector<TaskId>{*t0, *t1}));
  EXPECT_EQ(c.job(*job).pending, 2);
  EXPECT_EQ(c.job(*job).running, 0);
  EXPECT_EQ(c.task(*t1).state, TaskState::kPending);
  EXPECT_EQ(c.task(*t1).job, *job);
  EXPECT_EQ(c.jobs_with_pending(), (std::set<JobId>{*job}));
}

// ---------------------------------------------------------------- Place and Release

// One 8-GPU node ("gpu-0", 64 cpu) and one CPU node ("cpu-0", 8 cpu); queue "q".
class PlaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(c_.AddNode(GpuNode("gpu-0", 8)).ok());
    ASSERT_TRUE(c_.AddNode(CpuNode("cpu-0", 8000)).ok());
    ASSERT_TRUE(c_.AddQueue(MakeQueue("q")).ok());
  }

  // A job of `n` tasks of `spec`; returns the first task's id.
  TaskId AddJob(const std::string& name, const TaskSpec& spec, int n = 1) {
    SpecId s = c_.AddSpec(spec);
    JobId job = *c_.AddJob(MakeJob(name));
    TaskId first = kNone;
    for (int i = 0; i < n; ++i) {
      TaskId t = *c_.AddTask(job, s, name + "-" + std::to_string(i));
      if (i == 0) first = t;
    }
    return first;
  }

  Status Place(TaskId t, NodeId n, std::vector<int32_t> gpus) { return c_.Place(t, n, gpus); }

  ClusterState c_;
  static constexpr NodeId kGpuNode = 0;
  static constexpr NodeId kCpuNode = 1;
};

struct PlaceErrorCase {
  const char* name;
  TaskSpec spec;
  NodeId node;
  std::vector<int32_t> gpus;
  const char* message;  // a part of the expected error
};

class PlaceErrorTest : public PlaceTest, public ::testing::WithParamInterface<PlaceErrorCase> {};

TEST_P(PlaceErrorTest, RejectsAndChangesNothing) {
  const PlaceErrorCase& p = GetParam();
  TaskId t = AddJob("j", p.spec);
  Status st = Place(t, p.node, p.gpus);
  ASSERT_FALSE(st.ok()) << p.name;
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(st.message(), p.message)) << p.name;
  EXPECT_EQ(c_.task(t).state, TaskState::kPending);
  EXPECT_TRUE(c_.node(p.node).used.empty());
  EXPECT_EQ(c_.node(p.node).task_count, 0);
  for (const GpuDevice& g : c_.node(kGpuNode).gpus) EXPECT_EQ(g.used_milli, 0);
  EXPECT_EQ(c_.job(0).running, 0);
  EXPECT_EQ(c_.job(0).pending, 1);
  EXPECT_TRUE(c_.queue(0).allocated.empty());
  EXPECT_EQ(c_.jobs_with_pending().size(), 1u);
}

TaskSpec WithModels(TaskSpec spec, std::vector<GpuModelId> models) {
  spec.gpu.models = std::move(models);
  return spec;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlaceErrorTest,
    ::testing::Values(
        PlaceErrorCase{"too few devices",
                       WholeGpuSpec(2),
                       0,
                       {3},
                       "task \"j-0\" on node \"gpu-0\": needs 2 GPU device(s), given 1"},
        PlaceErrorCase{
            "too many devices", WholeGpuSpec(1), 0, {3, 4}, "needs 1 GPU device(s), given 2"},
        PlaceErrorCase{"shared task takes one device",
                       SharedGpuSpec(500),
                       0,
                       {0, 1},
                       "needs 1 GPU device(s), given 2"},
        PlaceErrorCase{
            "cpu task takes none", CpuSpec(1000), 0, {0}, "needs 0 GPU device(s), given 1"},
        PlaceErrorCase{
            "index past the end", WholeGpuSpec(1), 0, {8}, "GPU index 8 out of range (node has 8)"},
        PlaceErrorCase{"negative index",
                       WholeGpuSpec(2),
                       0,
                       {0, -1},
                       "GPU index -1 out of range (node has 8)"},
        PlaceErrorCase{"GPU task on a CPU node",
                       WholeGpuSpec(1),
                       1,
                       {0},
                       "GPU index 0 out of range (node has 0)"},
        PlaceErrorCase{"duplicate index", WholeGpuSpec(3), 0, {1, 2, 1}, "GPU 1 given twice"},
        PlaceErrorCase{"model not allowed",
                       WithModels(WholeGpuSpec(1), {Model("H100-80GB")}),
                       0,
                       {5},
                       "GPU 5 is a A100-80GB, not an allowed model"},
        PlaceErrorCase{"not enough cpu", CpuSpec(8001), 1, {}, "not enough cpu"},
        PlaceErrorCase{
            "memory beyond the device", SharedGpuSpec(0, 100000), 0, {0}, "has no room"}),
    [](const ::testing::TestParamInfo<PlaceErrorCase>& info) {
      return "case" + std::to_string(info.index);
    });

TEST_F(PlaceTest, UnknownTaskOrNodeOrNotPending) {
  TaskId t = AddJob("j", CpuSpec(1000));
  EXPECT_FALSE(Place(t + 1, kCpuNode, {}).ok());
  Status st = Place(t, 2, {});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "unknown node"));
  ASSERT_TRUE(Place(t, kCpuNode, {}).ok());
  st = Place(t, kCpuNode, {});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "\"j-0\" is not pending"));
  EXPECT_EQ(c_.node(kCpuNode).task_count, 1);
}

TEST_F(PlaceTest, NoRoomOnAUsedDevice) {
  TaskId whole = AddJob("whole", WholeGpuSpec(2));
  ASSERT_TRUE(Place(whole, kGpuNode, {0, 1}).ok());
  TaskId again = AddJob("again", WholeGpuSpec(1));
  Status st = Place(again, kGpuNode, {1});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "GPU 1 has no room"));

  TaskId shared = AddJob("shared", SharedGpuSpec(600), 2);
  ASSERT_TRUE(Place(shared, kGpuNode, {2}).ok());
  st = Place(shared + 1, kGpuNode, {2});  // 600 + 600 > 1000
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "GPU 2 has no room"));
  // A whole GPU does not fit on a partly used device either.
  st = Place(again, kGpuNode, {2});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "GPU 2 has no room"));
  EXPECT_TRUE(Place(again, kGpuNode, {3}).ok());
  EXPECT_TRUE(Place(shared + 1, kGpuNode, {4}).ok());
}

TEST_F(PlaceTest, NotEnoughCpuCountsWhatIsPlaced) {
  TaskId first = AddJob("first", CpuSpec(5000));
  TaskId second = AddJob("second", CpuSpec(3001));
  ASSERT_TRUE(Place(first, kCpuNode, {}).ok());
  Status st = Place(second, kCpuNode, {});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "not enough cpu"));
  TaskId third = AddJob("third", CpuSpec(3000));
  EXPECT_TRUE(Place(third, kCpuNode, {}).ok());  // 5000 + 3000 = 8000: exactly full
}

TEST_F(PlaceTest, AllowedModelIsAccepted) {
  TaskId t = AddJob("j", WithModels(WholeGpuSpec(1), {Model("H100-80GB"), Model("A100-80GB")}));
  EXPECT_TRUE(Place(t, kGpuNode, {6}).ok());
}

TEST_F(PlaceTest, PlaceAndReleaseKeepTheBooks) {
  TaskSpec spec = WholeGpuSpec(2, /*cpu=*/4000);
  spec.requests.Set(kMemory, 16 * kGi);
  TaskId t0 = AddJob("train", spec, 2);
  TaskId t1 = t0 + 1;
  const JobId job = 0;
  const ResourceVector one{{kCpu, 4000}, {kMemory, 16 * kGi}, {kGpu, 2000}};
  const ResourceVector two{{kCpu, 8000}, {kMemory, 32 * kGi}, {kGpu, 4000}};

  ASSERT_TRUE(Place(t0, kGpuNode, {3, 5}).ok());
  const Node& node = c_.node(kGpuNode);
  EXPECT_EQ(node.used, one);
  EXPECT_EQ(node.task_count, 1);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(node.gpus[i].used_milli, (i == 3 || i == 5) ? 1000 : 0) << i;
    EXPECT_EQ(node.gpus[i].used_memory_mib, 0) << i;
  }
  const Task& task = c_.task(t0);
  EXPECT_EQ(task.state, TaskState::kRunning);
  EXPECT_EQ(task.node, kGpuNode);
  EXPECT_EQ(task.gpus, (std::vector<int32_t>{3, 5}));
  EXPECT_EQ(task.gpu_milli_each, 1000);
  EXPECT_EQ(task.gpu_memory_each, 0);
  EXPECT_EQ(c_.job(job).running, 1);
  EXPECT_EQ(c_.job(job).pending, 1);
  EXPECT_EQ(c_.job(job).allocated, one);
  EXPECT_EQ(c_.queue(0).allocated, one);
  EXPECT_EQ(c_.jobs_with_pending(), (std::set<JobId>{job}));  // t1 still pending

  ASSERT_TRUE(Place(t1, kGpuNode, {0, 7}).ok());
  EXPECT_EQ(node.used, two);
  EXPECT_EQ(node.task_count, 2);
  EXPECT_EQ(c_.job(job).running, 2);
  EXPECT_EQ(c_.job(job).pending, 0);
  EXPECT_EQ(c_.job(job).allocated, two);
  EXPECT_EQ(c_.queue(0).allocated, two);
  EXPECT_TRUE(c_.jobs_with_pending().empty());

  c_.Release(t0);
  EXPECT_EQ(c_.task(t0).state, TaskState::kDone);
  EXPECT_EQ(node.used, one);
  EXPECT_EQ(node.task_count, 1);
  EXPECT_EQ(node.gpus[3].used_milli, 0);
  EXPECT_EQ(node.gpus[5].used_milli, 0);
  EXPECT_EQ(node.gpus[0].used_milli, 1000);
  EXPECT_EQ(node.gpus[7].used_milli, 1000);
  EXPECT_EQ(c_.job(job).running, 1);
  EXPECT_EQ(c_.job(job).pending, 0);
  EXPECT_EQ(c_.job(job).allocated, one);
  EXPECT_EQ(c_.queue(0).allocated, one);
  EXPECT_TRUE(c_.jobs_with_pending().empty());

  c_.Release(t1);
  EXPECT_TRUE(node.used.empty());
  EXPECT_EQ(node.task_count, 0);
  for (const GpuDevice& g : node.gpus) EXPECT_EQ(g.used_milli, 0);
  EXPECT_TRUE(c_.job(job).allocated.empty());
  EXPECT_TRUE(c_.queue(0).allocated.empty());
  EXPECT_EQ(c_.job(job).running, 0);
}

TEST_F(PlaceTest, SharedGpuBookkeeping) {
  TaskId a = AddJob("a", SharedGpuSpec(250), 1);
  TaskId b = AddJob("b", SharedGpuSpec(0, 40960), 1);  // half of an 81920 MiB device
  ASSERT_TRUE(Place(a, kGpuNode, {4}).ok());
  ASSERT_TRUE(Place(b, kGpuNode, {4}).ok());
  const Node& node = c_.node(kGpuNode);
  EXPECT_EQ(node.gpus[4].used_milli, 750);
  EXPECT_EQ(node.gpus[4].used_memory_mib, 40960);
  EXPECT_EQ(node.gpus[4].free_milli(), 250);
  EXPECT_EQ(c_.task(a).gpu_milli_each, 250);
  EXPECT_EQ(c_.task(a).gpu_memory_each, 0);
  EXPECT_EQ(c_.task(b).gpu_milli_each, 500);
  EXPECT_EQ(c_.task(b).gpu_memory_each, 40960);
  EXPECT_EQ(node.used, (ResourceVector{{kGpu, 750}}));
  EXPECT_EQ(c_.job(0).allocated, (ResourceVector{{kGpu, 250}}));
  EXPECT_EQ(c_.job(1).allocated, (ResourceVector{{kGpu, 500}}));
  EXPECT_EQ(c_.queue(0).allocated, (ResourceVector{{kGpu, 750}}));

  // A third that needs 300 does not fit in the 250 left.
  TaskId d = AddJob("d", SharedGpuSpec(300));
  EXPECT_FALSE(Place(d, kGpuNode, {4}).ok());
  TaskId e = AddJob("e", SharedGpuSpec(250));
  EXPECT_TRUE(Place(e, kGpuNode, {4}).ok());
  EXPECT_EQ(node.gpus[4].used_milli, 1000);

  c_.Release(b);
  EXPECT_EQ(node.gpus[4].used_milli, 500);
  EXPECT_EQ(node.gpus[4].used_memory_mib, 0);
  EXPECT_EQ(c_.queue(0).allocated, (ResourceVector{{kGpu, 500}}));
}

TEST_F(PlaceTest, MemoryRequestOnDeviceOfUnknownMemoryTakesTheDevice) {
  // A memory request cannot be sized on a device whose memory is unknown: it takes all
  // of the device (node.cc, GpuShareOn), and its memory is recorded but not checked.
  Node n = GpuNode("unknown-mem", 2, "A100-80GB", /*memory_mib=*/0);
  NodeId id = *c_.AddNode(n);
  TaskId a = AddJob("a", SharedGpuSpec(100, 100000));
  ASSERT_TRUE(Place(a, id, {0}).ok());
  EXPECT_EQ(c_.node(id).gpus[0].used_milli, 1000);
  EXPECT_EQ(c_.node(id).gpus[0].used_memory_mib, 100000);
  EXPECT_EQ(c_.task(a).gpu_milli_each, 1000);
  // A milli-only request is sized by its milli there.
  TaskId b = AddJob("b", SharedGpuSpec(100));
  Status st = Place(b, id, {0});
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "GPU 0 has no room"));
  ASSERT_TRUE(Place(b, id, {1}).ok());
  EXPECT_EQ(c_.node(id).gpus[1].used_milli, 100);
}

// ---------------------------------------------------------------- GpuShareOn

struct ShareCase {
  const char* name;
  GpuRequest request;
  int64_t device_memory_mib;
  int32_t share;
};

class GpuShareTest : public ::testing::TestWithParam<ShareCase> {};

TEST_P(GpuShareTest, ShareOnDevice) {
  GpuDevice device;
  device.memory_mib = GetParam().device_memory_mib;
  EXPECT_EQ(GpuShareOn(GetParam().request, device), GetParam().share) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GpuShareTest,
    ::testing::Values(
        ShareCase{"whole GPUs take all of each", Gpu(2), 81920, 1000},
        ShareCase{"whole with memory is still whole", Gpu(1, 0, 10), 81920, 1000},
        ShareCase{"milli only", Gpu(0, 300), 80000, 300},
        ShareCase{"milli larger than memory share", Gpu(0, 300, 20000), 80000, 300},  // memory: 250
        ShareCase{"memory larger than milli", Gpu(0, 100, 40000), 80000, 500},
        ShareCase{"memory share rounds up", Gpu(0, 0, 10000), 30000, 334},  // 333.3
        ShareCase{"memory share exact", Gpu(0, 0, 20480), 81920, 250},
        ShareCase{"tiny memory is at least one milli", Gpu(0, 0, 1), 80000, 1},
        ShareCase{"memory beyond the device caps at a whole GPU", Gpu(0, 0, 100000), 80000, 1000},
        ShareCase{"unknown device memory: a memory request takes the device", Gpu(0, 200, 5000), 0,
                  1000},
        ShareCase{"unknown device memory, memory only: the device", Gpu(0, 0, 5000), 0, 1000},
        ShareCase{"unknown device memory, milli only: the milli", Gpu(0, 300), 0, 300}),
    [](const ::testing::TestParamInfo<ShareCase>& info) {
      return "case" + std::to_string(info.index);
    });

TEST(GpuRequestTest, KindsAndModels) {
  EXPECT_FALSE(GpuRequest{}.wants_gpu());
  EXPECT_FALSE(GpuRequest{}.shared());
  EXPECT_TRUE(Gpu(1).wants_gpu());
  EXPECT_FALSE(Gpu(1).shared());
  EXPECT_TRUE(Gpu(0, 500).shared());
  EXPECT_TRUE(Gpu(0, 0, 1024).shared());
  EXPECT_TRUE(Gpu(0, 0, 1024).wants_gpu());
  GpuModelId a100 = Model("A100-80GB");
  GpuModelId h100 = Model("H100-80GB");
  EXPECT_TRUE(GpuRequest{}.AllowsModel(a100));
  GpuRequest only_h100 = Gpu(1, 0, 0, {h100});
  EXPECT_TRUE(only_h100.AllowsModel(h100));
  EXPECT_FALSE(only_h100.AllowsModel(a100));
}

TEST(AccountedTest, RequestsPlusGpuMilli) {
  TaskSpec spec = WholeGpuSpec(4, 8000);
  EXPECT_EQ(ClusterState::Accounted(spec, 4, 1000), (ResourceVector{{kCpu, 8000}, {kGpu, 4000}}));
  EXPECT_EQ(ClusterState::Accounted(spec, 1, 250), (ResourceVector{{kCpu, 8000}, {kGpu, 250}}));
  EXPECT_EQ(ClusterState::Accounted(CpuSpec(500), 0, 0), (ResourceVector{{kCpu, 500}}));
}

}  // namespace
}  // namespace gantry

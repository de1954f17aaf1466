// The daemon's cluster cache against hostile and malformed objects: nothing is placed on
// a node beyond what it has, nothing crashes, and nothing is kept after its object is gone.
// Each test runs whole scheduling cycles (a session on the cache's state, its binds
// assumed, status collected) the way the daemon does.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "engine/snapshot.h"
#include "model/limits.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;

json NodeObject(const std::string& name, const json& gpus, const std::string& cpu = "64") {
  return {{"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", {{"host", name}}}}},
          {"status",
           {{"allocatable",
             {{"cpu", cpu}, {"memory", "512Gi"}, {"pods", "110"}, {"nvidia.com/gpu", gpus}}}}}};
}

json PodObject(const std::string& name, const json& requests,
               const std::string& scheduler = "gantry") {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
          {"spec",
           {{"schedulerName", scheduler},
            {"containers", {{{"name", "c"}, {"resources", {{"requests", requests}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

json Gpus(const std::string& count) {
  return {{"cpu", "1"}, {"nvidia.com/gpu", count}};
}

json Bound(json pod, const std::string& node) {
  pod["spec"]["nodeName"] = node;
  pod["status"]["phase"] = "Running";
  return pod;
}

struct Cycle {
  std::vector<BindRequest> binds;
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  // The PodScheduled message written for a pod, "" when none.
  std::string ConditionOf(const std::string& pod) const {
    for (const PodCondition& c : conditions) {
      if (c.name == pod) return c.message;
    }
    return "";
  }
  bool Bound(const std::string& pod) const {
    for (const BindRequest& b : binds) {
      if (b.name == pod) return true;
    }
    return false;
  }
};

Cycle RunCycle(ClusterCache& cache) {
  const Decisions decisions = RunSession(cache.state());
  Cycle out;
  out.binds = cache.Assume(decisions);
  cache.CollectStatus(decisions, &out.conditions, &out.groups, &out.events);
  return out;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const ObjectEvent* EventAbout(const std::vector<ObjectEvent>& events, const std::string& name) {
  for (const ObjectEvent& e : events) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// Counts from outside are checked against their type's range

TEST(ClusterCacheHostile, GpuCountsThatWrapAreNeverBound) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("eight", "8"));
  c.OnNode(EventType::kAdded, NodeObject("none", "0"));
  // As int32: 1 GPU, 0 GPUs, INT32_MIN.
  const std::vector<std::string> counts = {"4294967297", "4294967296", "2147483648"};
  for (size_t i = 0; i < counts.size(); ++i) {
    c.OnPod(EventType::kAdded, PodObject("p" + std::to_string(i), Gpus(counts[i])));
  }
  Cycle cycle = RunCycle(c);
  EXPECT_TRUE(cycle.binds.empty()) << cycle.binds[0].name << " bound to " << cycle.binds[0].node;
  for (size_t i = 0; i < counts.size(); ++i) {
    std::string message = cycle.ConditionOf("p" + std::to_string(i));
    EXPECT_TRUE(Contains(message, counts[i])) << message;
    EXPECT_TRUE(Contains(message, std::to_string(kMaxGpusPerNode))) << message;
    const ObjectEvent* e = EventAbout(cycle.events, "p" + std::to_string(i));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->reason, "FailedScheduling");
  }
  // Written once, not every cycle.
  EXPECT_TRUE(RunCycle(c).conditions.empty());
}

TEST(ClusterCacheHostile, NodeWithTooManyGpusIsRefusedWithAnEvent) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("huge", "100000"));
  EXPECT_EQ(c.state().FindNode("huge"), kNone);
  std::vector<ObjectEvent> problems = c.TakeProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, "Node");
  EXPECT_EQ(problems[0].reason, "InvalidNode");
  EXPECT_TRUE(Contains(problems[0].message, "256")) << problems[0].message;
  // The same refusal again (a status heartbeat) is not a second event.
  c.OnNode(EventType::kModified, NodeObject("huge", "100000"));
  EXPECT_TRUE(c.TakeProblems().empty());
}

TEST(ClusterCacheHostile, RefusedNodeKeepsItsPodsCountedAndPendingPodsSayWhy) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  c.OnPod(EventType::kAdded, Bound(PodObject("theirs", Gpus("8"), "default-scheduler"), "n1"));
  // An update the node cannot be read from: it takes no new pods, but what runs there
  // still counts.
  c.OnNode(EventType::kModified, NodeObject("n1", "100000"));
  NodeId n = c.state().FindNode("n1");
  ASSERT_NE(n, kNone);
  EXPECT_EQ(c.state().node(n).used.Get(kGpu), 8000);
  json mine = PodObject("mine", Gpus("1"));
  mine["spec"]["nodeSelector"] = {{"host", "n1"}};
  c.OnPod(EventType::kAdded, mine);
  Cycle cycle = RunCycle(c);
  EXPECT_TRUE(cycle.binds.empty());
  std::string message = cycle.ConditionOf("mine");
  EXPECT_TRUE(Contains(message, "n1")) << message;
  EXPECT_TRUE(Contains(message, "refused")) << message;
  EXPECT_TRUE(Contains(message, "256")) << message;
  EXPECT_LT(message.size(), 2000u);
  // Readable again: the pod it already runs still holds all eight GPUs.
  c.OnNode(EventType::kModified, NodeObject("n1", "8"));
  n = c.state().FindNode("n1");
  ASSERT_NE(n, kNone);
  EXPECT_EQ(c.state().node(n).used.Get(kGpu), 8000);
  cycle = RunCycle(c);
  EXPECT_TRUE(cycle.binds.empty());
  EXPECT_FALSE(Contains(cycle.ConditionOf("mine"), "refused")) << cycle.ConditionOf("mine");
}

// ---------------------------------------------------------------------------------------
// A bound pod always counts, however malformed

TEST(ClusterCacheHostile, BoundPodsGantryCannotScheduleStillCount) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  json theirs = Bound(PodObject("theirs", Gpus("8"), "default-scheduler"), "n1");
  theirs["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"] = json::parse(
            R"([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}])");
  theirs["metadata"]["annotations"] = {{"gantry.dev/gpu-devices", "all of them"}};
  c.OnPod(EventType::kAdded, theirs);
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).used.Get(kGpu), 8000);
  c.OnPod(EventType::kAdded, PodObject("mine", Gpus("1")));
  Cycle cycle = RunCycle(c);
  EXPECT_FALSE(cycle.Bound("mine"));
  EXPECT_TRUE(Contains(cycle.ConditionOf("mine"), "nvidia.com/gpu")) << cycle.ConditionOf("mine");
}

TEST(ClusterCacheHostile, BoundPodWithUnreadableRequestsFillsTheNodeForWhatIsUnknown) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  c.OnNode(EventType::kAdded, NodeObject("n2", "8"));
  c.OnPod(EventType::kAdded,
          Bound(PodObject("gpus-unknown", {{"cpu", "1"}, {"nvidia.com/gpu", "x"}}, "other"), "n1"));
  c.OnPod(
      EventType::kAdded,
      Bound(PodObject("cpu-unknown", {{"cpu", "lots"}, {"nvidia.com/gpu", "1"}}, "other"), "n2"));
  const Node& n1 = c.state().node(c.state().FindNode("n1"));
  const Node& n2 = c.state().node(c.state().FindNode("n2"));
  EXPECT_EQ(n1.used.Get(kGpu), 8000);  // all of its GPUs
  EXPECT_EQ(n1.used.Get(kCpu), 1000);  // what could be read
  EXPECT_EQ(n2.used.Get(kGpu), 1000);
  EXPECT_EQ(n2.used.Get(kCpu), 64000);  // all of its CPU
  std::vector<ObjectEvent> problems = c.TakeProblems();
  const ObjectEvent* e = EventAbout(problems, "gpus-unknown");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->type, "Warning");
  EXPECT_TRUE(Contains(e->message, "n1")) << e->message;
  EXPECT_TRUE(Contains(e->message, "nvidia.com/gpu")) << e->message;
  e = EventAbout(problems, "cpu-unknown");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(Contains(e->message, "cpu")) << e->message;
  // No GPU is left on n1, no CPU on n2: a GPU pod fits nowhere, a CPU pod only on n1.
  c.OnPod(EventType::kAdded, PodObject("gpu", Gpus("1")));
  c.OnPod(EventType::kAdded, PodObject("cpu", {{"cpu", "1"}}));
  Cycle cycle = RunCycle(c);
  ASSERT_EQ(cycle.binds.size(), 1u);
  EXPECT_EQ(cycle.binds[0].name, "cpu");
  EXPECT_EQ(cycle.binds[0].node, "n1");
  // Gone: the room comes back.
  c.OnPod(EventType::kDeleted, Bound(PodObject("gpus-unknown", {}, "other"), "n1"));
  c.OnPod(EventType::kDeleted, Bound(PodObject("cpu-unknown", {}, "other"), "n2"));
  EXPECT_EQ(n1.used.Get(kGpu), 0);
  EXPECT_EQ(n2.used.Get(kCpu), 0);
}

TEST(ClusterCacheHostile, BoundPodAskingMoreGpusThanItsNodeHasTakesThemAll) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  c.OnPod(EventType::kAdded, Bound(PodObject("big", Gpus("12"), "other"), "n1"));
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).used.Get(kGpu), 8000);
  c.OnPod(EventType::kAdded, Bound(PodObject("wrapped", Gpus("4294967297"), "other"), "n1"));
  c.OnNode(EventType::kAdded, NodeObject("n2", "8"));
  c.OnPod(EventType::kAdded, Bound(PodObject("wrapped2", Gpus("4294967297"), "other"), "n2"));
  EXPECT_EQ(c.state().node(c.state().FindNode("n2")).used.Get(kGpu), 8000);
}

TEST(ClusterCacheHostile, BoundPodWithARefusedResourceNameStillCounts) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  c.OnPod(
      EventType::kAdded,
      Bound(PodObject("odd", {{"cpu", "2"}, {"nvidia.com/gpu", "4"}, {"bad name!", "1"}}, "other"),
            "n1"));
  const Node& n1 = c.state().node(c.state().FindNode("n1"));
  EXPECT_EQ(n1.used.Get(kGpu), 4000);
  EXPECT_EQ(n1.used.Get(kCpu), 2000);
}

// ---------------------------------------------------------------------------------------
// Sums and fractions

TEST(ClusterCacheHostile, HugeCpuRequestsStayPendingWithAMessage) {
  // Two of these overflowed int64 when the session summed what is pending.
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  c.OnPod(EventType::kAdded, PodObject("a", {{"cpu", "4611686018427387904m"}}));
  c.OnPod(EventType::kAdded, PodObject("b", {{"cpu", "4611686018427387904m"}}));
  for (int i = 0; i < 2; ++i) {
    Cycle cycle = RunCycle(c);
    EXPECT_TRUE(cycle.binds.empty());
    if (i == 0) {
      EXPECT_FALSE(cycle.ConditionOf("a").empty());
      EXPECT_FALSE(cycle.ConditionOf("b").empty());
    }
  }
  EXPECT_EQ(c.pending_pods(), 2);
}

TEST(ClusterCacheHostile, PodWhoseRequestsOverflowIsRefused) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  json pod = PodObject("sum", {{"cpu", "4611686018427387904m"}});
  pod["spec"]["containers"].push_back(
      {{"name", "d"}, {"resources", {{"requests", {{"cpu", "4611686018427387904m"}}}}}});
  c.OnPod(EventType::kAdded, pod);
  Cycle cycle = RunCycle(c);
  EXPECT_TRUE(cycle.binds.empty());
  EXPECT_TRUE(Contains(cycle.ConditionOf("sum"), "overflow")) << cycle.ConditionOf("sum");
}

TEST(ClusterCacheHostile, GpuFractionFinerThanAThousandthIsNotBound) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  json pod = PodObject("tiny", {{"cpu", "1"}});
  pod["metadata"]["annotations"] = {{"gantry.dev/gpu-fraction", "1e-9"}};
  c.OnPod(EventType::kAdded, pod);
  Cycle cycle = RunCycle(c);
  EXPECT_TRUE(cycle.binds.empty());
  EXPECT_TRUE(Contains(cycle.ConditionOf("tiny"), "1e-9")) << cycle.ConditionOf("tiny");
}

// ---------------------------------------------------------------------------------------
// Resource names from pods are bounded

TEST(ClusterCacheHostile, PodsWithRandomResourceNamesDoNotGrowTheNameTable) {
  // The table of names is the process's: filled in a child, so that other tests keep
  // their share of it.
  EXPECT_EXIT(
      {
        ClusterCache c("gantry");
        const size_t before = ResourceNames().size();
        const size_t n = kMaxResourceNamesFromWorkloads + 100;
        for (size_t i = 0; i < n; ++i) {
          std::string name = "cache-" + std::to_string(i) + ".example.org/thing";
          c.OnPod(EventType::kAdded,
                  PodObject("r" + std::to_string(i), {{"cpu", "1"}, {name, "1"}}));
          c.OnPod(EventType::kDeleted, PodObject("r" + std::to_string(i), {}));
        }
        if (ResourceNames().size() - before > kMaxResourceNamesFromWorkloads) {
          std::fprintf(stderr, "grew by %zu\n", ResourceNames().size() - before);
          std::_Exit(1);
        }
        // One more, kept, says why it waits.
        c.OnPod(EventType::kAdded,
                PodObject("last", {{"cpu", "1"}, {"cache-last.example.org/thing", "1"}}));
        std::string message = RunCycle(c).ConditionOf("last");
        if (!Contains(message, "refused")) {
          std::fprintf(stderr, "message: %s\n", message.c_str());
          std::_Exit(2);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// ---------------------------------------------------------------------------------------
// Big gangs cost linear work

TEST(ClusterCacheHostile, FiveThousandPodGangIsLinear) {
  static constexpr int kGang = 5000;
  ClusterCache c("gantry");
  auto group = [](int version) {
    return json{{"metadata",
                 {{"name", "big"},
                  {"namespace", "ml"},
                  {"uid", "uid-big"},
                  {"resourceVersion", std::to_string(version)}}},
                {"spec", {{"minMember", kGang}, {"queue", "research"}}},
                {"status", {{"phase", version % 2 ? "Pending" : "Inqueue"}}}};
  };
  // Pods listed before their group, as after a restart, and then after it.
  for (int i = 0; i < kGang / 2; ++i) {
    json pod = PodObject("w" + std::to_string(i), {{"cpu", "1"}});
    pod["metadata"]["annotations"] = {{"scheduling.k8s.io/group-name", "big"}};
    pod["spec"]["priority"] = i % 7;
    c.OnPod(EventType::kAdded, pod);
  }
  c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded, group(1));
  for (int i = kGang / 2; i < kGang; ++i) {
    json pod = PodObject("w" + std::to_string(i), {{"cpu", "1"}});
    pod["metadata"]["annotations"] = {{"scheduling.k8s.io/group-name", "big"}};
    c.OnPod(EventType::kAdded, pod);
  }
  EXPECT_EQ(c.pending_pods(), kGang);
  // Its own status writes come back as updates, again and again.
  for (int v = 2; v < 200; ++v)
    c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kModified, group(v));
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  c.CollectStatus(Decisions{}, &conditions, &groups, &events);
  EXPECT_LE(c.pod_records_visited(), 4 * kGang);
  JobId job = c.state().FindJob("vc|ml/big");
  ASSERT_NE(job, kNone);
  EXPECT_EQ(c.state().job(job).min_member, kGang);
  EXPECT_EQ(c.state().job(job).priority, 6);  // the largest of its pods'
  EXPECT_EQ(c.state().queue(c.state().job(job).queue).name, "research");
}

// ---------------------------------------------------------------------------------------
// Nothing outlives its object

TEST(ClusterCacheHostile, DeletedPodsWaitingForTheirNodeAreForgotten) {
  ClusterCache c("gantry");
  for (int i = 0; i < 100; ++i) {
    json pod =
        Bound(PodObject("p" + std::to_string(i), Gpus("1"), "other"), "ghost-" + std::to_string(i));
    c.OnPod(EventType::kAdded, pod);
    c.OnPod(EventType::kDeleted, pod);
  }
  ClusterCache::Sizes sizes = c.sizes();
  EXPECT_EQ(sizes.pods, 0u);
  EXPECT_EQ(sizes.jobs, 0u);
  EXPECT_EQ(sizes.waiting_for_node, 0u);
  EXPECT_EQ(sizes.status_dirty, 0u);
  EXPECT_EQ(sizes.component_records, 0u);
  // A node of that name, later, finds nothing waiting.
  c.OnNode(EventType::kAdded, NodeObject("ghost-3", "8"));
  EXPECT_EQ(c.state().node(c.state().FindNode("ghost-3")).used.Get(kGpu), 0);
}

TEST(ClusterCacheHostile, PodsOfEveryShapeDoNotGrowTheSpecs) {
  ClusterCache c("gantry");
  for (int i = 0; i < 3000; ++i) {
    json pod = PodObject("p" + std::to_string(i), {{"cpu", std::to_string(i + 1) + "m"}});
    c.OnPod(EventType::kAdded, pod);
    c.OnPod(EventType::kDeleted, pod);
  }
  EXPECT_LE(c.sizes().specs, 1000u);
  EXPECT_LE(c.state().specs().size(), 1000u);
}

TEST(ClusterCacheHostile, RemovedNodesAreNotCounted) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  c.OnNode(EventType::kAdded, NodeObject("n2", "4"));
  c.OnPod(EventType::kAdded, Bound(PodObject("theirs", Gpus("2"), "other"), "n1"));
  c.OnNode(EventType::kDeleted, NodeObject("n1", "8"));
  NodeCounts counts = CountNodes(c.state());
  EXPECT_EQ(counts.nodes, 1);
  EXPECT_EQ(counts.gpus_capacity, 4000);
  EXPECT_EQ(counts.gpus_allocated, 0);
}

TEST(ClusterCacheHostile, APodChangedOnItsDeletedNodeWaitsForTheNodeAgain) {
  // Found by the cluster_cache fuzzer: a deleted node stays only while a pod is counted
  // there; when that pod changed, dropping its old task freed the node, and the new task
  // was placed on the freed slot by the id looked up before the drop.
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  c.OnPod(EventType::kAdded, Bound(PodObject("p", Gpus("2"), "other"), "n1"));
  c.OnNode(EventType::kDeleted, NodeObject("n1", "8"));
  const NodeId kept = c.state().FindNode("n1");
  ASSERT_NE(kept, kNone);
  c.OnPod(EventType::kModified, Bound(PodObject("p", Gpus("4"), "other"), "n1"));
  // The node is gone for good, nothing is recorded on its slot, and the pod waits for it.
  EXPECT_EQ(c.state().FindNode("n1"), kNone);
  EXPECT_TRUE(c.state().node(kept).name.empty());
  EXPECT_TRUE(c.state().tasks_on(kept).empty());
  EXPECT_EQ(c.state().node(kept).task_count, 0);
  EXPECT_EQ(c.sizes().waiting_for_node, 1u);
  // A node of that name, later, counts the pod as it is now.
  c.OnNode(EventType::kAdded, NodeObject("n1", "8"));
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).used.Get(kGpu), 4000);
}

TEST(ClusterCacheHostile, QueuesNamedByPodsAreBounded) {
  ClusterCache c("gantry");
  const size_t before = c.state().queues().size();
  for (int i = 0; i < 3000; ++i) {
    json pod = PodObject("q" + std::to_string(i), {{"cpu", "1"}});
    pod["metadata"]["annotations"] = {{"gantry.dev/queue", "queue-" + std::to_string(i)}};
    c.OnPod(EventType::kAdded, pod);
    c.OnPod(EventType::kDeleted, pod);
  }
  EXPECT_LE(c.state().queues().size() - before, kMaxQueuesFromWorkloads);
  json pod = PodObject("over", {{"cpu", "1"}});
  pod["metadata"]["annotations"] = {{"gantry.dev/queue", "one-too-many"}};
  c.OnPod(EventType::kAdded, pod);
  Cycle cycle = RunCycle(c);
  EXPECT_TRUE(Contains(cycle.ConditionOf("over"), "one-too-many")) << cycle.ConditionOf("over");
}

}  // namespace
}  // namespace gantry

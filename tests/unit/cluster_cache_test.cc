// The daemon's cluster cache: Kubernetes objects in, ClusterState out.
#include "daemon/cluster_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "engine/session.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;

json NodeObject(const std::string& name, int gpus, const std::string& cpu = "64") {
  return {{"metadata",
           {{"name", name},
            {"uid", "uid-" + name},
            {"resourceVersion", "1"},
            {"labels",
             {{"nvidia.com/gpu.product", "A100-SXM4-80GB"}, {"nvidia.com/gpu.memory", "81920"}}}}},
          {"status",
           {{"allocatable",
             {{"cpu", cpu},
              {"memory", "512Gi"},
              {"pods", "110"},
              {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

json PodObject(const std::string& name, int gpus, const std::string& scheduler = "gantry") {
  return {{"metadata",
           {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}, {"resourceVersion", "1"}}},
          {"spec",
           {{"schedulerName", scheduler},
            {"containers",
             {{{"name", "c"},
               {"resources",
                {{"requests", {{"cpu", "4"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

json Grouped(json pod, const std::string& group) {
  pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = group;
  return pod;
}

json Bound(json pod, const std::string& node) {
  pod["spec"]["nodeName"] = node;
  pod["metadata"]["resourceVersion"] = "2";
  return pod;
}

json VolcanoGroup(const std::string& name, json min_member, const std::string& queue = "") {
  json g = {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-pg-" + name}}},
            {"spec", {{"minMember", min_member}}}};
  if (!queue.empty()) g["spec"]["queue"] = queue;
  return g;
}

const Task* TaskNamed(const ClusterState& s, const std::string& name) {
  for (const Task& t : s.tasks()) {
    if (t.name == name && t.job != kNone) return &t;
  }
  return nullptr;
}

TEST(ClusterCache, NodesCarryTheirGpus) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", 8));
  NodeId n = c.state().FindNode("n1");
  ASSERT_NE(n, kNone);
  const Node& node = c.state().node(n);
  ASSERT_EQ(node.gpus.size(), 8u);
  EXPECT_EQ(GpuModels().Name(node.gpus[0].model), "A100-SXM4-80GB");
  EXPECT_EQ(node.gpus[0].memory_mib, 81920);
  EXPECT_EQ(c.state().capacity().Get(kGpu), 8000);
  c.OnNode(EventType::kDeleted, NodeObject("n1", 8));
  EXPECT_EQ(c.state().capacity().Get(kGpu), 0);
}

TEST(ClusterCache, OurPendingPodsAreTasksOthersAreNot) {
  ClusterCache c("gantry");
  c.OnPod(EventType::kAdded, PodObject("mine", 1));
  c.OnPod(EventType::kAdded, PodObject("theirs", 1, "default-scheduler"));
  ASSERT_NE(TaskNamed(c.state(), "ml/mine"), nullptr);
  EXPECT_EQ(TaskNamed(c.state(), "ml/theirs"), nullptr);
  EXPECT_EQ(c.pending_pods(), 1);
  const Task* t = TaskNamed(c.state(), "ml/mine");
  EXPECT_EQ(c.state().queue(c.state().job(t->job).queue).name, "default");
  EXPECT_EQ(c.state().spec(t->spec).gpu.count, 1);
}

TEST(ClusterCache, PodsOfOtherSchedulersCountWhereTheyRun) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", 8));
  c.OnPod(EventType::kAdded, Bound(PodObject("theirs", 3, "default-scheduler"), "n1"));
  NodeId n = c.state().FindNode("n1");
  EXPECT_EQ(c.state().node(n).used.Get(kGpu), 3000);
  EXPECT_EQ(c.state().node(n).used.Get(kCpu), 4000);
  const Task* t = TaskNamed(c.state(), "ml/theirs");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(c.state().queue(c.state().job(t->job).queue).name, kOtherSchedulersQueue);
  // Finished: its resources come back.
  json done = Bound(PodObject("theirs", 3, "default-scheduler"), "n1");
  done["status"]["phase"] = "Succeeded";
  done["metadata"]["resourceVersion"] = "3";
  c.OnPod(EventType::kModified, done);
  EXPECT_EQ(c.state().node(n).used.Get(kGpu), 0);
}

TEST(ClusterCache, BoundPodBeforeItsNodeIsCountedWhenTheNodeComes) {
  ClusterCache c("gantry");
  c.OnPod(EventType::kAdded, Bound(PodObject("early", 2), "n1"));
  EXPECT_EQ(TaskNamed(c.state(), "ml/early"), nullptr);
  c.OnNode(EventType::kAdded, NodeObject("n1", 8));
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).used.Get(kGpu), 2000);
}

// kube-scheduler: a pod with spec.schedulingGates is never scheduled; it shows
// PodScheduled=False, reason SchedulingGated, and is scheduled once its gates go.
TEST(ClusterCache, GatedPodsWaitSayingSoAndAreScheduledOnceTheGatesGo) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", 8));
  json gated = PodObject("p", 1);
  gated["spec"]["schedulingGates"] = json::array({{{"name", "kueue.x-k8s.io/admission"}}});
  c.OnPod(EventType::kAdded, gated);
  EXPECT_EQ(c.pending_pods(), 0) << "a gated pod is no task";
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  c.CollectStatus(Decisions{}, &conditions, &groups, &events);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].reason, "SchedulingGated");
  EXPECT_EQ(conditions[0].message, kSchedulingGatedMessage);
  EXPECT_TRUE(events.empty()) << "kube-scheduler writes no event for a gated pod";
  json open = PodObject("p", 1);
  open["metadata"]["resourceVersion"] = "2";
  c.OnPod(EventType::kModified, open);
  EXPECT_EQ(c.pending_pods(), 1);
}

// A bind the API server keeps refusing is retried after 1, 2, 4, ... seconds (at most
// 60), not every cycle; the count starts again once the pod is bound.
TEST(ClusterCache, FailedBindsBackOffDoublingAndResetOnceBound) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", 8));
  c.OnPod(EventType::kAdded, PodObject("p", 1));
  auto assume = [&] {
    const Task* t = TaskNamed(c.state(), "ml/p");
    if (t == nullptr) return false;
    Decisions d;
    BindDecision b;
    b.task = static_cast<TaskId>(t - c.state().tasks().data());
    b.job = t->job;
    b.node = c.state().FindNode("n1");
    b.gpus = {0};
    d.binds.push_back(b);
    return c.Assume(d).size() == 1;
  };
  double now = 1000;
  std::vector<double> backoffs;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(assume()) << "try " << i;
    const double backoff = c.BindFailed("ml", "p", "uid-p", now);
    backoffs.push_back(backoff);
    EXPECT_EQ(c.ReleaseHeld(now + backoff - 0.01), 0u);
    EXPECT_EQ(c.pending_pods(), 0);
    now += backoff;
    EXPECT_EQ(c.ReleaseHeld(now), 1u);
    EXPECT_EQ(c.pending_pods(), 1);
  }
  EXPECT_EQ(backoffs, (std::vector<double>{1, 2, 4, 8, 16, 32, 60, 60}));
  ASSERT_TRUE(assume());
  c.OnPod(EventType::kModified, Bound(PodObject("p", 1), "n1"));
  json pending_again = PodObject("p", 1);  // unbound again: say, the node went away
  pending_again["metadata"]["resourceVersion"] = "3";
  c.OnPod(EventType::kModified, pending_again);
  ASSERT_TRUE(assume());
  EXPECT_EQ(c.BindFailed("ml", "p", "uid-p", now), 1) << "bound once: counting starts again";
}

TEST(ClusterCache, NamespaceLabelsFollowTheirNamespace) {
  ClusterCache c("gantry");
  c.OnNamespace(EventType::kAdded,
                json{{"metadata", {{"name", "ml"}, {"labels", {{"team", "research"}}}}}});
  EXPECT_EQ(c.state().namespace_labels("ml"),
            Labels(std::vector<std::pair<std::string, std::string>>{{"team", "research"}}));
  c.OnNamespace(EventType::kModified,
                json{{"metadata", {{"name", "ml"}, {"labels", {{"team", "infra"}}}}}});
  EXPECT_EQ(*c.state().namespace_labels("ml").Find("team"), "infra");
  c.OnNamespace(EventType::kDeleted, json{{"metadata", {{"name", "ml"}}}});
  EXPECT_TRUE(c.state().namespace_labels("ml").empty());
  EXPECT_TRUE(c.state().namespace_labels("never-seen").empty());
}

// A pending pod's PodScheduled=False reason says whether a node would help (Unschedulable,
// what Cluster Autoscaler and Karpenter act on) or its queue holds it (QueueLimit).
TEST(ClusterCache, OnlyAPodThatANodeWouldHelpIsWrittenUnschedulable) {
  ClusterCache c("gantry");
  c.OnPod(EventType::kAdded, PodObject("no-room", 1));
  c.OnPod(EventType::kAdded, PodObject("at-capability", 1));
  auto pending_of = [&](const std::string& pod, PendingHold hold) {
    const Task* t = TaskNamed(c.state(), "ml/" + pod);
    EXPECT_NE(t, nullptr) << pod;
    return PendingJob{t == nullptr ? kNone : t->job, 1, "why " + pod, hold};
  };
  Decisions d;
  d.pending = {pending_of("no-room", PendingHold::kNone),
               pending_of("at-capability", PendingHold::kQueueLimit)};
  std::sort(d.pending.begin(), d.pending.end(),
            [](const PendingJob& a, const PendingJob& b) { return a.job < b.job; });
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  c.CollectStatus(d, &conditions, &groups, &events);
  std::map<std::string, std::string> reason_of;
  for (const PodCondition& condition : conditions) reason_of[condition.name] = condition.reason;
  EXPECT_EQ(reason_of["no-room"], kUnschedulableReason);
  EXPECT_EQ(reason_of["at-capability"], kQueueLimitReason);
  // The same message with another reason is written again (the pod's hold changed).
  d.pending = {pending_of("no-room", PendingHold::kQueueLimit)};
  conditions.clear();
  c.CollectStatus(d, &conditions, &groups, &events);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].name, "no-room");
  EXPECT_EQ(conditions[0].reason, kQueueLimitReason);
}

TEST(ClusterCache, GangWaitsForItsPodGroupThenTakesItsSize) {
  ClusterCache c("gantry");
  for (int i = 0; i < 3; ++i)
    c.OnPod(EventType::kAdded, Grouped(PodObject("w" + std::to_string(i), 1), "train"));
  EXPECT_EQ(c.pending_pods(), 0);  // held: no PodGroup yet
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  c.CollectStatus(Decisions{}, &conditions, &groups, &events);
  ASSERT_EQ(conditions.size(), 3u);
  EXPECT_NE(conditions[0].message.find("waiting for PodGroup ml/train"), std::string::npos)
      << conditions[0].message;
  // Not Unschedulable: autoscalers read that as "a node would help", and none would.
  EXPECT_EQ(conditions[0].reason, kPodGroupNotReadyReason);
  // The same message is not written twice.
  conditions.clear();
  c.CollectStatus(Decisions{}, &conditions, &groups, &events);
  EXPECT_TRUE(conditions.empty());

  c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded, VolcanoGroup("train", 3, "research"));
  EXPECT_EQ(c.pending_pods(), 3);
  const Task* t = TaskNamed(c.state(), "ml/w0");
  ASSERT_NE(t, nullptr);
  const Job& job = c.state().job(t->job);
  EXPECT_EQ(job.min_member, 3);
  EXPECT_EQ(job.tasks.size(), 3u);
  EXPECT_EQ(c.state().queue(job.queue).name, "research");
}

TEST(ClusterCache, MalformedPodGroupIsReportedAndHoldsOnlyItsOwnPods) {
  ClusterCache c("gantry");
  c.OnPod(EventType::kAdded, Grouped(PodObject("a", 1), "bad"));
  c.OnPod(EventType::kAdded, PodObject("single", 1));
  c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded, VolcanoGroup("bad", "lots"));
  std::vector<ObjectEvent> problems = c.TakeProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, "PodGroup");
  EXPECT_EQ(problems[0].reason, "InvalidPodGroup");
  EXPECT_NE(problems[0].message.find("spec.minMember"), std::string::npos) << problems[0].message;
  EXPECT_EQ(TaskNamed(c.state(), "ml/a"), nullptr);
  EXPECT_NE(TaskNamed(c.state(), "ml/single"), nullptr);
  // Fixed: the pod is scheduled.
  c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kModified, VolcanoGroup("bad", 1));
  EXPECT_NE(TaskNamed(c.state(), "ml/a"), nullptr);
}

TEST(ClusterCache, AssumedPlacementSurvivesUntilTheBindIsSeenOrFails) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", 8));
  c.OnPod(EventType::kAdded, PodObject("p", 2));
  const Task* t = TaskNamed(c.state(), "ml/p");
  ASSERT_NE(t, nullptr);
  TaskId id = static_cast<TaskId>(t - c.state().tasks().data());
  Decisions d;
  d.binds.push_back({t->job, id, c.state().FindNode("n1"), {0, 1}});
  std::vector<BindRequest> binds = c.Assume(d);
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(binds[0].node, "n1");
  EXPECT_EQ(binds[0].uid, "uid-p");
  EXPECT_FALSE(binds[0].write_devices);  // whole GPUs: the device plugin picks
  EXPECT_EQ(c.assumed_pods(), 1);
  EXPECT_EQ(c.pending_pods(), 0);
  // An update that does not bind it yet (our own annotation patch) keeps the assumption.
  json touched = PodObject("p", 2);
  touched["metadata"]["resourceVersion"] = "2";
  c.OnPod(EventType::kModified, touched);
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).used.Get(kGpu), 2000);
  // The bind fails: room given back, and pending again once its backoff (1 s for a
  // first failure) ends.
  EXPECT_EQ(c.BindFailed("ml", "p", "uid-p", /*now=*/100), ClusterCache::kBindBackoffInitial);
  EXPECT_EQ(c.assumed_pods(), 0);
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).used.Get(kGpu), 0);
  EXPECT_EQ(c.pending_pods(), 0) << "held back until its backoff ends";
  EXPECT_EQ(c.ReleaseHeld(100.5), 0u);
  EXPECT_EQ(c.pending_pods(), 0);
  EXPECT_EQ(c.ReleaseHeld(101), 1u);
  EXPECT_EQ(c.pending_pods(), 1);
  // Placed again and this time seen bound: counted once.
  t = TaskNamed(c.state(), "ml/p");
  id = static_cast<TaskId>(t - c.state().tasks().data());
  d.binds[0].task = id;
  d.binds[0].job = t->job;
  ASSERT_EQ(c.Assume(d).size(), 1u);
  c.OnPod(EventType::kModified, Bound(PodObject("p", 2), "n1"));
  EXPECT_EQ(c.assumed_pods(), 0);
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).used.Get(kGpu), 2000);
  c.OnPod(EventType::kDeleted, Bound(PodObject("p", 2), "n1"));
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).used.Get(kGpu), 0);
  EXPECT_EQ(c.state().FindJob("pod|ml/p"), kNone);
}

TEST(ClusterCache, SharedGpuPodsKeepTheirWrittenDevicesAcrossRestarts) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", 4));
  json pod = Bound(PodObject("half", 0), "n1");
  pod["metadata"]["annotations"] = {{"gantry.dev/gpu-fraction", "0.5"},
                                    {"gantry.dev/gpu-devices", "3"}};
  c.OnPod(EventType::kAdded, pod);
  const Node& node = c.state().node(c.state().FindNode("n1"));
  EXPECT_EQ(node.gpus[3].used_milli, 500);
  EXPECT_EQ(node.gpus[0].used_milli, 0);
}

TEST(ClusterCache, IdenticalPodsShareOneSpec) {
  ClusterCache c("gantry");
  c.OnPod(EventType::kAdded, PodObject("a", 1));
  c.OnPod(EventType::kAdded, PodObject("b", 1));
  c.OnPod(EventType::kAdded, PodObject("c", 2));
  EXPECT_EQ(TaskNamed(c.state(), "ml/a")->spec, TaskNamed(c.state(), "ml/b")->spec);
  EXPECT_NE(TaskNamed(c.state(), "ml/a")->spec, TaskNamed(c.state(), "ml/c")->spec);
}

// One scheduling cycle as the daemon runs it (a node table kept between cycles); returns
// where each bound pod went.
std::map<std::string, std::string> Cycle(ClusterCache& c, NodeTableCache* table) {
  const Decisions d = RunSession(c.state(), SchedulerConfig::Default(), {}, table);
  std::map<std::string, std::string> where;
  for (const BindRequest& b : c.Assume(d)) where[b.name] = b.node;
  return where;
}

TEST(ClusterCache, NodesDifferingOnlyInLabelsNoPodReadsShareAClassUntilOneDoes) {
  ClusterCache c("gantry");
  for (int i = 0; i < 50; ++i) {
    json node = NodeObject("n" + std::to_string(i), 1);
    node["metadata"]["labels"]["kubernetes.io/hostname"] = "n" + std::to_string(i);
    c.OnNode(EventType::kAdded, node);
  }
  auto classes = [&] {
    std::set<uint32_t> in_use;
    for (const Node& n : c.state().nodes()) in_use.insert(n.shape_class);
    return in_use.size();
  };
  EXPECT_EQ(classes(), 1u);
  NodeTableCache table;
  c.OnPod(EventType::kAdded, PodObject("plain", 1));
  EXPECT_EQ(Cycle(c, &table).size(), 1u);
  // A pod for one host: its shape is a new spec that reads the hostname.
  json pinned = PodObject("pinned", 1);
  pinned["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "n37"}};
  c.OnPod(EventType::kAdded, pinned);
  EXPECT_EQ(classes(), 50u);
  EXPECT_EQ(Cycle(c, &table), (std::map<std::string, std::string>{{"pinned", "n37"}}));
  // It goes; its spec's slot goes to a shape that reads no label, and then another pod
  // pins itself to another host.
  c.OnPod(EventType::kDeleted, Bound(pinned, "n37"));
  c.OnPod(EventType::kAdded, PodObject("big", 2));  // fits no node
  EXPECT_EQ(c.state().shape_classes().referenced_label_key_count(), 0u);
  json other = PodObject("other", 1);
  other["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "n5"}};
  c.OnPod(EventType::kAdded, other);
  const std::map<std::string, std::string> placed = Cycle(c, &table);
  ASSERT_EQ(placed.count("other"), 1u);
  EXPECT_EQ(placed.at("other"), "n5");
}

TEST(ClusterCache, QueueObjectsSetWeightAndLimits) {
  ClusterCache c("gantry");
  c.OnQueue(EventType::kAdded,
            {{"metadata", {{"name", "research"}}},
             {"spec", {{"weight", 3}, {"capability", {{"nvidia.com/gpu", 32}}}}}});
  QueueId q = c.state().FindQueue("research");
  ASSERT_NE(q, kNone);
  EXPECT_EQ(c.state().queue(q).weight, 3);
  EXPECT_EQ(c.state().queue(q).capability.Get(kGpu), 32000);
  c.OnQueue(EventType::kModified,
            {{"metadata", {{"name", "research"}}}, {"spec", {{"weight", 0}}}});
  std::vector<ObjectEvent> problems = c.TakeProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].message.find("spec.weight"), std::string::npos);
  EXPECT_EQ(c.state().queue(q).weight, 3);  // the bad update changed nothing
}

TEST(ClusterCache, UnreadablePodIsReportedNotScheduled) {
  ClusterCache c("gantry");
  json pod = PodObject("bad", 0);
  pod["metadata"]["annotations"] = {{"gantry.dev/gpu-fraction", "1.5"}};
  c.OnPod(EventType::kAdded, pod);
  EXPECT_EQ(c.pending_pods(), 0);
  // It waits with a PodScheduled=False condition and an event that say why.
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  c.CollectStatus(Decisions{}, &conditions, &groups, &events);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_NE(conditions[0].message.find("gantry.dev/gpu-fraction"), std::string::npos)
      << conditions[0].message;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "FailedScheduling");
  EXPECT_EQ(events[0].message, conditions[0].message);
}

TEST(ClusterCache, AnUpdatedPodKeepsItsJobAndPlaceInLine) {
  ClusterCache c("gantry");
  c.OnPod(EventType::kAdded, PodObject("p", 1));
  const Task* t = TaskNamed(c.state(), "ml/p");
  ASSERT_NE(t, nullptr);
  const JobId job = t->job;
  const int64_t creation = c.state().job(job).creation;
  json touched = PodObject("p", 1);
  touched["metadata"]["resourceVersion"] = "2";
  touched["metadata"]["labels"] = {{"touched", "yes"}};
  c.OnPod(EventType::kModified, touched);
  t = TaskNamed(c.state(), "ml/p");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->job, job);
  EXPECT_EQ(c.state().job(job).creation, creation);  // not a new job at the back of the line
}

TEST(ClusterCache, RecreatedPodWithTheSameNameReplacesTheOld) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", 8));
  c.OnPod(EventType::kAdded, Bound(PodObject("p", 4), "n1"));
  json again = PodObject("p", 1);
  again["metadata"]["uid"] = "uid-p-2";
  c.OnPod(EventType::kAdded, again);
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).used.Get(kGpu), 0);
  EXPECT_EQ(c.pending_pods(), 1);
}

}  // namespace
}  // namespace gantry

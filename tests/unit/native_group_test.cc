// Kubernetes' own gang API (scheduling.k8s.io/v1beta1 PodGroup, a pod's
// spec.schedulingGroup): decoding, and what the daemon's cache makes of it (gang size,
// priority, topology, disruption mode, the waits and refusals kube-scheduler has, and the
// PodGroupInitiallyScheduled condition).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "daemon/cluster_cache.h"
#include "k8s/objects.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;
using k8s::GroupApi;

json NativeGroup(const std::string& name, const json& spec, const json& status = json::object()) {
  return {
      {"apiVersion", "scheduling.k8s.io/v1beta1"},
      {"kind", "PodGroup"},
      {"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "pg-" + name}, {"generation", 3}}},
      {"spec", spec},
      {"status", status}};
}

json Gang(int min_count) {
  return {{"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}};
}

std::string NativeError(const json& spec) {
  auto r = k8s::ParseNativePodGroup(NativeGroup("llama", spec));
  EXPECT_FALSE(r.ok()) << spec.dump();
  return r.ok() ? "" : r.status().message();
}

TEST(NativePodGroup, GangFields) {
  json spec = Gang(4);
  spec["priorityClassName"] = "high";
  spec["priority"] = 1000;
  spec["preemptionPolicy"] = "Never";
  spec["disruptionMode"] = {{"all", json::object()}};
  spec["schedulingConstraints"] = {{"topology", {{{"key", "topology.gantry.dev/rack"}}}}};
  json object = NativeGroup("llama", spec);
  object["metadata"]["annotations"] = {{"gantry.dev/queue", "research"}};
  k8s::PodGroupInfo g = Must(k8s::ParsePodGroup(object, GroupApi::kNative));
  EXPECT_EQ(g.api, GroupApi::kNative);
  EXPECT_TRUE(g.gang);
  EXPECT_EQ(g.min_member, 4);
  EXPECT_EQ(g.priority, 1000);
  EXPECT_EQ(g.priority_class_name, "high");
  EXPECT_TRUE(g.preempt_never);
  EXPECT_TRUE(g.disrupt_whole);
  EXPECT_EQ(g.topology_key, "topology.gantry.dev/rack");
  EXPECT_EQ(g.queue, "research");
  EXPECT_EQ(g.generation, 3);
  EXPECT_FALSE(g.initially_scheduled);
}

TEST(NativePodGroup, BasicGroupsArePlacedPodByPodAndDefaultsAreKubernetes) {
  k8s::PodGroupInfo g = Must(k8s::ParseNativePodGroup(
      NativeGroup("llama", {{"schedulingPolicy", {{"basic", json::object()}}}})));
  EXPECT_FALSE(g.gang);
  EXPECT_EQ(g.min_member, 1);
  EXPECT_FALSE(g.priority.has_value());  // no priority: 0, as kube-scheduler reads it
  EXPECT_FALSE(g.preempt_never);
  EXPECT_FALSE(g.disrupt_whole);  // single is the default
  EXPECT_EQ(g.topology_key, "");
}

TEST(NativePodGroup, InitiallyScheduledIsReadFromTheCondition) {
  json status = {{"conditions",
                  {{{"type", "DisruptionTarget"}, {"status", "True"}},
                   {{"type", "PodGroupInitiallyScheduled"}, {"status", "True"}}}}};
  EXPECT_TRUE(
      Must(k8s::ParseNativePodGroup(NativeGroup("a", Gang(2), status))).initially_scheduled);
  status["conditions"][1]["status"] = "False";
  EXPECT_FALSE(
      Must(k8s::ParseNativePodGroup(NativeGroup("a", Gang(2), status))).initially_scheduled);
}

TEST(NativePodGroup, WhatTheApiServerWouldRefuseIsRefusedNamingTheField) {
  EXPECT_TRUE(Contains(NativeError(json::object()),
                       "podgroup ml/llama: spec.schedulingPolicy: exactly one of basic and gang"));
  json both = Gang(2);
  both["schedulingPolicy"]["basic"] = json::object();
  EXPECT_TRUE(Contains(NativeError(both), "exactly one of basic and gang"));
  EXPECT_TRUE(Contains(NativeError(Gang(0)),
                       "spec.schedulingPolicy.gang.minCount: 0 is out of range (1..1000000)"));
  json words = {{"schedulingPolicy", {{"gang", {{"minCount", "four"}}}}}};
  EXPECT_TRUE(Contains(NativeError(words), "spec.schedulingPolicy.gang.minCount"));
  json policy = Gang(2);
  policy["preemptionPolicy"] = "Sometimes";
  EXPECT_TRUE(Contains(NativeError(policy), "spec.preemptionPolicy: \"Sometimes\" is not"));
  json mode = Gang(2);
  mode["disruptionMode"] = {{"single", json::object()}, {"all", json::object()}};
  EXPECT_TRUE(Contains(NativeError(mode), "spec.disruptionMode: exactly one of single and all"));
  json two = Gang(2);
  two["schedulingConstraints"] = {{"topology", {{{"key", "a"}}, {{"key", "b"}}}}};
  EXPECT_TRUE(Contains(NativeError(two), "spec.schedulingConstraints.topology: expected at most"));
  json keyless = Gang(2);
  keyless["schedulingConstraints"] = {{"topology", {json::object()}}};
  EXPECT_TRUE(Contains(NativeError(keyless), "spec.schedulingConstraints.topology[0].key"));
  json composite = Gang(2);
  composite["parentCompositePodGroupName"] = 7;
  EXPECT_TRUE(
      Contains(NativeError(composite), "spec.parentCompositePodGroupName: expected a name"));
  json priority = Gang(2);
  priority["priority"] = 5000000000;
  EXPECT_TRUE(Contains(NativeError(priority), "spec.priority"));
}

// ---------------------------------------------------------------------------------------
// The cache

json NodeObject(const std::string& name, const std::string& rack) {
  return {
      {"metadata",
       {{"name", name}, {"uid", "uid-" + name}, {"labels", {{"topology.gantry.dev/rack", rack}}}}},
      {"status",
       {{"allocatable",
         {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}}}}};
}

json Member(const std::string& name, const std::string& group,
            const std::string& scheduler = "gantry", int priority = 0) {
  json pod = {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
              {"spec",
               {{"schedulerName", scheduler},
                {"priority", priority},
                {"containers",
                 {{{"name", "c"},
                   {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}}}}}}}},
              {"status", {{"phase", "Pending"}}}};
  if (!group.empty()) pod["spec"]["schedulingGroup"] = {{"podGroupName", group}};
  return pod;
}

const Task* TaskNamed(const ClusterState& s, const std::string& name) {
  for (const Task& t : s.tasks()) {
    if (t.name == name && t.job != kNone) return &t;
  }
  return nullptr;
}

struct Collected {
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
};

Collected Collect(ClusterCache& c, const Decisions& decisions = {}) {
  Collected out;
  c.CollectStatus(decisions, &out.conditions, &out.groups, &out.events);
  return out;
}

TEST(NativePodGroup, APodNamesItsGroupInSpecSchedulingGroupFirst) {
  json pod = Member("w0", "train");
  pod["metadata"]["annotations"] = {{"scheduling.k8s.io/group-name", "volcano-group"}};
  std::string problem;
  k8s::PodInfo info = Must(k8s::DecodePod(pod, &problem));
  EXPECT_EQ(problem, "");
  EXPECT_EQ(info.group_api, GroupApi::kNative);
  EXPECT_EQ(info.group, "train");
  info = Must(k8s::DecodePod(Member("w1", ""), &problem));
  EXPECT_EQ(info.group_api, GroupApi::kNone);
}

TEST(NativePodGroup, PodsWaitForTheirGroupThenTakeItsMinCountWhichMayChange) {
  ClusterCache c("gantry");
  for (int i = 0; i < 3; ++i) c.OnPod(EventType::kAdded, Member("w" + std::to_string(i), "train"));
  EXPECT_EQ(c.pending_pods(), 0);
  Collected waiting = Collect(c);
  ASSERT_EQ(waiting.conditions.size(), 3u);
  EXPECT_TRUE(Contains(waiting.conditions[0].message,
                       "waiting for PodGroup ml/train (scheduling.k8s.io/v1beta1) to exist"))
      << waiting.conditions[0].message;

  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, NativeGroup("train", Gang(3)));
  EXPECT_EQ(c.pending_pods(), 3);
  const Task* t = TaskNamed(c.state(), "ml/w0");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(c.state().job(t->job).min_member, 3);
  EXPECT_EQ(c.state().job(t->job).tasks.size(), 3u);
  // minCount is mutable: lowered, the job's gang size follows.
  c.OnPodGroup(GroupApi::kNative, EventType::kModified, NativeGroup("train", Gang(2)));
  EXPECT_EQ(c.state().job(TaskNamed(c.state(), "ml/w0")->job).min_member, 2);
  // Deleted, the pods wait again.
  c.OnPodGroup(GroupApi::kNative, EventType::kDeleted, NativeGroup("train", Gang(2)));
  EXPECT_EQ(c.pending_pods(), 0);
}

TEST(NativePodGroup, TheGroupGivesPriorityTopologyQueueAndDisruptionMode) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "r1"));
  json spec = Gang(2);
  spec["priority"] = 100;
  spec["disruptionMode"] = {{"all", json::object()}};
  spec["schedulingConstraints"] = {{"topology", {{{"key", "topology.gantry.dev/rack"}}}}};
  json group = NativeGroup("train", spec);
  group["metadata"]["annotations"] = {{"gantry.dev/queue", "research"}};
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, group);
  c.OnPod(EventType::kAdded, Member("w0", "train", "gantry", 100));
  c.OnPod(EventType::kAdded, Member("w1", "train", "gantry", 100));
  const Task* t = TaskNamed(c.state(), "ml/w0");
  ASSERT_NE(t, nullptr);
  const Job& job = c.state().job(t->job);
  EXPECT_EQ(job.priority, 100);
  EXPECT_TRUE(job.disrupt_whole);
  EXPECT_EQ(job.topology, (TopologyRequest{"topology.gantry.dev/rack", true}));
  EXPECT_EQ(c.state().queue(job.queue).name, "research");
}

// A namespace's annotation gantry.dev/queue is the queue of its jobs that name none: a
// native group without the annotation, and a lone pod; a group's own annotation still wins.
TEST(NativePodGroup, ANamespaceDefaultQueueTakesTheJobsThatNameNone) {
  ClusterCache c("gantry");
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, NativeGroup("train", Gang(1)));
  json named = NativeGroup("named", Gang(1));
  named["metadata"]["annotations"] = {{"gantry.dev/queue", "research"}};
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, named);
  c.OnPod(EventType::kAdded, Member("w0", "train"));
  c.OnPod(EventType::kAdded, Member("n0", "named"));
  c.OnPod(EventType::kAdded, Member("lone", ""));
  auto queue_of = [&](const std::string& pod) {
    const Task* t = TaskNamed(c.state(), "ml/" + pod);
    return t == nullptr ? std::string("(none)") : c.state().queue(c.state().job(t->job).queue).name;
  };
  EXPECT_EQ(queue_of("w0"), "default");
  json ns = {{"metadata", {{"name", "ml"}, {"annotations", {{"gantry.dev/queue", "team-ml"}}}}}};
  c.OnNamespace(EventType::kAdded, ns);
  EXPECT_EQ(queue_of("w0"), "team-ml");
  EXPECT_EQ(queue_of("lone"), "team-ml");
  EXPECT_EQ(queue_of("n0"), "research");
  ns["metadata"].erase("annotations");
  c.OnNamespace(EventType::kModified, ns);
  EXPECT_EQ(queue_of("w0"), "default");
}

TEST(NativePodGroup, PodsOfTwoSchedulersHoldTheGroupAsKubeSchedulerDoes) {
  ClusterCache c("gantry");
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, NativeGroup("train", Gang(2)));
  c.OnPod(EventType::kAdded, Member("w0", "train"));
  c.OnPod(EventType::kAdded, Member("w1", "train", "default-scheduler"));
  EXPECT_EQ(TaskNamed(c.state(), "ml/w0"), nullptr);
  Collected held = Collect(c);
  ASSERT_EQ(held.conditions.size(), 1u);
  EXPECT_TRUE(Contains(held.conditions[0].message,
                       "all pods in a single pod group should have the same .spec.schedulerName "
                       "set, got: \"default-scheduler\" (pod ml/w1) and \"gantry\""))
      << held.conditions[0].message;
  ASSERT_EQ(held.groups.size(), 1u);
  EXPECT_EQ(held.groups[0].api, GroupApi::kNative);
  EXPECT_FALSE(held.groups[0].scheduled);
  EXPECT_TRUE(held.groups[0].scheduler_error);
  // The other scheduler's pod gone, the group is scheduled.
  c.OnPod(EventType::kDeleted, Member("w1", "train", "default-scheduler"));
  EXPECT_NE(TaskNamed(c.state(), "ml/w0"), nullptr);
}

TEST(NativePodGroup, APodWhosePriorityIsNotTheGroupsHoldsTheGroup) {
  ClusterCache c("gantry");
  json spec = Gang(2);
  spec["priority"] = 10;
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, NativeGroup("train", spec));
  c.OnPod(EventType::kAdded, Member("w0", "train", "gantry", 10));
  EXPECT_NE(TaskNamed(c.state(), "ml/w0"), nullptr);
  c.OnPod(EventType::kAdded, Member("w1", "train", "gantry", 20));
  // Both are held, the one already a task too.
  EXPECT_EQ(TaskNamed(c.state(), "ml/w0"), nullptr);
  EXPECT_EQ(TaskNamed(c.state(), "ml/w1"), nullptr);
  Collected held = Collect(c);
  ASSERT_FALSE(held.conditions.empty());
  EXPECT_TRUE(Contains(held.conditions[0].message,
                       "should have the same priority as the pod group's priority, got 20 and 10"))
      << held.conditions[0].message;
  c.OnPod(EventType::kModified, Member("w1", "train", "gantry", 10));
  EXPECT_NE(TaskNamed(c.state(), "ml/w0"), nullptr);
  EXPECT_NE(TaskNamed(c.state(), "ml/w1"), nullptr);
}

TEST(NativePodGroup, TheConditionSaysUnschedulableThenScheduledAndIsThenLeftAlone) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", "r1"));
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, NativeGroup("train", Gang(2)));
  c.OnPod(EventType::kAdded, Member("w0", "train"));
  c.OnPod(EventType::kAdded, Member("w1", "train"));
  const Task* t = TaskNamed(c.state(), "ml/w0");
  ASSERT_NE(t, nullptr);
  Decisions decisions;
  decisions.pending.push_back({t->job, 2, "gang: 2 of 2 pods fit nowhere"});
  Collected first = Collect(c, decisions);
  ASSERT_EQ(first.groups.size(), 1u);
  EXPECT_FALSE(first.groups[0].scheduled);
  EXPECT_FALSE(first.groups[0].scheduler_error);
  EXPECT_TRUE(first.groups[0].transition);
  EXPECT_EQ(first.groups[0].generation, 3);
  EXPECT_TRUE(Contains(first.groups[0].unschedulable_message, "2 of 2 pods fit nowhere"));
  // The same again: nothing to write.
  EXPECT_TRUE(Collect(c, decisions).groups.empty());

  json bound = Member("w0", "train");
  bound["spec"]["nodeName"] = "n1";
  c.OnPod(EventType::kModified, bound);
  bound = Member("w1", "train");
  bound["spec"]["nodeName"] = "n1";
  c.OnPod(EventType::kModified, bound);
  Collected placed = Collect(c);
  ASSERT_EQ(placed.groups.size(), 1u);
  EXPECT_TRUE(placed.groups[0].scheduled);
  EXPECT_TRUE(placed.groups[0].transition);

  // Once the object says True it is terminal: a later wait writes nothing.
  json status = {{"conditions", {{{"type", "PodGroupInitiallyScheduled"}, {"status", "True"}}}}};
  c.OnPodGroup(GroupApi::kNative, EventType::kModified, NativeGroup("train", Gang(2), status));
  c.OnPod(EventType::kDeleted, bound);
  c.OnPod(EventType::kAdded, Member("w2", "train"));
  const Task* w2 = TaskNamed(c.state(), "ml/w2");
  ASSERT_NE(w2, nullptr);
  Decisions again;
  again.pending.push_back({w2->job, 1, "no room"});
  EXPECT_TRUE(Collect(c, again).groups.empty());
}

}  // namespace
}  // namespace gantry

// Kubernetes' CompositePodGroup (scheduling.k8s.io/v1alpha3): decoding, and what the
// daemon's cache makes of one: a job of its root whose tree of PodGroups is the engine
// job's group tree, the waits kube-scheduler has (a missing parent, too few children),
// and the CompositePodGroupInitiallyScheduled condition.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "k8s/objects.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;
using k8s::GroupApi;

json Object(const std::string& kind, const std::string& name, json spec) {
  return {{"apiVersion",
           kind == "PodGroup" ? "scheduling.k8s.io/v1beta1" : "scheduling.k8s.io/v1alpha3"},
          {"kind", kind},
          {"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
          {"spec", std::move(spec)}};
}

// A CompositePodGroup needing `min_groups` ready children, under `parent` ("": a root).
json Composite(const std::string& name, int min_groups, const std::string& parent = "") {
  json spec = {{"schedulingPolicy", {{"gang", {{"minGroupCount", min_groups}}}}},
               {"workloadRef", {{"name", "w"}}}};
  if (!parent.empty()) spec["parentCompositePodGroupName"] = parent;
  return Object("CompositePodGroup", name, spec);
}

// A PodGroup of the composite `parent` needing `min_count` pods.
json Child(const std::string& name, int min_count, const std::string& parent) {
  return Object("PodGroup", name,
                {{"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}},
                 {"parentCompositePodGroupName", parent}});
}

json Member(const std::string& name, const std::string& group) {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
          {"spec",
           {{"schedulerName", "gantry"},
            {"schedulingGroup", {{"podGroupName", group}}},
            {"containers",
             {{{"name", "c"},
               {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

const Task* TaskNamed(const ClusterState& s, const std::string& name) {
  for (const Task& t : s.tasks()) {
    if (t.name == name && t.job != kNone) return &t;
  }
  return nullptr;
}

std::vector<PodCondition> Conditions(ClusterCache& c) {
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  c.CollectStatus(Decisions{}, &conditions, &groups, &events);
  return conditions;
}

TEST(CompositePodGroup, Fields) {
  json object = Composite("serve", 2, "all");
  object["spec"]["priority"] = 100;
  object["spec"]["disruptionMode"] = {{"all", json::object()}};
  object["metadata"]["annotations"] = {{"gantry.dev/queue", "research"}};
  k8s::PodGroupInfo g = Must(k8s::ParsePodGroup(object, GroupApi::kComposite));
  EXPECT_EQ(g.api, GroupApi::kComposite);
  EXPECT_EQ(g.min_member, 2);  // children, not pods
  EXPECT_EQ(g.parent, "all");
  EXPECT_EQ(g.priority, 100);
  EXPECT_TRUE(g.disrupt_whole);
  EXPECT_EQ(g.queue, "research");
  object["status"] = {
      {"conditions", {{{"type", "CompositePodGroupInitiallyScheduled"}, {"status", "True"}}}}};
  EXPECT_TRUE(Must(k8s::ParseCompositePodGroup(object)).initially_scheduled);
  EXPECT_EQ(Must(k8s::ParseNativePodGroup(Child("a", 2, "serve"))).parent, "serve");
}

TEST(CompositePodGroup, WhatTheApiServerWouldRefuseIsRefusedNamingTheField) {
  auto error = [](json object) {
    auto r = k8s::ParseCompositePodGroup(object);
    EXPECT_FALSE(r.ok()) << object.dump();
    return r.ok() ? "" : r.status().message();
  };
  EXPECT_TRUE(Contains(error(Composite("serve", 0)),
                       "compositepodgroup ml/serve: spec.schedulingPolicy.gang.minGroupCount: 0 "
                       "is out of range"));
  json both = Composite("serve", 1);
  both["spec"]["schedulingPolicy"]["basic"] = json::object();
  EXPECT_TRUE(Contains(error(both), "spec.schedulingPolicy: exactly one of basic and gang"));
}

// Pods of two PodGroups under one CompositePodGroup: held until the whole chain exists,
// then one job of the root, its tree the engine's, each pod's task in its PodGroup's leaf.
TEST(CompositePodGroup, ThePodsOfATreeAreOneJobOfItsRoot) {
  ClusterCache c("gantry");
  for (const std::string group : {"a", "b"}) {
    for (int i = 0; i < 2; ++i)
      c.OnPod(EventType::kAdded, Member(group + std::to_string(i), group));
  }
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, Child("a", 2, "serve"));
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, Child("b", 2, "serve"));
  EXPECT_EQ(c.pending_pods(), 0) << "the root is missing";
  std::vector<PodCondition> waiting = Conditions(c);
  ASSERT_EQ(waiting.size(), 4u);
  EXPECT_TRUE(Contains(waiting[0].message,
                       "waiting for CompositePodGroup ml/serve "
                       "(scheduling.k8s.io/v1alpha3) does not exist yet"))
      << waiting[0].message;
  EXPECT_EQ(waiting[0].reason, kPodGroupNotReadyReason);

  c.OnPodGroup(GroupApi::kComposite, EventType::kAdded, Composite("serve", 2));
  EXPECT_EQ(c.pending_pods(), 4);
  const Task* a0 = TaskNamed(c.state(), "ml/a0");
  const Task* b1 = TaskNamed(c.state(), "ml/b1");
  ASSERT_NE(a0, nullptr);
  ASSERT_NE(b1, nullptr);
  ASSERT_EQ(a0->job, b1->job);
  const Job& job = c.state().job(a0->job);
  EXPECT_EQ(job.name, "cpg|ml/serve");
  const std::vector<TaskGroup> tree = {
      {"serve", -1, 2, false}, {"a", 0, 2, true}, {"b", 0, 2, true}};
  EXPECT_EQ(job.groups, tree);
  EXPECT_EQ(job.min_member, 4);
  EXPECT_EQ(a0->group, 1);
  EXPECT_EQ(b1->group, 2);

  // The root deleted: its pods wait for it again.
  c.OnPodGroup(GroupApi::kComposite, EventType::kDeleted, Composite("serve", 2));
  EXPECT_EQ(c.pending_pods(), 0);
}

TEST(CompositePodGroup, ARootWithFewerChildrenThanItNeedsWaitsForThem) {
  ClusterCache c("gantry");
  c.OnPod(EventType::kAdded, Member("a0", "a"));
  c.OnPodGroup(GroupApi::kComposite, EventType::kAdded, Composite("serve", 2));
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, Child("a", 1, "serve"));
  EXPECT_EQ(c.pending_pods(), 0);
  std::vector<PodCondition> waiting = Conditions(c);
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_TRUE(Contains(waiting[0].message,
                       "CompositePodGroup ml/serve: waiting for its groups: "
                       "group \"serve\": needs 2 ready groups but has 1"))
      << waiting[0].message;
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, Child("b", 1, "serve"));
  EXPECT_EQ(c.pending_pods(), 1);
}

// One session over the cache, its binds assumed, and the group statuses then collected,
// by group name.
std::map<std::string, GroupStatus> ScheduleAndCollect(ClusterCache& c, size_t binds) {
  const Policy policy = MustCompile(SchedulerConfig::Default());
  const Snapshot snapshot(c.state());
  Session session(snapshot, policy);
  const Decisions d = session.Run();
  EXPECT_EQ(d.binds.size(), binds);
  EXPECT_EQ(c.Assume(d).size(), binds);
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  c.CollectStatus(d, &conditions, &groups, &events);
  std::map<std::string, GroupStatus> by_name;
  for (GroupStatus& g : groups) by_name[g.name] = std::move(g);
  EXPECT_EQ(by_name.size(), groups.size()) << "a group reported twice";
  return by_name;
}

// Placed by a session, the tree is ready with each child's minimum: the root's
// CompositePodGroupInitiallyScheduled is written True.
TEST(CompositePodGroup, TheRootSaysWhenTheTreeIsScheduled) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded,
           {{"metadata", {{"name", "n1"}, {"uid", "uid-n1"}}},
            {"status",
             {{"allocatable",
               {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}}}}});
  c.OnPodGroup(GroupApi::kComposite, EventType::kAdded, Composite("serve", 2));
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, Child("a", 2, "serve"));
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, Child("b", 1, "serve"));
  for (const std::string pod : {"a0", "a1"}) c.OnPod(EventType::kAdded, Member(pod, "a"));
  c.OnPod(EventType::kAdded, Member("b0", "b"));
  ASSERT_EQ(c.pending_pods(), 3);
  // The root, and each child PodGroup with its own PodGroupInitiallyScheduled.
  std::map<std::string, GroupStatus> groups = ScheduleAndCollect(c, 3);
  ASSERT_EQ(groups.size(), 3u);
  ASSERT_TRUE(groups.count("serve") && groups.count("a") && groups.count("b"));
  EXPECT_EQ(groups["serve"].api, GroupApi::kComposite);
  EXPECT_TRUE(groups["serve"].scheduled);
  for (const char* child : {"a", "b"}) {
    EXPECT_EQ(groups[child].api, GroupApi::kNative) << child;
    EXPECT_TRUE(groups[child].scheduled) << child;
  }
}

// A child short of room says so on its own PodGroup, while its sibling that fits is True:
// each child is placed all or nothing on its own.
TEST(CompositePodGroup, EachChildSaysWhetherItIsScheduled) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded,
           {{"metadata", {{"name", "n1"}, {"uid", "uid-n1"}}},
            {"status",
             {{"allocatable",
               {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}}}}});
  c.OnPodGroup(GroupApi::kComposite, EventType::kAdded, Composite("serve", 1));
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, Child("a", 1, "serve"));
  c.OnPodGroup(GroupApi::kNative, EventType::kAdded, Child("big", 2, "serve"));
  c.OnPod(EventType::kAdded, Member("a0", "a"));
  json huge = Member("big0", "big");
  huge["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "100";
  c.OnPod(EventType::kAdded, huge);
  c.OnPod(EventType::kAdded, Member("big1", "big"));
  std::map<std::string, GroupStatus> groups = ScheduleAndCollect(c, 1);
  ASSERT_TRUE(groups.count("a") && groups.count("big")) << groups.size();
  EXPECT_TRUE(groups["a"].scheduled);
  EXPECT_EQ(groups["a"].phase, "True");
  EXPECT_FALSE(groups["big"].scheduled);
  EXPECT_EQ(groups["big"].phase, "False");
  EXPECT_FALSE(groups["big"].unschedulable_message.empty());
}

}  // namespace
}  // namespace gantry

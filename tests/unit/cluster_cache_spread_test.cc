// The daemon's cluster cache and default topology spreading: the selector kube-scheduler's
// helper.DefaultSelector builds from a pod's Services and controller, made again when
// those change (only for the pods they concern), pods kept pending by objects that cannot
// be read, nothing kept after its object; and the spreading a session then does.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "daemon/cluster_cache.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;
using k8s::SpreadOwnerKind;
using Op = SelectorRequirement::Op;

Labels L(std::vector<std::pair<std::string, std::string>> pairs) {
  return Labels(std::move(pairs));
}

json NodeObject(const std::string& name) {
  return {
      {"metadata",
       {{"name", name}, {"uid", "uid-" + name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
      {"status", {{"allocatable", {{"cpu", "8"}, {"memory", "32Gi"}, {"pods", "110"}}}}}};
}

// A pending pod of ours in `ns` with `labels`, controlled by `owner` ({kind, name}) if given.
json PodObject(const std::string& name, json labels, json owner = nullptr,
               const std::string& ns = "ml") {
  json pod = {{"metadata",
               {{"name", name},
                {"namespace", ns},
                {"uid", "uid-" + name},
                {"labels", std::move(labels)},
                {"creationTimestamp", "2025-01-01T00:00:00Z"}}},
              {"spec",
               {{"schedulerName", "gantry"},
                {"containers", {{{"name", "c"}, {"resources", {{"requests", {{"cpu", "1"}}}}}}}}}},
              {"status", {{"phase", "Pending"}}}};
  if (!owner.is_null()) {
    const std::string kind = owner[0];
    owner = {{"apiVersion", kind == "ReplicationController" ? "v1" : "apps/v1"},
             {"kind", kind},
             {"name", owner[1]},
             {"uid", "uid-owner"},
             {"controller", true}};
    pod["metadata"]["ownerReferences"] = json::array({owner});
  }
  return pod;
}

json Service(const std::string& name, json selector, const std::string& ns = "ml") {
  json s = {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-svc-" + name}}},
            {"spec", {{"ports", {{{"port", 80}}}}}}};
  if (!selector.is_null()) s["spec"]["selector"] = std::move(selector);
  return s;
}

json Owner(const std::string& name, json selector) {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-owner"}}},
          {"spec", {{"replicas", 3}, {"selector", std::move(selector)}}}};
}

const Task* TaskNamed(const ClusterState& s, const std::string& name) {
  for (const Task& t : s.tasks()) {
    if (t.name == name && t.job != kNone) return &t;
  }
  return nullptr;
}

// The default selector of the pod's pending task; nullopt when it has none or no task.
std::optional<LabelSelector> SelectorOf(const ClusterCache& c, const std::string& pod) {
  const Task* t = TaskNamed(c.state(), pod);
  if (t == nullptr) return std::nullopt;
  return c.state().spec(t->spec).default_spread_selector;
}

LabelSelector Selector(Labels labels, std::vector<SelectorRequirement> expressions = {}) {
  return LabelSelector{std::move(labels), std::move(expressions)};
}

ClusterCache Spreading() {
  ClusterCache c("gantry");
  c.EnableDefaultSpreading(true);
  return c;
}

// The PodScheduled=False messages written so far, the latest for each pod.
std::string MessageOf(ClusterCache& c, const std::string& pod) {
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  c.CollectStatus(Decisions{}, &conditions, &groups, &events);
  for (const PodCondition& cond : conditions) {
    if (cond.name == pod) return cond.message;
  }
  return "";
}

TEST(ClusterCacheSpread, ServicesThatSelectThePodMergedWithItsReplicaSet) {
  ClusterCache c = Spreading();
  c.OnService(EventType::kAdded, Service("web", {{"app", "web"}}));
  c.OnService(EventType::kAdded, Service("frontends", {{"tier", "fe"}}));
  c.OnService(EventType::kAdded, Service("db", {{"app", "db"}}));                 // not it
  c.OnService(EventType::kAdded, Service("all-web", {{"app", "web"}}, "other"));  // elsewhere
  c.OnService(EventType::kAdded, Service("headless", nullptr));                   // selects none
  c.OnSpreadOwner(
      SpreadOwnerKind::kReplicaSet, EventType::kAdded,
      Owner("web-abc",
            {{"matchLabels", {{"app", "web"}}},
             {"matchExpressions",
              {{{"key", "pod-template-hash"}, {"operator", "In"}, {"values", {"abc"}}}}}}));
  c.OnPod(EventType::kAdded,
          PodObject("web-0", {{"app", "web"}, {"tier", "fe"}, {"pod-template-hash", "abc"}},
                    {"ReplicaSet", "web-abc"}));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), Selector(L({{"app", "web"}, {"tier", "fe"}}),
                                                {{"pod-template-hash", Op::kIn, {"abc"}}}));
  EXPECT_TRUE(c.state().spec(TaskNamed(c.state(), "ml/web-0")->spec).default_spreading());
}

TEST(ClusterCacheSpread, ControllerKindsAsKubeSchedulerMergesThem) {
  ClusterCache c = Spreading();
  c.OnService(EventType::kAdded, Service("svc", {{"app", "a"}}));
  // A ReplicationController's selector map is merged into the Services' labels, its values
  // winning (labels.Merge); a StatefulSet's requirements are added to them (both hold).
  c.OnSpreadOwner(SpreadOwnerKind::kReplicationController, EventType::kAdded,
                  Owner("rc", {{"app", "b"}, {"rc", "x"}}));
  c.OnSpreadOwner(SpreadOwnerKind::kStatefulSet, EventType::kAdded,
                  Owner("ss", {{"matchLabels", {{"app", "b"}, {"ss", "y"}}}}));
  c.OnPod(EventType::kAdded, PodObject("by-rc", {{"app", "a"}}, {"ReplicationController", "rc"}));
  c.OnPod(EventType::kAdded, PodObject("by-ss", {{"app", "a"}}, {"StatefulSet", "ss"}));
  EXPECT_EQ(SelectorOf(c, "ml/by-rc"), Selector(L({{"app", "b"}, {"rc", "x"}})));
  EXPECT_EQ(SelectorOf(c, "ml/by-ss"),
            Selector(L({{"app", "a"}, {"ss", "y"}}), {{"app", Op::kIn, {"b"}}}));
  // An owner of another kind, or one not known (yet): the Services' selector alone.
  c.OnPod(EventType::kAdded, PodObject("by-unknown", {{"app", "a"}}, {"ReplicaSet", "gone"}));
  EXPECT_EQ(SelectorOf(c, "ml/by-unknown"), Selector(L({{"app", "a"}})));
}

TEST(ClusterCacheSpread, NoSelectorWithoutServicesOwnersOrDefaults) {
  {
    ClusterCache c = Spreading();
    c.OnPod(EventType::kAdded, PodObject("lone", {{"app", "web"}}));
    ASSERT_NE(TaskNamed(c.state(), "ml/lone"), nullptr);
    EXPECT_EQ(SelectorOf(c, "ml/lone"), std::nullopt);
    // An owner whose selector is empty adds no requirement: still none.
    c.OnSpreadOwner(SpreadOwnerKind::kReplicaSet, EventType::kAdded, Owner("rs", json::object()));
    c.OnPod(EventType::kAdded, PodObject("owned", {{"app", "web"}}, {"ReplicaSet", "rs"}));
    EXPECT_EQ(SelectorOf(c, "ml/owned"), std::nullopt);
  }
  {
    // A pod with constraints of its own is spread by them, not by defaults.
    ClusterCache c = Spreading();
    c.OnService(EventType::kAdded, Service("web", {{"app", "web"}}));
    json pod = PodObject("own", {{"app", "web"}});
    pod["spec"]["topologySpreadConstraints"] = {
        {{"maxSkew", 1},
         {"topologyKey", "kubernetes.io/hostname"},
         {"whenUnsatisfiable", "DoNotSchedule"},
         {"labelSelector", {{"matchLabels", {{"app", "web"}}}}}}};
    c.OnPod(EventType::kAdded, pod);
    ASSERT_NE(TaskNamed(c.state(), "ml/own"), nullptr);
    EXPECT_EQ(SelectorOf(c, "ml/own"), std::nullopt);
  }
  {
    // The engine without default constraints: nothing is computed.
    ClusterCache c("gantry");
    c.OnService(EventType::kAdded, Service("web", {{"app", "web"}}));
    c.OnPod(EventType::kAdded, PodObject("web-0", {{"app", "web"}}));
    ASSERT_NE(TaskNamed(c.state(), "ml/web-0"), nullptr);
    EXPECT_EQ(SelectorOf(c, "ml/web-0"), std::nullopt);
  }
}

TEST(ClusterCacheSpread, ChangesRemakeThePendingPodsSelector) {
  ClusterCache c = Spreading();
  c.OnPod(EventType::kAdded,
          PodObject("web-0", {{"app", "web"}, {"v", "1"}}, {"ReplicaSet", "rs"}));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), std::nullopt);
  // A Service that selects it comes, changes, stops selecting it, goes.
  c.OnService(EventType::kAdded, Service("web", {{"app", "web"}}));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), Selector(L({{"app", "web"}})));
  c.OnService(EventType::kModified, Service("web", {{"app", "web"}, {"v", "1"}}));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), Selector(L({{"app", "web"}, {"v", "1"}})));
  c.OnService(EventType::kModified, Service("web", {{"app", "web"}, {"v", "2"}}));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), std::nullopt);
  c.OnService(EventType::kModified, Service("web", {{"app", "web"}}));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), Selector(L({{"app", "web"}})));
  // Its ReplicaSet comes (known only now), and goes.
  c.OnSpreadOwner(SpreadOwnerKind::kReplicaSet, EventType::kAdded,
                  Owner("rs", {{"matchLabels", {{"app", "web"}, {"v", "1"}}}}));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), Selector(L({{"app", "web"}, {"v", "1"}})));
  c.OnService(EventType::kDeleted, Service("web", nullptr));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), Selector(L({{"app", "web"}, {"v", "1"}})));
  c.OnSpreadOwner(SpreadOwnerKind::kReplicaSet, EventType::kDeleted, Owner("rs", nullptr));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), std::nullopt);
  // The pod's own labels change: made again.
  c.OnService(EventType::kAdded, Service("db", {{"app", "db"}}));
  c.OnPod(EventType::kModified, PodObject("web-0", {{"app", "db"}}));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), Selector(L({{"app", "db"}})));
}

TEST(ClusterCacheSpread, AChangeResyncsOnlyThePodsItConcerns) {
  ClusterCache c = Spreading();
  for (int i = 0; i < 50; ++i) {
    c.OnPod(EventType::kAdded, PodObject("a-" + std::to_string(i), {{"app", "a"}}));
    c.OnPod(EventType::kAdded, PodObject("b-" + std::to_string(i), {{"app", "b"}}, nullptr, "b"));
  }
  // A Service in namespace b visits b's pods only, once each.
  int64_t before = c.pod_records_visited();
  c.OnService(EventType::kAdded, Service("b", {{"app", "b"}}, "b"));
  EXPECT_LE(c.pod_records_visited() - before, 2 * 50);
  EXPECT_EQ(SelectorOf(c, "b/b-7"), Selector(L({{"app", "b"}})));
  EXPECT_EQ(SelectorOf(c, "ml/a-7"), std::nullopt);
  // A ReplicaSet visits the pods it controls: none here.
  before = c.pod_records_visited();
  c.OnSpreadOwner(SpreadOwnerKind::kReplicaSet, EventType::kAdded,
                  Owner("rs", {{"matchLabels", {{"app", "a"}}}}));
  EXPECT_EQ(c.pod_records_visited(), before);
  // Bound pods are spread by no default selector of their own: left alone.
  json bound = PodObject("a-0", {{"app", "a"}});
  bound["spec"]["nodeName"] = "n0";
  c.OnNode(EventType::kAdded, NodeObject("n0"));
  c.OnPod(EventType::kModified, bound);
  EXPECT_EQ(c.sizes().spread_index, 2u * 50 - 1);
}

TEST(ClusterCacheSpread, UnreadableServiceOrControllerKeepsItsPodsPendingSayingWhy) {
  ClusterCache c = Spreading();
  c.OnPod(EventType::kAdded, PodObject("web-0", {{"app", "web"}}, {"ReplicaSet", "rs"}));
  c.OnPod(EventType::kAdded, PodObject("other-ns", {{"app", "web"}}, nullptr, "elsewhere"));
  ASSERT_EQ(c.pending_pods(), 2);
  c.OnService(EventType::kAdded, Service("web", {{"app", 7}}));
  std::vector<ObjectEvent> problems = c.TakeProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, "Service");
  EXPECT_EQ(problems[0].name, "web");
  EXPECT_EQ(problems[0].reason, "InvalidService");
  EXPECT_EQ(problems[0].message, "service ml/web: spec.selector.app: expected a string, got 7");
  EXPECT_EQ(TaskNamed(c.state(), "ml/web-0"), nullptr);
  EXPECT_NE(TaskNamed(c.state(), "elsewhere/other-ns"), nullptr);  // another namespace
  EXPECT_EQ(MessageOf(c, "web-0"),
            "service \"web\" cannot be read by gantry: service ml/web: spec.selector.app: "
            "expected a string, got 7; the pod's default topology spreading (kube-scheduler's, "
            "by the selectors of the Services that select it and of its controller) needs it, "
            "so the pod stays pending");
  // Said once, however often it comes so.
  c.OnService(EventType::kModified, Service("web", {{"app", 7}}));
  EXPECT_TRUE(c.TakeProblems().empty());
  // Mended: placed with it.
  c.OnService(EventType::kModified, Service("web", {{"app", "web"}}));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), Selector(L({{"app", "web"}})));
  // Its ReplicaSet cannot be read: it waits, the other pods do not.
  c.OnSpreadOwner(SpreadOwnerKind::kReplicaSet, EventType::kAdded,
                  Owner("rs", {{"matchExpressions",
                                {{{"key", "app"}, {"operator", "Exists"}, {"values", {"x"}}}}}}));
  problems = c.TakeProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].api_version, "apps/v1");
  EXPECT_EQ(problems[0].kind, "ReplicaSet");
  EXPECT_EQ(problems[0].reason, "InvalidReplicaSet");
  EXPECT_EQ(problems[0].message,
            "replicaset ml/rs: spec.selector.matchExpressions[0].values: operator Exists takes no "
            "values");
  EXPECT_EQ(TaskNamed(c.state(), "ml/web-0"), nullptr);
  EXPECT_TRUE(Contains(MessageOf(c, "web-0"),
                       "replicaset \"rs\" (the pod's controller) cannot be read by gantry: "
                       "replicaset ml/rs: spec.selector.matchExpressions[0].values"));
  c.OnSpreadOwner(SpreadOwnerKind::kReplicaSet, EventType::kDeleted, Owner("rs", nullptr));
  EXPECT_EQ(SelectorOf(c, "ml/web-0"), Selector(L({{"app", "web"}})));
}

TEST(ClusterCacheSpread, NothingOutlivesItsObject) {
  ClusterCache c = Spreading();
  c.OnService(EventType::kAdded, Service("web", {{"app", "web"}}));
  c.OnService(EventType::kAdded, Service("bad", {{"app", 1}}, "other"));
  c.OnSpreadOwner(SpreadOwnerKind::kReplicaSet, EventType::kAdded,
                  Owner("rs", {{"matchLabels", {{"app", "web"}}}}));
  c.OnSpreadOwner(SpreadOwnerKind::kStatefulSet, EventType::kAdded, Owner("ss", "bad"));
  c.OnPod(EventType::kAdded, PodObject("web-0", {{"app", "web"}}, {"ReplicaSet", "rs"}));
  ClusterCache::Sizes s = c.sizes();
  EXPECT_EQ(s.services, 2u);
  EXPECT_EQ(s.spread_owners, 2u);
  EXPECT_EQ(s.spread_index, 2u);       // by namespace and by owner
  EXPECT_GT(s.component_records, 0u);  // the pod default spreading follows
  c.OnPod(EventType::kDeleted, PodObject("web-0", {{"app", "web"}}));
  c.OnService(EventType::kDeleted, Service("web", nullptr));
  c.OnService(EventType::kDeleted, Service("bad", nullptr, "other"));
  c.OnSpreadOwner(SpreadOwnerKind::kReplicaSet, EventType::kDeleted, Owner("rs", nullptr));
  c.OnSpreadOwner(SpreadOwnerKind::kStatefulSet, EventType::kDeleted, Owner("ss", nullptr));
  s = c.sizes();
  EXPECT_EQ(s.services, 0u);
  EXPECT_EQ(s.spread_owners, 0u);
  EXPECT_EQ(s.spread_index, 0u);
  EXPECT_EQ(s.pods, 0u);
  EXPECT_EQ(s.specs, 0u);
  EXPECT_EQ(s.component_records, 0u);
}

// The session with default constraints DoNotSchedule on the hostname, maxSkew 1 (the
// integration test's configuration): a ReplicaSet's replicas, which binpack alone stacks,
// go one per node; pods of no Service or controller still stack.
TEST(ClusterCacheSpread, SessionSpreadsTheReplicasOnePerNode) {
  SchedulerConfig config = SchedulerConfig::Default();
  for (PluginConfig& p : config.plugins) {
    if (p.name != "podtopologyspread") continue;
    p = Must(PluginWithTextArguments("podtopologyspread",
                                     {{"defaultingType", "List"},
                                      {"defaultConstraints",
                                       "[{maxSkew: 1, topologyKey: kubernetes.io/hostname, "
                                       "whenUnsatisfiable: DoNotSchedule}]"}}));
    ASSERT_TRUE(PodTopologySpreadHasDefaults(p));
  }
  ClusterCache c = Spreading();
  for (const char* n : {"n0", "n1", "n2"}) c.OnNode(EventType::kAdded, NodeObject(n));
  c.OnService(EventType::kAdded, Service("web", {{"app", "web"}}));
  c.OnSpreadOwner(SpreadOwnerKind::kReplicaSet, EventType::kAdded,
                  Owner("web-abc", {{"matchLabels", {{"app", "web"}}}}));
  for (int i = 0; i < 3; ++i) {
    c.OnPod(EventType::kAdded,
            PodObject("web-" + std::to_string(i), {{"app", "web"}}, {"ReplicaSet", "web-abc"}));
    c.OnPod(EventType::kAdded, PodObject("loose-" + std::to_string(i), {{"app", "loose"}}));
  }
  const Decisions d = RunSession(c.state(), config);
  std::map<std::string, std::set<std::string>> nodes;  // app -> nodes
  for (const BindDecision& b : d.binds) {
    const std::string& task = c.state().task(b.task).name;
    nodes[task.substr(3, 3)].insert(c.state().node(b.node).name);
  }
  ASSERT_EQ(d.binds.size(), 6u);
  EXPECT_EQ(nodes["web"], (std::set<std::string>{"n0", "n1", "n2"}));
  EXPECT_EQ(nodes["loo"].size(), 1u);  // stacked by binpack
}

TEST(PodTopologySpreadHasDefaults, SystemOrANonEmptyList) {
  auto has = [](std::map<std::string, std::string> args) {
    return PodTopologySpreadHasDefaults(
        Must(PluginWithTextArguments("podtopologyspread", std::move(args))));
  };
  EXPECT_TRUE(has({}));
  EXPECT_TRUE(has({{"defaultingType", "System"}}));
  EXPECT_TRUE(has({{"defaultConstraints",
                    "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]"}}));
  EXPECT_FALSE(has({{"defaultingType", "List"}}));
  EXPECT_FALSE(has({{"defaultingType", "List"}, {"defaultConstraints", "[]"}}));
  EXPECT_FALSE(has({{"defaultingType", "Bogus"}}));
}

}  // namespace
}  // namespace gantry

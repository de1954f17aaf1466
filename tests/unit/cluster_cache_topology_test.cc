// The daemon's topology requests: Volcano PodGroups' spec.networkTopology, Kueue's podset
// topology annotations on pods, and topologyKeys in the configuration, into Job::topology.
#include <gtest/gtest.h>

#include <string>

#include "daemon/cluster_cache.h"
#include "daemon/config.h"
#include "k8s/objects.h"
#include "k8s/topology_objects.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;

json Pod(const std::string& name, json annotations) {
  return {{"metadata",
           {{"name", name},
            {"namespace", "ml"},
            {"uid", "uid-" + name},
            {"resourceVersion", "1"},
            {"annotations", std::move(annotations)}}},
          {"spec",
           {{"schedulerName", "gantry"},
            {"containers",
             {{{"name", "c"}, {"resources", {{"requests", {{"nvidia.com/gpu", "1"}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

json Group(const std::string& name, json spec) {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-pg-" + name}}},
          {"spec", std::move(spec)}};
}

JobId JobOfTask(const ClusterState& s, const std::string& name) {
  for (const Task& t : s.tasks()) {
    if (t.name == name && t.job != kNone) return t.job;
  }
  ADD_FAILURE() << "no task " << name;
  return 0;
}

// A Volcano PodGroup "train" of one member whose networkTopology is `mode` up to `tier`.
json TrainGroup(const std::string& mode, int tier) {
  return Group("train", {{"minMember", 1},
                         {"networkTopology", {{"mode", mode}, {"highestTierAllowed", tier}}}});
}

TEST(ParsePodGroup, NetworkTopology) {
  const k8s::PodGroupInfo hard = Must(k8s::ParsePodGroup(
      Group("g",
            {{"minMember", 2}, {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 2}}}}),
      k8s::GroupApi::kVolcano));
  EXPECT_EQ(hard.network_topology_tier, 2);
  EXPECT_TRUE(hard.network_topology_hard);
  const k8s::PodGroupInfo soft = Must(k8s::ParsePodGroup(
      Group("g", {{"networkTopology", {{"mode", "soft"}}}}), k8s::GroupApi::kVolcano));
  EXPECT_EQ(soft.network_topology_tier, 1);  // Volcano's default
  EXPECT_FALSE(soft.network_topology_hard);
  const k8s::PodGroupInfo none =
      Must(k8s::ParsePodGroup(Group("g", {{"minMember", 2}}), k8s::GroupApi::kVolcano));
  EXPECT_EQ(none.network_topology_tier, 0);
  for (const auto& [topology, part] : std::vector<std::pair<json, std::string>>{
           {{{"mode", "strict"}}, "spec.networkTopology.mode: \"strict\" is not hard or soft"},
           {{{"mode", "hard"}, {"highestTierAllowed", 0}},
            "spec.networkTopology.highestTierAllowed: 0 is out of range"},
           {{{"mode", "hard"}, {"highestTierAllowed", "two"}}, "highestTierAllowed"}}) {
    auto r =
        k8s::ParsePodGroup(Group("g", {{"networkTopology", topology}}), k8s::GroupApi::kVolcano);
    ASSERT_FALSE(r.ok()) << topology.dump();
    EXPECT_NE(r.status().message().find("podgroup ml/g"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find(part), std::string::npos) << r.status().message();
  }
}

TEST(ParsePod, KueueTopologyAnnotations) {
  const k8s::PodInfo required =
      Must(k8s::ParsePod(Pod("a", {{"kueue.x-k8s.io/podset-required-topology", "rack"}})));
  EXPECT_EQ(required.topology, (TopologyRequest{"rack", true}));
  const k8s::PodInfo preferred =
      Must(k8s::ParsePod(Pod("b", {{"kueue.x-k8s.io/podset-preferred-topology", "block"}})));
  EXPECT_EQ(preferred.topology, (TopologyRequest{"block", false}));
  EXPECT_EQ(Must(k8s::ParsePod(Pod("c", json::object()))).topology, TopologyRequest{});
}

TEST(ClusterCacheTopology, AVolcanoTierNamesALevelCountedFromTheInnermost) {
  ClusterCache c("gantry");
  c.SetTopologyKeys({"block", "spine", "leaf"});
  c.OnPod(EventType::kAdded, Pod("w0", {{"scheduling.k8s.io/group-name", "train"}}));
  c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded, TrainGroup("hard", 2));
  const JobId job = JobOfTask(c.state(), "ml/w0");
  EXPECT_EQ(c.state().job(job).topology, (TopologyRequest{"spine", true}));
  // Above the outermost level: the whole cluster, no constraint.
  c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kModified, TrainGroup("soft", 4));
  EXPECT_EQ(c.state().job(job).topology, TopologyRequest{});
}

TEST(ClusterCacheTopology, PodsAnnotationsGiveTheGroupsRequestAndFollowThePods) {
  ClusterCache c("gantry");
  c.SetTopologyKeys({"spine", "leaf"});
  const json annotations = {{"scheduling.k8s.io/group-name", "train"},
                            {"kueue.x-k8s.io/podset-required-topology", "leaf"}};
  c.OnPod(EventType::kAdded, Pod("w0", annotations));
  c.OnPod(EventType::kAdded, Pod("w1", annotations));
  c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded, Group("train", {{"minMember", 2}}));
  const JobId job = JobOfTask(c.state(), "ml/w0");
  EXPECT_EQ(c.state().job(job).topology, (TopologyRequest{"leaf", true}));
  c.OnPod(EventType::kDeleted, Pod("w0", annotations));
  c.OnPod(EventType::kDeleted, Pod("w1", annotations));
  c.OnPod(EventType::kAdded, Pod("w2", {{"scheduling.k8s.io/group-name", "train"}}));
  const JobId after = JobOfTask(c.state(), "ml/w2");
  EXPECT_EQ(c.state().job(after).topology, TopologyRequest{});
}

json KueueTopology(const std::string& name, json levels) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "Topology"},
          {"metadata", {{"name", name}, {"uid", "uid-t-" + name}}},
          {"spec", {{"levels", std::move(levels)}}}};
}

TEST(ParseKueueTopology, LevelsAndErrors) {
  const k8s::KueueTopologyInfo t = Must(k8s::ParseKueueTopology(
      KueueTopology("default", {{{"nodeLabel", "block"}}, {{"nodeLabel", "rack"}}})));
  EXPECT_EQ(t.levels, (std::vector<std::string>{"block", "rack"}));
  for (const auto& [levels, part] : std::vector<std::pair<json, std::string>>{
           {json::array(), "topology default: spec.levels: expected a list of 1 to 16 levels"},
           {{{{"nodeLabel", ""}}}, "spec.levels[0].nodeLabel: expected a node label key"},
           {{{{"nodeLabel", "a"}}, {{"nodeLabel", "a"}}},
            "spec.levels[1].nodeLabel: \"a\" is given twice"}}) {
    auto r = k8s::ParseKueueTopology(KueueTopology("default", levels));
    ASSERT_FALSE(r.ok()) << levels.dump();
    EXPECT_NE(r.status().message().find(part), std::string::npos) << r.status().message();
  }
}

TEST(ClusterCacheTopology, AKueueTopologyGivesTheLevelsUnlessTheConfigurationDoes) {
  ClusterCache c("gantry");
  const std::vector<std::string> defaults = c.state().topology_keys();
  json node = {{"metadata", {{"name", "n1"}, {"uid", "uid-n1"}, {"labels", {{"rack", "r1"}}}}},
               {"status", {{"allocatable", {{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}}}}}};
  c.OnNode(EventType::kAdded, node);
  c.OnKueueTopology(EventType::kAdded, KueueTopology("b-second", {{{"nodeLabel", "other"}}}));
  c.OnKueueTopology(EventType::kAdded,
                    KueueTopology("a-first", {{{"nodeLabel", "block"}}, {{"nodeLabel", "rack"}}}));
  EXPECT_EQ(c.state().topology_keys(), (std::vector<std::string>{"block", "rack"}));
  // The node added before has its path again.
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).topology,
            (std::vector<std::string>{"", "r1"}));
  // An invalid one is reported, and what was known holds.
  c.OnKueueTopology(EventType::kModified, KueueTopology("a-first", json::array()));
  EXPECT_EQ(c.state().topology_keys(), (std::vector<std::string>{"block", "rack"}));
  bool reported = false;
  for (const ObjectEvent& e : c.TakeProblems()) {
    reported = reported || (e.kind == "Topology" && e.reason == "InvalidTopology");
  }
  EXPECT_TRUE(reported);
  c.OnKueueTopology(EventType::kDeleted, KueueTopology("a-first", json::array()));
  EXPECT_EQ(c.state().topology_keys(), (std::vector<std::string>{"other"}));
  c.OnKueueTopology(EventType::kDeleted, KueueTopology("b-second", json::array()));
  EXPECT_EQ(c.state().topology_keys(), defaults);

  // A Volcano tier is read again against the new levels: tier 1 of [block, rack] is rack.
  c.OnPod(EventType::kAdded, Pod("w0", {{"scheduling.k8s.io/group-name", "train"}}));
  c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded, TrainGroup("hard", 1));
  const JobId job = JobOfTask(c.state(), "ml/w0");
  EXPECT_EQ(c.state().job(job).topology, (TopologyRequest{defaults.back(), true}));
  c.OnKueueTopology(EventType::kAdded,
                    KueueTopology("a-first", {{{"nodeLabel", "block"}}, {{"nodeLabel", "rack"}}}));
  EXPECT_EQ(c.state().job(job).topology, (TopologyRequest{"rack", true}));

  ClusterCache configured("gantry");
  configured.SetTopologyKeys({"spine", "leaf"});
  configured.OnKueueTopology(EventType::kAdded, KueueTopology("t", {{{"nodeLabel", "block"}}}));
  EXPECT_EQ(configured.state().topology_keys(), (std::vector<std::string>{"spine", "leaf"}));
}

json HyperNodeObject(const std::string& name, int tier, json members) {
  return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
          {"kind", "HyperNode"},
          {"metadata", {{"name", name}, {"uid", "uid-h-" + name}}},
          {"spec", {{"tier", tier}, {"members", std::move(members)}}}};
}

TEST(ClusterCacheTopology, HyperNodesLabelNodesAndTheirTiersAreTheLevels) {
  ClusterCache c("gantry");
  json node = {{"metadata", {{"name", "n1"}, {"uid", "uid-n1"}, {"labels", {{"rack", "r1"}}}}},
               {"status", {{"allocatable", {{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}}}}}};
  c.OnNode(EventType::kAdded, node);
  c.OnHyperNode(
      EventType::kAdded,
      HyperNodeObject("leaf-a", 1,
                      {{{"type", "Node"},
                        {"selector", {{"labelMatch", {{"matchLabels", {{"rack", "r1"}}}}}}}}}));
  c.OnHyperNode(EventType::kAdded,
                HyperNodeObject("spine", 2,
                                {{{"type", "HyperNode"},
                                  {"selector", {{"exactMatch", {{"name", "leaf-a"}}}}}}}));
  const std::string tier1 = HyperNodeLevelKey(1), tier2 = HyperNodeLevelKey(2);
  EXPECT_EQ(c.state().topology_keys(), (std::vector<std::string>{tier2, tier1}));
  const Node& n1 = c.state().node(c.state().FindNode("n1"));
  EXPECT_EQ(n1.topology, (std::vector<std::string>{"spine", "leaf-a"}));
  // A node added after gets its labels at once; its own labels are kept.
  node["metadata"]["name"] = "n2";
  c.OnNode(EventType::kAdded, node);
  const Node& n2 = c.state().node(c.state().FindNode("n2"));
  EXPECT_EQ(n2.topology, (std::vector<std::string>{"spine", "leaf-a"}));
  ASSERT_NE(n2.labels.Find("rack"), nullptr);
  // A Volcano tier names the HyperNodes' level of that tier.
  c.OnPod(EventType::kAdded, Pod("w0", {{"scheduling.k8s.io/group-name", "train"}}));
  c.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded, TrainGroup("hard", 1));
  const JobId job = JobOfTask(c.state(), "ml/w0");
  EXPECT_EQ(c.state().job(job).topology, (TopologyRequest{tier1, true}));
  // A cycle is an event, once; the tree without it holds.
  c.OnHyperNode(EventType::kAdded,
                HyperNodeObject(
                    "loop", 3,
                    {{{"type", "HyperNode"}, {"selector", {{"exactMatch", {{"name", "loop"}}}}}}}));
  c.OnHyperNode(EventType::kModified,
                HyperNodeObject(
                    "loop", 3,
                    {{{"type", "HyperNode"}, {"selector", {{"exactMatch", {{"name", "loop"}}}}}}}));
  int cycles = 0;
  for (const ObjectEvent& e : c.TakeProblems()) {
    cycles += e.reason == "InvalidHyperNode" && e.message.find("loop > loop") != std::string::npos;
  }
  EXPECT_EQ(cycles, 1);
  EXPECT_EQ(c.state().topology_keys(), (std::vector<std::string>{tier2, tier1}));
  // The leaf goes: the nodes lose its label and keep the others.
  c.OnHyperNode(EventType::kDeleted, HyperNodeObject("leaf-a", 1, json::array()));
  EXPECT_EQ(c.state().topology_keys(), (std::vector<std::string>{tier2}));
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).labels.Find(tier1), nullptr);
  EXPECT_EQ(c.state().node(c.state().FindNode("n1")).labels.Find(tier2), nullptr);
  EXPECT_NE(c.state().node(c.state().FindNode("n1")).labels.Find("rack"), nullptr);
}

TEST(ParseDaemonConfig, TopologyKeys) {
  DaemonConfig config;
  ASSERT_TRUE(ParseDaemonConfig("topologyKeys: [spine, leaf]\n", "cfg.yaml", &config).ok());
  EXPECT_EQ(config.topology_keys, (std::vector<std::string>{"spine", "leaf"}));
  ASSERT_TRUE(ParseDaemonConfig("", "cfg.yaml", &config).ok());
  EXPECT_TRUE(config.topology_keys.empty());
  for (const auto& [text, part] : std::vector<std::pair<std::string, std::string>>{
           {"topologyKeys: [leaf, leaf]\n",
            "cfg.yaml:1:22: topologyKeys[1]: duplicate level \"leaf\""},
           {"topologyKeys: leaf\n", "topologyKeys: expected a list"},
           {"topologyKeys: [[a]]\n", "topologyKeys[0]"}}) {
    const Status st = ParseDaemonConfig(text, "cfg.yaml", &config);
    ASSERT_FALSE(st.ok()) << text;
    EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace gantry

// NodeDeclaredFeatures: the features a pod needs, inferred as component-helpers'
// nodedeclaredfeatures registry (v0.37.2) infers them for scheduling; a node's declared
// ones; and the predicates refusing a node that lacks one, in kube-scheduler's words.
#include "k8s/declared_features.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/session.h"
#include "k8s/objects.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using Features = std::vector<std::string>;

Node CpuNode(const std::string& name) {
  Node node;
  node.name = name;
  node.allocatable = {{kCpu, 4000}, {kMemory, 16 * kGiB}, {kPods, 110 * kMilliPerUnit}};
  return node;
}

TEST(DeclaredFeatures, WhatAPodNeedsAsTheUpstreamRegistryInfersIt) {
  const json restart_rule = {{"action", "RestartAllContainers"},
                             {"exitCodes", {{"operator", "In"}, {"values", {42}}}}};
  struct Case {
    const char* description;
    json spec;
    Features want;
  };
  const std::vector<Case> cases = {
      {"a plain pod needs nothing", {{"containers", {{{"name", "c"}}}}}, {}},
      {"a container rule that restarts all containers",
       {{"containers", {{{"name", "c"}, {"restartPolicyRules", {restart_rule}}}}}},
       {"RestartAllContainersOnContainerExits"}},
      {"an init container's rule too",
       {{"initContainers", {{{"name", "i"}, {"restartPolicyRules", {restart_rule}}}}}},
       {"RestartAllContainersOnContainerExits"}},
      {"a rule that does not restart all needs nothing",
       {{"containers", {{{"name", "c"}, {"restartPolicyRules", {{{"action", "Restart"}}}}}}}},
       {}},
      {"host network without the host's user namespace",
       {{"hostNetwork", true}, {"hostUsers", false}, {"containers", {{{"name", "c"}}}}},
       {"UserNamespacesHostNetworkSupport"}},
      {"host network with the host's user namespace needs nothing",
       {{"hostNetwork", true}, {"hostUsers", true}},
       {}},
      {"a user namespace without host network needs nothing", {{"hostUsers", false}}, {}},
      {"bind mount options on an ephemeral container's mount, and a rule",
       {{"ephemeralContainers",
         {{{"name", "debug"}, {"volumeMounts", {{{"name", "v"}, {"bindMountOptions", {"ro"}}}}}}}},
        {"containers", {{{"name", "c"}, {"restartPolicyRules", {restart_rule}}}}}},
       {"RestartAllContainersOnContainerExits", "VolumeBindMountOptions"}},
      {"empty bind mount options need nothing",
       {{"containers",
         {{{"name", "c"},
           {"volumeMounts", {{{"name", "v"}, {"bindMountOptions", json::array()}}}}}}}},
       {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(k8s::RequiredFeatures(c.spec), c.want) << c.description;
  }
}

TEST(DeclaredFeatures, ANodesListIsSortedOnceAndBounded) {
  json node = {{"status", {{"declaredFeatures", {"b", "a", 7, "b", ""}}}}};
  EXPECT_EQ(k8s::DeclaredFeatures(node), (Features{"a", "b"}));
  json many = {{"status", {{"declaredFeatures", json::array()}}}};
  for (size_t i = 0; i < k8s::kMaxDeclaredFeatures + 10; ++i) {
    many["status"]["declaredFeatures"].push_back("f" + std::to_string(i));
  }
  EXPECT_EQ(k8s::DeclaredFeatures(many).size(), k8s::kMaxDeclaredFeatures);
}

// Two nodes alike but for what they declare: a pod that needs a feature goes to the one
// that declares it, a pod needing one neither declares waits in kube-scheduler's words, and
// the nodes are in different shape classes (a class-cached verdict must not cross them).
TEST(DeclaredFeatures, APodGoesOnlyWhereEveryFeatureItNeedsIsDeclared) {
  ClusterState c;
  Node plain = CpuNode("plain");
  Node declaring = CpuNode("declaring");
  declaring.declared_features = {"RestartAllContainersOnContainerExits",
                                 "UserNamespacesHostNetworkSupport"};
  Must(c.AddNode(plain));
  const NodeId declaring_id = Must(c.AddNode(declaring));
  EXPECT_NE(c.node(0).shape_class, c.node(declaring_id).shape_class);
  Queue queue;
  queue.name = "default";
  const QueueId q = Must(c.AddQueue(queue));
  auto add = [&](const std::string& name, Features needs) {
    TaskSpec spec;
    spec.requests.Set(kCpu, 1000);
    spec.required_features = std::move(needs);
    Job job;
    job.name = name;
    job.queue = q;
    job.creation = static_cast<int64_t>(c.jobs().size());
    const JobId id = Must(c.AddJob(job));
    return Must(c.AddTask(id, c.AddSpec(spec), name + "-0"));
  };
  const TaskId needs = add("needs", {"UserNamespacesHostNetworkSupport"});
  const TaskId missing = add("missing", {"VolumeBindMountOptions"});
  const Decisions d = RunSession(c);
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(d.binds[0].task, needs);
  EXPECT_EQ(d.binds[0].node, declaring_id);
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].job, c.task(missing).job);
  EXPECT_TRUE(Contains(d.pending[0].reason, "2 node(s) didn't match Pod's required features"))
      << d.pending[0].reason;
}

TEST(DeclaredFeatures, TheDecodersReadThem) {
  json pod = {
      {"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "u"}}},
      {"spec", {{"hostNetwork", true}, {"hostUsers", false}, {"containers", {{{"name", "c"}}}}}}};
  std::string problem;
  EXPECT_EQ(Must(k8s::DecodePod(pod, &problem)).spec.required_features,
            (Features{"UserNamespacesHostNetworkSupport"}));
  json node = {
      {"metadata", {{"name", "n"}}},
      {"status",
       {{"declaredFeatures", {"VolumeBindMountOptions"}}, {"allocatable", {{"cpu", "4"}}}}}};
  EXPECT_EQ(Must(k8s::ParseNode(node)).declared_features, (Features{"VolumeBindMountOptions"}));
}

}  // namespace
}  // namespace gantry

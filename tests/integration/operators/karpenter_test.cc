// Karpenter (sigs.k8s.io/karpenter v1.15.0 with its kwok cloud provider, built by
// scripts/k8s/build-operators.sh) adding nodes for what Gantry leaves pending.
//
// Karpenter provisions for every pending pod whose PodScheduled condition is False with
// reason Unschedulable, whatever its scheduler (its pkg/utils/pod.IsProvisionable), and
// simulates all such pods of a batch together. So a gang gets nodes for all of its members
// exactly when Gantry writes each of them Unschedulable, and a pod Gantry holds for another
// reason (its queue's capability: QueueLimit) gets none. The kwok provider turns each
// NodeClaim into a Node annotated for kwok, which makes it Ready; Karpenter then lifts its
// karpenter.sh/unregistered taint, and Gantry may place pods there.
//
// Karpenter's kwok provider has no controller for its KWOKNodeClass's status, which a
// NodePool needs Ready: the test writes it, as a cloud provider's NodeClass controller
// would. Each test has a NodePool of its own whose nodes carry gantry-test=<test>, the label
// its pods select, so that the tests' pods never get each other's nodes.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

#include "tests/integration/daemon_process.h"
#include "tests/integration/operators/operators.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

// One GPU instance type: 4 GPUs, 32 CPUs, 256Gi, on demand and spot, in one zone.
constexpr const char* kInstanceTypes = R"([{
  "name": "gpu-4x",
  "architecture": "amd64",
  "operatingSystems": ["linux"],
  "resources": {"cpu": "32", "memory": "256Gi", "ephemeral-storage": "100Gi", "pods": "110",
                "nvidia.com/gpu": "4"},
  "offerings": [
    {"Price": 12.0, "Available": true, "Requirements": [
      {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
      {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["test-zone-a"]}]},
    {"Price": 4.0, "Available": true, "Requirements": [
      {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
      {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["test-zone-a"]}]}
  ]
}])";

constexpr const char* kNodeClasses = "/apis/karpenter.kwok.sh/v1alpha1/kwoknodeclasses";

// Karpenter, its CRDs, the Volcano CRDs and the KWOKNodeClass "default", Ready (once).
Status StartKarpenter() {
  auto operators = OperatorsDir();
  if (!operators.ok()) return operators.status();
  GANTRY_RETURN_IF_ERROR(StartControllersAndKwok());
  GANTRY_RETURN_IF_ERROR(Env().EnsureGantryCrds());
  GANTRY_RETURN_IF_ERROR(EnsureCrdsIn(*operators + "/share/crds/karpenter"));
  if (!Env().Call("GET", std::string(kNodeClasses) + "/default").ok()) {
    auto created = Env().Apply({{"apiVersion", "karpenter.kwok.sh/v1alpha1"},
                                {"kind", "KWOKNodeClass"},
                                {"metadata", {{"name", "default"}}}});
    if (!created.ok()) return created.status();
  }
  const json ready = {{"status",
                       {{"conditions",
                         {{{"type", "Ready"},
                           {"status", "True"},
                           {"reason", "Ready"},
                           {"message", ""},
                           {"lastTransitionTime", "2026-01-01T00:00:00Z"}}}}}}};
  auto written = Env().Call("PATCH", std::string(kNodeClasses) + "/default/status", ready,
                            "application/merge-patch+json");
  if (!written.ok()) return written.status();
  return Env().StartKarpenter(kInstanceTypes);
}

// A NodePool `test` of on-demand gpu-4x nodes labelled gantry-test=<test>, never expired or
// consolidated while the test runs.
Status CreateNodePool(const std::string& test) {
  const json requirements = {
      {{"key", "node.kubernetes.io/instance-type"}, {"operator", "In"}, {"values", {"gpu-4x"}}},
      {{"key", "karpenter.sh/capacity-type"}, {"operator", "In"}, {"values", {"on-demand"}}}};
  auto created = Env().Apply(
      {{"apiVersion", "karpenter.sh/v1"},
       {"kind", "NodePool"},
       {"metadata", {{"name", test}}},
       {"spec",
        {{"template",
          {{"metadata", {{"labels", {{"gantry-test", test}}}}},
           {"spec",
            {{"requirements", requirements},
             {"expireAfter", "Never"},
             {"nodeClassRef",
              {{"group", "karpenter.kwok.sh"}, {"kind", "KWOKNodeClass"}, {"name", "default"}}}}}}},
         {"disruption", {{"consolidationPolicy", "WhenEmpty"}, {"consolidateAfter", "Never"}}}}}});
  return created.ok() ? Status::Ok() : created.status();
}

// The NodeClaims Karpenter made for NodePool `test`.
std::vector<json> NodeClaimsOf(const std::string& test) {
  const json list =
      Get("/apis/karpenter.sh/v1/nodeclaims?labelSelector=karpenter.sh%2Fnodepool%3D" + test);
  return list.value("items", json::array()).get<std::vector<json>>();
}

// A pod of `gpus` GPUs for `test`'s nodes and daemon, in PodGroup `group` when not empty and
// queue `queue` when not empty.
json GpuPod(const std::string& test, const std::string& name, int gpus, const std::string& group,
            const std::string& queue = "") {
  json annotations = json::object();
  if (!group.empty()) annotations["scheduling.k8s.io/group-name"] = group;
  if (!queue.empty()) annotations["gantry.dev/queue"] = queue;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", test}, {"annotations", annotations}}},
          {"spec",
           {{"schedulerName", "gantry-" + test},
            {"nodeSelector", {{"gantry-test", test}}},
            {"terminationGracePeriodSeconds", 0},
            {"containers", json::array({Container("main", "1", gpus)})}}}};
}

Status CreatePodGroup(const std::string& test, const std::string& name, int min_member,
                      const std::string& queue = "") {
  json spec = {{"minMember", min_member}};
  if (!queue.empty()) spec["queue"] = queue;
  auto created = Env().Apply({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                              {"kind", "PodGroup"},
                              {"metadata", {{"name", name}, {"namespace", test}}},
                              {"spec", spec}});
  return created.ok() ? Status::Ok() : created.status();
}

// The NodeClaims of `test` whose condition Drifted is True.
int Drifted(const std::string& test) {
  int drifted = 0;
  for (const json& claim : NodeClaimsOf(test)) drifted += Condition(claim, "Drifted") == "True";
  return drifted;
}

// A gang of four pods of 4 GPUs on an empty NodePool of 4-GPU nodes: Gantry writes all four
// Unschedulable, Karpenter makes four nodes in one go (and, while they wait for the rest of
// the gang, keeps them: they are nominated for pending pods), and Gantry places the gang
// whole. Then the NodePool's template changes, so that every node of the gang has drifted:
// Karpenter would replace them one at a time, evicting one member after another, were it not
// for the do-not-disrupt annotation the members were bound with.
TEST(Karpenter, AGangThatFitsNowhereGetsNodesForAllOfItsMembersAndIsPlacedWhole) {
  const std::string test = "kp-gang";
  const Status started = StartKarpenter();
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Status made = CreateNodePool(test);
  ASSERT_TRUE(made.ok()) << made.message();
  made = CreatePodGroup(test, "train", 4);
  ASSERT_TRUE(made.ok()) << made.message();
  for (int i = 0; i < 4; ++i) {
    auto pod = Env().Apply(GpuPod(test, "worker-" + std::to_string(i), 4, "train"));
    ASSERT_TRUE(pod.ok()) << pod.status().message();
  }
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  std::vector<json> pods;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        pods = PodsIn(test);
        int bound = 0;
        for (const json& pod : pods) bound += NodeName(pod).empty() ? 0 : 1;
        return pods.size() == 4 && bound == 4;
      },
      seconds(120), milliseconds(250)))
      << "NodeClaims: " << NodeClaimsOf(test).size() << "\n"
      << daemon.Log();
  std::set<std::string> nodes;
  for (const json& pod : pods) {
    const std::string node = NodeName(pod);
    nodes.insert(node);
    const json labels =
        Get("/api/v1/nodes/" + node).value("/metadata/labels"_json_pointer, json::object());
    EXPECT_EQ(labels.value("karpenter.sh/nodepool", ""), test) << node;
  }
  EXPECT_EQ(nodes.size(), 4u) << "each member takes a whole 4-GPU node";
  // Karpenter made exactly one node per member: not fewer (a gang written Unschedulable
  // only in part would get part of its room) and not more.
  EXPECT_EQ(NodeClaimsOf(test).size(), 4u);
  // Drift: Karpenter marks the four NodeClaims Drifted, then leaves them for several of its
  // disruption passes (one each 10 s).
  auto changed = Env().Call(
      "PATCH", "/apis/karpenter.sh/v1/nodepools/" + test,
      {{"spec", {{"template", {{"metadata", {{"labels", {{"gantry-test-drift", "1"}}}}}}}}}},
      "application/merge-patch+json");
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return Drifted(test) == 4; }, seconds(60), milliseconds(500)))
      << Get("/apis/karpenter.sh/v1/nodeclaims").dump(1);
  std::this_thread::sleep_for(seconds(35));
  ASSERT_EQ(PodsIn(test).size(), 4u) << "a member was evicted";
  for (const json& pod : PodsIn(test)) {
    EXPECT_TRUE(nodes.count(NodeName(pod))) << pod.dump(1);
    EXPECT_FALSE(pod["metadata"].contains("deletionTimestamp")) << pod.dump(1);
  }
  EXPECT_EQ(NodeClaimsOf(test).size(), 4u);
}

// Pods that a new node would not help get none: a gang over its queue's capability (Gantry
// writes QueueLimit, not Unschedulable), and a pod larger than any instance type (written
// Unschedulable; Karpenter finds no instance for it). A pod that fits an instance type,
// created after them, gets exactly one node: Karpenter has seen the others and made none
// for them.
TEST(Karpenter, PodsHeldByTheirQueueOrLargerThanAnyInstanceGetNoNode) {
  const std::string test = "kp-held";
  const Status started = StartKarpenter();
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Status made = CreateNodePool(test);
  ASSERT_TRUE(made.ok()) << made.message();
  auto queue = Env().Apply({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                            {"kind", "Queue"},
                            {"metadata", {{"name", "kp-held-queue"}}},
                            {"spec", {{"weight", 1}, {"capability", {{"nvidia.com/gpu", 4}}}}}});
  ASSERT_TRUE(queue.ok()) << queue.status().message();
  made = CreatePodGroup(test, "capped", 2, "kp-held-queue");
  ASSERT_TRUE(made.ok()) << made.message();
  for (int i = 0; i < 2; ++i) {
    auto pod = Env().Apply(GpuPod(test, "capped-" + std::to_string(i), 4, "capped"));
    ASSERT_TRUE(pod.ok()) << pod.status().message();
  }
  auto huge = Env().Apply(GpuPod(test, "huge", 16, ""));
  ASSERT_TRUE(huge.ok()) << huge.status().message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const auto reason = [&](const std::string& name) {
    return PodScheduledField(Get("/api/v1/namespaces/" + test + "/pods/" + name), "reason");
  };
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        return reason("capped-0") == "QueueLimit" && reason("capped-1") == "QueueLimit" &&
               reason("huge") == "Unschedulable";
      },
      seconds(30), milliseconds(100)))
      << daemon.Log();
  auto small = Env().Apply(GpuPod(test, "small", 1, ""));
  ASSERT_TRUE(small.ok()) << small.status().message();
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] { return !NodeName(Get("/api/v1/namespaces/" + test + "/pods/small")).empty(); },
      seconds(120), milliseconds(250)))
      << "NodeClaims: " << NodeClaimsOf(test).size() << "\n"
      << daemon.Log();
  EXPECT_EQ(NodeClaimsOf(test).size(), 1u);
  for (const char* held : {"capped-0", "capped-1", "huge"}) {
    const json pod = Get("/api/v1/namespaces/" + test + "/pods/" + held);
    EXPECT_EQ(NodeName(pod), "") << held;
  }
  EXPECT_EQ(reason("capped-0"), "QueueLimit");
  EXPECT_EQ(reason("huge"), "Unschedulable");
}

}  // namespace
}  // namespace gantry::testing

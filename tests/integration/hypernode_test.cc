// Volcano HyperNodes on the real API server (their upstream CRD, applied from
// ../shared/upstream-crds/): with neither topologyKeys nor a Kueue Topology, their tiers
// are the topology levels. A Volcano PodGroup with networkTopology (hard, tier 1) keeps
// its gang inside one tier-1 HyperNode; a cycle of HyperNodes is an event, and the rest
// of the tree still holds.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

void MustCall(const std::string& method, const std::string& path, const json& body) {
  auto r = Env().Call(method, path, body);
  ASSERT_TRUE(r.ok()) << method << " " << path << ": " << r.status().message();
}

json HyperNode(const std::string& name, int tier, json members) {
  return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
          {"kind", "HyperNode"},
          {"metadata", {{"name", name}}},
          {"spec", {{"tier", tier}, {"members", std::move(members)}}}};
}

json Member(const std::string& type, const std::string& selector, json value) {
  return {{"type", type}, {"selector", {{selector, std::move(value)}}}};
}

json GangPod(const std::string& test, const std::string& name, int gpus) {
  json gpu = {{"nvidia.com/gpu", std::to_string(gpus)}};
  json requests = gpu;
  requests["cpu"] = "500m";
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", test},
            {"annotations", {{"scheduling.k8s.io/group-name", "train"}}}}},
          {"spec",
           {{"schedulerName", "gantry-" + test},
            {"nodeSelector", {{"gantry-test", test}}},
            {"containers",
             {{{"name", "main"},
               {"image", "busybox"},
               {"resources", {{"requests", requests}, {"limits", gpu}}}}}}}}};
}

TEST(HyperNodes, TheirTiersAreTheLevelsAndAGangStaysInOneLeaf) {
  const std::string test = "hypernodes";
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  const Status upstream = Env().EnsureUpstreamCrd("hypernodes.topology.volcano.sh",
                                                  "topology.volcano.sh_hypernodes.yaml");
  ASSERT_TRUE(upstream.ok()) << upstream.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  // Nodes 0 and 1 have 2 GPUs, 2 and 3 have 4: binpack alone would start on 0 and 1.
  for (int i = 0; i < 4; ++i) {
    auto r = Env().CreateNode(test + "-node-" + std::to_string(i), i < 2 ? 2 : 4, "32", "256Gi",
                              {{"gantry-test", test}, {"rack", test + (i < 2 ? "-r1" : "-r2")}});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  const std::string api = "/apis/topology.volcano.sh/v1alpha1/hypernodes";
  MustCall("POST", api,
           HyperNode(test + "-leaf-1", 1,
                     {Member("Node", "exactMatch", {{"name", test + "-node-0"}}),
                      Member("Node", "regexMatch", {{"pattern", "^" + test + "-node-1$"}})}));
  MustCall("POST", api,
           HyperNode(test + "-leaf-2", 1,
                     {Member("Node", "labelMatch", {{"matchLabels", {{"rack", test + "-r2"}}}})}));
  MustCall("POST", api,
           HyperNode(test + "-spine", 2,
                     {Member("HyperNode", "regexMatch", {{"pattern", "^" + test + "-leaf-"}})}));
  // Two that hold each other: said in an event, left out.
  MustCall("POST", api,
           HyperNode(test + "-loop-a", 3,
                     {Member("HyperNode", "exactMatch", {{"name", test + "-loop-b"}})}));
  MustCall("POST", api,
           HyperNode(test + "-loop-b", 3,
                     {Member("HyperNode", "exactMatch", {{"name", test + "-loop-a"}})}));
  MustCall(
      "POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/" + test + "/podgroups",
      {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
       {"kind", "PodGroup"},
       {"metadata", {{"name", "train"}, {"namespace", test}}},
       {"spec",
        {{"minMember", 4}, {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}}}}});
  for (int i = 0; i < 4; ++i) {
    MustCall("POST", "/api/v1/namespaces/" + test + "/pods",
             GangPod(test, "train-" + std::to_string(i), 2));
  }
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  auto bound = [&] {
    auto pods = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods");
    int n = 0;
    if (pods.ok()) {
      for (const json& p : (*pods)["items"]) n += p["spec"].contains("nodeName") ? 1 : 0;
    }
    return n;
  };
  ASSERT_TRUE(TestEnv::WaitFor([&] { return bound() == 4; }, seconds(20))) << daemon.Log();
  auto pods = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods");
  ASSERT_TRUE(pods.ok());
  for (const json& p : (*pods)["items"]) {
    const std::string node = p["spec"]["nodeName"];
    EXPECT_TRUE(node == test + "-node-2" || node == test + "-node-3")
        << p["metadata"]["name"] << " on " << node;
  }
  // The cycle's event, on the HyperNode that starts it.
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto events = Env().Call("GET",
                                 "/api/v1/namespaces/default/events?fieldSelector="
                                 "reason%3DInvalidHyperNode");
        if (!events.ok()) return false;
        for (const json& e : (*events)["items"]) {
          if (e["message"].get<std::string>().find(test + "-loop-a > " + test + "-loop-b > " +
                                                   test + "-loop-a form a cycle") !=
              std::string::npos) {
            return true;
          }
        }
        return false;
      },
      seconds(20)))
      << daemon.Log();
  // Other tests' daemons read HyperNodes too.
  for (const char* name : {"-leaf-1", "-leaf-2", "-spine", "-loop-a", "-loop-b"}) {
    auto removed = Env().Call("DELETE", api + "/" + test + name);
    EXPECT_TRUE(removed.ok()) << removed.status().message();
  }
}

}  // namespace
}  // namespace gantry::testing

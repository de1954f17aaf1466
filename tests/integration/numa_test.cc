// NUMA alignment on the real API server (issue 13): Node Feature Discovery's
// NodeResourceTopology CRD (from ../shared/upstream-crds) and an object for a node of two
// NUMA nodes of 16 CPUs and 2 GPUs each under the single-numa-node policy. A Guaranteed pod
// too wide for any NUMA node waits, with the reason, while one asking for GPUs on the node
// without NUMA alignment is bound there; Guaranteed pods of 10 CPUs are bound one per NUMA
// node; then one of 8 waits, though the node has 12 CPUs free, and one of 6 is bound.
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

json Nrt(const std::string& node) {
  json zones = json::array();
  for (int z = 0; z < 2; ++z) {
    zones.push_back(
        {{"name", "node-" + std::to_string(z)},
         {"type", "Node"},
         {"resources",
          {{{"name", "cpu"}, {"capacity", "16"}, {"allocatable", "16"}, {"available", "16"}},
           {{"name", "memory"},
            {"capacity", "64Gi"},
            {"allocatable", "64Gi"},
            {"available", "64Gi"}},
           {{"name", "nvidia.com/gpu"},
            {"capacity", "2"},
            {"allocatable", "2"},
            {"available", "2"}}}}});
  }
  return {{"apiVersion", "topology.node.k8s.io/v1alpha2"},
          {"kind", "NodeResourceTopology"},
          {"metadata", {{"name", node}}},
          {"topologyPolicies", {"SingleNUMANodePodLevel"}},
          {"attributes",
           {{{"name", "topologyManagerPolicy"}, {"value", "single-numa-node"}},
            {{"name", "topologyManagerScope"}, {"value", "pod"}}}},
          {"zones", zones}};
}

// A Guaranteed pod (limits equal to requests) for `node`.
json GuaranteedPod(const std::string& test, const std::string& name, const std::string& node,
                   const std::string& cpu, int gpus = 0) {
  json resources = {{"cpu", cpu}, {"memory", "1Gi"}};
  if (gpus > 0) resources["nvidia.com/gpu"] = std::to_string(gpus);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", test}}},
          {"spec",
           {{"schedulerName", "gantry-" + test},
            {"nodeSelector", {{"kubernetes.io/hostname", node}}},
            {"containers",
             {{{"name", "main"},
               {"image", "busybox"},
               {"resources", {{"requests", resources}, {"limits", resources}}}}}}}}};
}

std::string NodeOf(const std::string& test, const std::string& name) {
  auto p = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/" + name);
  return p.ok() ? (*p)["spec"].value("nodeName", "") : "";
}

std::string MessageOf(const std::string& test, const std::string& name) {
  auto p = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/" + name);
  return p.ok() ? PodScheduledMessage(*p) : "";
}

TEST(Numa, NodeResourceTopologyKeepsGuaranteedPodsInsideOneNumaNode) {
  const std::string test = "numa";
  const Status crd = Env().EnsureUpstreamCrd("noderesourcetopologies.topology.node.k8s.io",
                                             "topology.node.k8s.io_noderesourcetopologies.yaml");
  ASSERT_TRUE(crd.ok()) << crd.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  const std::string numa_node = test + "-node-0", plain_node = test + "-node-1";
  for (const std::string& node : {numa_node, plain_node}) {
    auto r = Env().CreateNode(node, 4, "32", "128Gi",
                              {{"gantry-test", test}, {"kubernetes.io/hostname", node}});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  auto nrt = Env().Call("POST", "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies",
                        Nrt(numa_node));
  ASSERT_TRUE(nrt.ok()) << nrt.status().message();
  // Too wide for a NUMA node of 16 CPUs, though the node has 32.
  auto wide = Env().Apply(GuaranteedPod(test, "wide", numa_node, "20"));
  ASSERT_TRUE(wide.ok()) << wide.status().message();
  auto gpus = Env().Apply(GuaranteedPod(test, "gpus", plain_node, "20", 4));
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  // The test configuration's plugins, with numa: without it the wide pod is bound.
  std::string config = DaemonConfig("gantry-" + test);
  const size_t binpack = config.find("binpack]");
  ASSERT_NE(binpack, std::string::npos) << config;
  config.replace(binpack, 0, "numa, ");
  DaemonProcess daemon(test, config, "d-" + test);
  const std::string reason = "cannot fit the pod in one NUMA node";
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] { return MessageOf(test, "wide").find(reason) != std::string::npos; }, seconds(30)))
      << "bound to \"" << NodeOf(test, "wide") << "\": " << MessageOf(test, "wide") << "\n"
      << daemon.Log();
  // Without NUMA alignment the node's total is what counts.
  ASSERT_TRUE(TestEnv::WaitFor([&] { return NodeOf(test, "gpus") == plain_node; }, seconds(30)))
      << daemon.Log();
  ASSERT_TRUE(Env().Call("DELETE", "/api/v1/namespaces/" + test + "/pods/wide").ok());
  for (const char* name : {"first", "second"}) {
    auto pod = Env().Apply(GuaranteedPod(test, name, numa_node, "10"));
    ASSERT_TRUE(pod.ok()) << pod.status().message();
  }
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] { return NodeOf(test, "first") == numa_node && NodeOf(test, "second") == numa_node; },
      seconds(30)))
      << daemon.Log();
  // The two bound pods took 10 of each NUMA node's 16: 8 more fit the node, not a NUMA node.
  auto third = Env().Apply(GuaranteedPod(test, "third", numa_node, "8"));
  ASSERT_TRUE(third.ok()) << third.status().message();
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] { return MessageOf(test, "third").find(reason) != std::string::npos; }, seconds(30)))
      << MessageOf(test, "third") << "\n"
      << daemon.Log();
  EXPECT_EQ(NodeOf(test, "third"), "");
  // One of 6 fits the 6 left on NUMA node 0.
  auto small = Env().Apply(GuaranteedPod(test, "small", numa_node, "6"));
  ASSERT_TRUE(small.ok()) << small.status().message();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return NodeOf(test, "small") == numa_node; }, seconds(30)))
      << daemon.Log();
}

}  // namespace
}  // namespace gantry::testing

// MIG on the real API server (issue 13): a node labelled and advertised as the GPU
// operator's mixed strategy does it, a pod asking for a MIG profile's resource. While the
// MIG manager reports the node being re-cut (nvidia.com/mig.config.state: pending) the pod
// waits and says why; once the state is success it is bound there.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

// A ready node of two A100-80GB GPUs cut by the mixed strategy, as GPU feature discovery
// labels it (`labels` besides the product, strategy and the MIG manager's `state`) and the
// device plugin advertises it (`slices`: each MIG resource and its count).
void CreateMigNode(const std::string& test, const std::string& name, const std::string& state,
                   const json& labels, const json& slices) {
  json node_labels = {{"gantry-test", test},
                      {"kubernetes.io/hostname", name},
                      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                      {"nvidia.com/mig.strategy", "mixed"},
                      {"nvidia.com/mig.config.state", state}};
  node_labels.update(labels);
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", name}, {"labels", node_labels}}}};
  auto created = Env().Call("POST", "/api/v1/nodes", node);
  ASSERT_TRUE(created.ok()) << created.status().message();
  json resources = {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}};
  resources.update(slices);
  json status = {
      {"status",
       {{"capacity", resources},
        {"allocatable", resources},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
  auto patched = Env().Call("PATCH", "/api/v1/nodes/" + name + "/status", status,
                            "application/merge-patch+json");
  ASSERT_TRUE(patched.ok()) << patched.status().message();
}

json MigPod(const std::string& test, const std::string& name, const std::string& profile) {
  json slices = {{"nvidia.com/mig-" + profile, "1"}};
  json requests = slices;
  requests["cpu"] = "500m";
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", test}}},
          {"spec",
           {{"schedulerName", "gantry-" + test},
            {"nodeSelector", {{"gantry-test", test}}},
            {"containers",
             {{{"name", "main"},
               {"image", "busybox"},
               {"resources", {{"requests", requests}, {"limits", slices}}}}}}}}};
}

Result<json> GetPod(const std::string& test, const std::string& name) {
  return Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/" + name);
}

TEST(Mig, APodWaitsWhileItsNodeIsReCutThenGetsASlice) {
  const std::string test = "mig";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  const std::string node = test + "-node-0";
  // Each GPU cut into 7 x 1g.10gb.
  CreateMigNode(test, node, "pending", {{"nvidia.com/mig-1g.10gb.count", "14"}},
                {{"nvidia.com/mig-1g.10gb", "14"}});
  auto pod = Env().Apply(MigPod(test, "infer", "1g.10gb"));
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  // A profile no GPU has: refused by name, whatever the nodes.
  auto unknown = Env().Apply(MigPod(test, "typo", "1g.11gb"));
  ASSERT_TRUE(unknown.ok()) << unknown.status().message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = GetPod(test, "infer");
        return p.ok() &&
               PodScheduledMessage(*p).find("MIG devices being reconfigured") != std::string::npos;
      },
      seconds(20)))
      << daemon.Log();
  // The MIG manager is done.
  auto done = Env().Call("PATCH", "/api/v1/nodes/" + node,
                         {{"metadata", {{"labels", {{"nvidia.com/mig.config.state", "success"}}}}}},
                         "application/merge-patch+json");
  ASSERT_TRUE(done.ok()) << done.status().message();
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = GetPod(test, "infer");
        return p.ok() && (*p)["spec"].value("nodeName", "") == node;
      },
      seconds(20)))
      << daemon.Log();
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = GetPod(test, "typo");
        return p.ok() &&
               PodScheduledMessage(*p).find("unknown MIG profile \"1g.11gb\"") != std::string::npos;
      },
      seconds(20)))
      << daemon.Log();
  auto typo = GetPod(test, "typo");
  ASSERT_TRUE(typo.ok());
  EXPECT_FALSE((*typo)["spec"].contains("nodeName"));
}

// Issue 27: four nodes alike (two A100-80GB GPUs cut into 7 x 1g.10gb + 2 x 3g.40gb) but for
// their MIG manager's state: success on two, pending on one, failed on one, all created before
// any pod, in either order. The engine's per-node-class verdict once gave the first node's
// answer to all four: every MIG pod pending when a node being re-cut came first, pods bound
// to it when a done node came first. Sixteen 1g.10gb pods and five 3g.40gb pods: the two done
// nodes hold 14 and 4 of them, the rest wait naming the reconfiguration.
class MigStates : public ::testing::TestWithParam<bool> {};

TEST_P(MigStates, NodesAlikeButForTheirMigStateTakeMigPodsOnlyWhenDone) {
  const bool done_first = GetParam();
  const std::string test = done_first ? "mig-done-first" : "mig-busy-first";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  // Created in this order, and named so that a list (in name order) returns them so too.
  std::vector<std::pair<std::string, std::string>> nodes = {
      {"done-0", "success"}, {"done-1", "success"}, {"busy", "pending"}, {"failed", "failed"}};
  if (!done_first) std::reverse(nodes.begin(), nodes.end());
  std::map<std::string, std::string> node_name;  // "done-0" -> "mig-done-first-a-done-0"
  for (size_t i = 0; i < nodes.size(); ++i) {
    node_name[nodes[i].first] = test + "-" + static_cast<char>('a' + i) + "-" + nodes[i].first;
  }
  // One GPU cut into 7 x 1g.10gb, the other into 2 x 3g.40gb.
  for (const auto& [name, state] : nodes) {
    CreateMigNode(test, node_name[name], state, json::object(),
                  {{"nvidia.com/mig-1g.10gb", "7"}, {"nvidia.com/mig-3g.40gb", "2"}});
  }
  std::vector<std::string> pods;
  for (int i = 0; i < 16; ++i) pods.push_back("small-" + std::to_string(i));
  for (int i = 0; i < 5; ++i) pods.push_back("large-" + std::to_string(i));
  for (const std::string& name : pods) {
    auto pod = Env().Apply(MigPod(test, name, name.starts_with("small") ? "1g.10gb" : "3g.40gb"));
    ASSERT_TRUE(pod.ok()) << pod.status().message();
  }
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  // Where each pod is: its node, or "" with the reason it waits.
  std::map<std::string, std::string> node_of, waiting_why;
  auto settled = [&] {
    node_of.clear();
    waiting_why.clear();
    for (const std::string& name : pods) {
      auto p = GetPod(test, name);
      if (!p.ok()) return false;
      const std::string node = (*p)["spec"].value("nodeName", "");
      if (!node.empty()) {
        node_of[name] = node;
      } else {
        const std::string why = PodScheduledMessage(*p);
        if (why.empty()) return false;
        waiting_why[name] = why;
      }
    }
    return node_of.size() >= 18;  // and each other pod waits with a reason
  };
  ASSERT_TRUE(TestEnv::WaitFor(settled, seconds(30)))
      << node_of.size() << " pods bound, " << waiting_why.size() << " waiting with a reason\n"
      << daemon.Log();
  std::map<std::string, int> small_on, large_on;
  for (const auto& [pod, node] : node_of) (pod.starts_with("small") ? small_on : large_on)[node]++;
  EXPECT_EQ(small_on,
            (std::map<std::string, int>{{node_name["done-0"], 7}, {node_name["done-1"], 7}}));
  EXPECT_EQ(large_on,
            (std::map<std::string, int>{{node_name["done-0"], 2}, {node_name["done-1"], 2}}));
  ASSERT_EQ(waiting_why.size(), 3u);
  for (const auto& [pod, why] : waiting_why) {
    EXPECT_NE(why.find("2 node(s) had their MIG devices being reconfigured"), std::string::npos)
        << pod << ": " << why;
  }
}

INSTANTIATE_TEST_SUITE_P(BothOrders, MigStates, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "DoneNodesFirst" : "BusyNodesFirst";
                         });

}  // namespace
}  // namespace gantry::testing

// KubeRay's operator (github.com/ray-project/kuberay/ray-operator v1.5.0, built by
// scripts/k8s/build-operators.sh) with its Volcano batch scheduler integration
// (--batch-scheduler=volcano): for a RayCluster it writes a Volcano PodGroup
// (scheduling.volcano.sh/v1beta1, minMember = workers + 1, minResources = their sum) and
// gives the head and worker pods schedulerName "volcano" and the annotation
// scheduling.k8s.io/group-name. Gantry serves that scheduler name. A cluster of one head and
// four workers of 4 GPUs is placed as one gang or not at all: on three 4-GPU nodes no pod
// is bound, though three workers and the head would fit; with a fourth node all five are.
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
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

json RayCluster(const std::string& test, int workers) {
  auto pod_spec = [&](const std::string& container, int gpus) {
    json c = Container(container, "1", gpus);
    c["image"] = "rayproject/ray:2.46.0";
    return json{{"spec",
                 {{"nodeSelector", {{"gantry-test", test}}},
                  {"terminationGracePeriodSeconds", 0},
                  {"containers", json::array({c})}}}};
  };
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", "gang"}, {"namespace", test}}},
          {"spec",
           {{"rayVersion", "2.46.0"},
            {"headGroupSpec",
             {{"rayStartParams", json::object()}, {"template", pod_spec("ray-head", 0)}}},
            {"workerGroupSpecs",
             {{{"groupName", "gpu"},
               {"replicas", workers},
               {"minReplicas", workers},
               {"maxReplicas", workers},
               {"rayStartParams", json::object()},
               {"template", pod_spec("ray-worker", 4)}}}}}}};
}

TEST(Operators, KubeRayClusterIsPlacedAsOneGangOrNotAtAll) {
  const std::string test = "op-ray";
  auto operators = OperatorsDir();
  ASSERT_TRUE(operators.ok()) << operators.status().message();
  ASSERT_TRUE(StartControllersAndKwok().ok());
  // Volcano's PodGroup CRD (the operator watches the PodGroups it owns) and KubeRay's own.
  Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  crds = EnsureCrdsIn(*operators + "/share/crds/kuberay");
  ASSERT_TRUE(crds.ok()) << crds.message();
  const Status started = Env().StartRayOperator("--batch-scheduler=volcano");
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  // Three nodes of 4 GPUs: room for the head and three of the four workers.
  Status nodes = CreateNodes(test, 0, 3, 4, /*kwok=*/true);
  ASSERT_TRUE(nodes.ok()) << nodes.message();
  DaemonProcess daemon(test, DaemonConfig("volcano"), "d-" + test);
  auto cluster = Env().Apply(RayCluster(test, 4));
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();

  // What the integration writes: the PodGroup and the pods that name it.
  const std::string group =
      "/apis/scheduling.volcano.sh/v1beta1/namespaces/" + test + "/podgroups/ray-gang-pg";
  ASSERT_TRUE(TestEnv::WaitFor([&] { return !Get(group).empty(); }, seconds(60),
                               std::chrono::milliseconds(200)))
      << "no PodGroup from the operator";
  EXPECT_EQ(Get(group).value("/spec/minMember"_json_pointer, 0), 5) << Get(group).dump(1);
  std::vector<json> pods;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        pods = PodsIn(test, "ray.io%2Fcluster%3Dgang");
        if (pods.size() != 5) return false;
        for (const json& pod : pods) {
          if (PodScheduledMessage(pod).empty()) return false;
        }
        return true;
      },
      seconds(60), std::chrono::milliseconds(200)))
      << pods.size() << " pods, not all pending with a reason\n"
      << daemon.Log();
  for (const json& pod : pods) {
    EXPECT_EQ(pod.value("/spec/schedulerName"_json_pointer, std::string()), "volcano");
    EXPECT_EQ(pod.value("/metadata/annotations/scheduling.k8s.io~1group-name"_json_pointer,
                        std::string()),
              "ray-gang-pg");
  }
  // Several scheduling cycles later, still not one bound: the gang is all or nothing.
  std::this_thread::sleep_for(seconds(3));
  for (const json& pod : PodsIn(test, "ray.io%2Fcluster%3Dgang")) {
    EXPECT_EQ(NodeName(pod), "") << pod.value("/metadata/name"_json_pointer, std::string())
                                 << " bound though the gang does not fit";
    EXPECT_NE(PodScheduledMessage(pod), "");
  }

  // A fourth node: all five are bound, the workers on four distinct nodes.
  nodes = CreateNodes(test, 3, 1, 4, /*kwok=*/true);
  ASSERT_TRUE(nodes.ok()) << nodes.message();
  std::set<std::string> worker_nodes;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        pods = PodsIn(test, "ray.io%2Fcluster%3Dgang");
        worker_nodes.clear();
        int bound = 0;
        for (const json& pod : pods) {
          if (NodeName(pod).empty()) continue;
          ++bound;
          if (pod.value("/metadata/labels/ray.io~1node-type"_json_pointer, std::string()) ==
              "worker") {
            worker_nodes.insert(NodeName(pod));
          }
        }
        return pods.size() == 5 && bound == 5;
      },
      seconds(60), std::chrono::milliseconds(200)))
      << daemon.Log();
  EXPECT_EQ(worker_nodes.size(), 4u);
  // kwok ran them: the head is Running.
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        for (const json& pod : PodsIn(test, "ray.io%2Fnode-type%3Dhead")) {
          if (pod.value("/status/phase"_json_pointer, std::string()) == "Running") return true;
        }
        return false;
      },
      seconds(30), std::chrono::milliseconds(200)));
}

}  // namespace
}  // namespace gantry::testing

// kube-controller-manager's own workload controllers with Gantry as their scheduler: a batch
// Job of parallelism 8 whose pods Gantry binds and kwok runs and completes, until the Job is
// Complete; a Deployment of 4 replicas with required pod anti-affinity on the hostname over
// 3 nodes (3 bound on distinct nodes, one pending with the anti-affinity reason), whose
// PodDisruptionBudget the disruption controller keeps, and whose pods the garbage collector
// removes with it; a StatefulSet's pods bound one after the other.
#include <gtest/gtest.h>

#include <set>
#include <string>

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

// A pod template of one container, for `test`'s nodes and daemon.
json Template(const std::string& test, const json& labels, const json& container) {
  return {{"metadata", {{"labels", labels}}},
          {"spec",
           {{"schedulerName", "gantry-" + test},
            {"nodeSelector", {{"gantry-test", test}}},
            {"terminationGracePeriodSeconds", 0},
            {"containers", json::array({container})}}}};
}

TEST(Operators, JobOfParallelismEightRunsToComplete) {
  const std::string test = "op-job";
  ASSERT_TRUE(StartControllersAndKwok().ok());
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  // Two nodes of 4 GPUs: the 8 pods of 1 GPU fill them.
  const Status nodes = CreateNodes(test, 0, 2, 4, /*kwok=*/true);
  ASSERT_TRUE(nodes.ok()) << nodes.message();
  json job_template = Template(test, {{"app", "train"}}, Container("train", "1", 1));
  job_template["spec"]["restartPolicy"] = "Never";
  const json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", "train"}, {"namespace", test}}},
      {"spec",
       {{"parallelism", 8}, {"completions", 8}, {"backoffLimit", 0}, {"template", job_template}}}};
  auto created = Env().Apply(job);
  ASSERT_TRUE(created.ok()) << created.status().message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const std::string path = "/apis/batch/v1/namespaces/" + test + "/jobs/train";
  ASSERT_TRUE(TestEnv::WaitFor([&] { return Condition(Get(path), "Complete") == "True"; },
                               seconds(120), std::chrono::milliseconds(250)))
      << Get(path).dump(1) << "\n"
      << daemon.Log();
  const json done = Get(path);
  EXPECT_EQ(done.value("/status/succeeded"_json_pointer, 0), 8) << done.dump(1);
  EXPECT_EQ(done.value("/status/failed"_json_pointer, 0), 0) << done.dump(1);
  // Every pod that ran was bound by the daemon (no other scheduler serves its name) to one
  // of this test's nodes, and succeeded there.
  const std::vector<json> pods = PodsIn(test, "app%3Dtrain");
  ASSERT_EQ(pods.size(), 8u);
  for (const json& pod : pods) {
    EXPECT_EQ(NodeName(pod).rfind(test + "-node-", 0), 0u) << pod.dump(1);
    EXPECT_EQ(pod.value("/status/phase"_json_pointer, std::string()), "Succeeded");
  }
}

// Kubernetes' own gangs end to end (the WorkloadWithJob gate, which testenv.sh turns on): a
// Job with spec.scheduling gets its Workload and PodGroup from the Job controller, which
// names the PodGroup in its pods' spec.schedulingGroup; Gantry places the gang whole or not
// at all, and says so on the PodGroup (PodGroupInitiallyScheduled).
TEST(Operators, JobWithGangSchedulingIsPlacedWholeThroughItsNativePodGroup) {
  const std::string test = "op-native-gang";
  ASSERT_TRUE(StartControllersAndKwok().ok());
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  // One node of 4 GPUs: three of the four 2-GPU pods short; none may bind.
  Status nodes = CreateNodes(test, 0, 1, 4, /*kwok=*/true);
  ASSERT_TRUE(nodes.ok()) << nodes.message();
  json job_template = Template(test, {{"app", "gang"}}, Container("train", "1", 2));
  job_template["spec"]["restartPolicy"] = "Never";
  const json job = {{"apiVersion", "batch/v1"},
                    {"kind", "Job"},
                    {"metadata", {{"name", "gang"}, {"namespace", test}}},
                    {"spec",
                     {{"parallelism", 4},
                      {"completions", 4},
                      {"backoffLimit", 0},
                      {"scheduling", {{"schedulingPolicy", {{"gang", {{"minCount", 4}}}}}}},
                      {"template", job_template}}}};
  auto created = Env().Apply(job);
  ASSERT_TRUE(created.ok()) << created.status().message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const std::string groups = "/apis/scheduling.k8s.io/v1beta1/namespaces/" + test + "/podgroups";
  json group;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        json list = Get(groups);
        if (!list.contains("items") || list["items"].empty()) return false;
        group = list["items"][0];
        return Condition(group, "PodGroupInitiallyScheduled") == "False";
      },
      seconds(60), std::chrono::milliseconds(250)))
      << Get(groups).dump(1) << "\n"
      << daemon.Log();
  EXPECT_EQ(group.value("/spec/schedulingPolicy/gang/minCount"_json_pointer, 0), 4);
  std::vector<json> pods = PodsIn(test, "app%3Dgang");
  ASSERT_EQ(pods.size(), 4u);
  for (const json& pod : pods) {
    EXPECT_EQ(pod.value("/spec/schedulingGroup/podGroupName"_json_pointer, std::string()),
              group["metadata"]["name"].get<std::string>());
    EXPECT_EQ(NodeName(pod), "") << "bound with the gang short";
  }
  // Room for all four: the gang goes, runs and completes.
  nodes = CreateNodes(test, 1, 1, 4, /*kwok=*/true);
  ASSERT_TRUE(nodes.ok()) << nodes.message();
  const std::string path = "/apis/batch/v1/namespaces/" + test + "/jobs/gang";
  ASSERT_TRUE(TestEnv::WaitFor([&] { return Condition(Get(path), "Complete") == "True"; },
                               seconds(120), std::chrono::milliseconds(250)))
      << Get(path).dump(1) << "\n"
      << daemon.Log();
  const std::string group_path = groups + "/" + group["metadata"]["name"].get<std::string>();
  EXPECT_EQ(Condition(Get(group_path), "PodGroupInitiallyScheduled"), "True")
      << Get(group_path).dump(1);
}

TEST(Operators, DeploymentWithRequiredAntiAffinityAndItsGarbageCollection) {
  const std::string test = "op-deploy";
  ASSERT_TRUE(StartControllersAndKwok().ok());
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  const int replicas = 4;
  const Status nodes = CreateNodes(test, 0, replicas - 1, 0, /*kwok=*/true);
  ASSERT_TRUE(nodes.ok()) << nodes.message();
  json pod_template = Template(test, {{"app", "spread"}}, Container("serve", "500m", 0));
  pod_template["spec"]["affinity"] = {
      {"podAntiAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{{"labelSelector", {{"matchLabels", {{"app", "spread"}}}}},
           {"topologyKey", "kubernetes.io/hostname"}}}}}}};
  const json deployment = {{"apiVersion", "apps/v1"},
                           {"kind", "Deployment"},
                           {"metadata", {{"name", "spread"}, {"namespace", test}}},
                           {"spec",
                            {{"replicas", replicas},
                             {"selector", {{"matchLabels", {{"app", "spread"}}}}},
                             {"template", pod_template}}}};
  auto created = Env().Apply(deployment);
  ASSERT_TRUE(created.ok()) << created.status().message();
  const json pdb = {
      {"apiVersion", "policy/v1"},
      {"kind", "PodDisruptionBudget"},
      {"metadata", {{"name", "spread"}, {"namespace", test}}},
      {"spec", {{"minAvailable", 2}, {"selector", {{"matchLabels", {{"app", "spread"}}}}}}}};
  auto budget = Env().Apply(pdb);
  ASSERT_TRUE(budget.ok()) << budget.status().message();
  // The test configuration's plugins with interpodaffinity: without it a pod with required
  // anti-affinity is never placed (the rule would go unenforced).
  std::string config = DaemonConfig("gantry-" + test);
  const size_t binpack = config.find("binpack]");
  ASSERT_NE(binpack, std::string::npos) << config;
  config.replace(binpack, 0, "interpodaffinity, ");
  DaemonProcess daemon(test, config, "d-" + test);

  // N-1 bound, each on a node of its own; the last one pending with the reason.
  std::set<std::string> used;
  std::string pending_message;
  const bool placed = TestEnv::WaitFor(
      [&] {
        used.clear();
        pending_message.clear();
        int bound = 0, pending = 0;
        const std::vector<json> pods = PodsIn(test, "app%3Dspread");
        for (const json& pod : pods) {
          if (!NodeName(pod).empty()) {
            ++bound;
            used.insert(NodeName(pod));
          } else if (!PodScheduledMessage(pod).empty()) {
            ++pending;
            pending_message = PodScheduledMessage(pod);
          }
        }
        return bound == replicas - 1 && pending == 1;
      },
      seconds(60), std::chrono::milliseconds(200));
  ASSERT_TRUE(placed) << "nodes used: " << used.size() << ", pending: " << pending_message << "\n"
                      << daemon.Log();
  EXPECT_EQ(used.size(), static_cast<size_t>(replicas - 1));
  EXPECT_NE(pending_message.find("anti-affinity"), std::string::npos) << pending_message;
  // The ReplicaSet made the pods; the disruption controller counts the Running ones kwok
  // made Ready.
  const std::string pdb_path =
      "/apis/policy/v1/namespaces/" + test + "/poddisruptionbudgets/spread";
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        const json status = Get(pdb_path).value("status", json::object());
        return status.value("currentHealthy", -1) == replicas - 1 &&
               status.value("expectedPods", -1) == replicas &&
               status.value("disruptionsAllowed", -1) == replicas - 1 - 2;
      },
      seconds(60), std::chrono::milliseconds(250)))
      << Get(pdb_path).dump(1);

  // Deleting the Deployment deletes its ReplicaSet and, through it, the pods.
  auto deleted = Env().Call(
      "DELETE", "/apis/apps/v1/namespaces/" + test + "/deployments/spread",
      {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}});
  ASSERT_TRUE(deleted.ok()) << deleted.status().message();
  auto none_left = [&](const std::string& collection) {
    auto list = Env().Call("GET", collection);
    return list.ok() && (*list)["items"].empty();
  };
  const std::string pods = "/api/v1/namespaces/" + test + "/pods";
  ASSERT_TRUE(TestEnv::WaitFor([&] { return none_left(pods); }, seconds(60),
                               std::chrono::milliseconds(250)))
      << PodsIn(test).size() << " pods left";
  EXPECT_TRUE(none_left("/apis/apps/v1/namespaces/" + test + "/replicasets"));
}

// A StatefulSet creates its pods one by one, each after the one before is Running and
// Ready: Gantry binds each, kwok runs it, the controller makes the next.
TEST(Operators, StatefulSetPodsAreBoundInOrder) {
  const std::string test = "op-sts";
  ASSERT_TRUE(StartControllersAndKwok().ok());
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  const Status nodes = CreateNodes(test, 0, 1, 4, /*kwok=*/true);
  ASSERT_TRUE(nodes.ok()) << nodes.message();
  const json set = {{"apiVersion", "apps/v1"},
                    {"kind", "StatefulSet"},
                    {"metadata", {{"name", "db"}, {"namespace", test}}},
                    {"spec",
                     {{"replicas", 3},
                      {"serviceName", "db"},
                      {"selector", {{"matchLabels", {{"app", "db"}}}}},
                      {"template", Template(test, {{"app", "db"}}, Container("db", "1", 1))}}}};
  auto created = Env().Call("POST", "/apis/apps/v1/namespaces/" + test + "/statefulsets", set);
  ASSERT_TRUE(created.ok()) << created.status().message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const std::string path = "/apis/apps/v1/namespaces/" + test + "/statefulsets/db";
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] { return Get(path).value("/status/readyReplicas"_json_pointer, 0) == 3; }, seconds(60),
      std::chrono::milliseconds(250)))
      << Get(path).dump(1) << "\n"
      << daemon.Log();
  for (const char* name : {"db-0", "db-1", "db-2"}) {
    EXPECT_EQ(NodeName(Get("/api/v1/namespaces/" + test + "/pods/" + name)), test + "-node-0");
  }
}

}  // namespace
}  // namespace gantry::testing

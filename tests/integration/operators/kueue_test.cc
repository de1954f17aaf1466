// Kueue (sigs.k8s.io/kueue v0.17.0, built by scripts/k8s/build-operators.sh) admitting by
// quota, Gantry placing what it admits.
//
// Kueue runs without its admission webhooks: they need the API server to call back into
// Kueue through a Service, which this control plane (no cluster network, no DNS) cannot
// reach. So the tests create what the webhooks would have made of their objects: Jobs
// already suspended with the kueue.x-k8s.io/queue-name label, and plain pods with the
// label, kueue.x-k8s.io/managed=true and the scheduling gate kueue.x-k8s.io/admission.
// Kueue's internal certificate management still runs (it is what spares it the metrics
// certificates of a deployment): it wants the Secret of its webhook server and conversion
// webhook settings on its multi-version CRDs to put its CA into, so the CRDs get the
// settings its own kustomize patches add (never called: every client here, Kueue
// included, uses the storage version v1beta2).
#include <gtest/gtest.h>

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

constexpr const char* kKueueConfig =
    "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
    "kind: Configuration\n"
    "namespace: kueue-system\n"
    "leaderElection:\n  leaderElect: false\n"
    "internalCertManagement:\n  enable: true\n"
    "featureGates:\n  VisibilityOnDemand: false\n"
    "integrations:\n  frameworks: [batch/job, pod]\n";

// The CRDs Kueue's certificate rotator puts its CA into (pkg/util/cert).
bool HasConversionWebhook(const std::string& crd) {
  for (const char* name :
       {"localqueues", "clusterqueues", "workloads", "cohorts", "multikueueclusters"}) {
    if (crd == std::string(name) + ".kueue.x-k8s.io") return true;
  }
  return false;
}

// Kueue, its CRDs, its namespace and its webhook server's Secret (once per binary).
Status StartKueue() {
  auto operators = OperatorsDir();
  if (!operators.ok()) return operators.status();
  GANTRY_RETURN_IF_ERROR(StartControllersAndKwok());
  GANTRY_RETURN_IF_ERROR(EnsureCrdsIn(*operators + "/share/crds/kueue", [](json& crd) {
    if (!HasConversionWebhook(crd.value("/metadata/name"_json_pointer, std::string()))) return;
    crd["spec"]["conversion"] = {{"strategy", "Webhook"},
                                 {"webhook",
                                  {{"conversionReviewVersions", {"v1"}},
                                   {"clientConfig",
                                    {{"service",
                                      {{"namespace", "kueue-system"},
                                       {"name", "kueue-webhook-service"},
                                       {"path", "/convert"}}}}}}}};
  }));
  GANTRY_RETURN_IF_ERROR(Env().CreateNamespace("kueue-system"));
  if (!Env()
           .Call("GET", "/api/v1/namespaces/kueue-system/secrets/kueue-webhook-server-cert")
           .ok()) {
    auto secret = Env().Apply(
        {{"apiVersion", "v1"},
         {"kind", "Secret"},
         {"metadata", {{"name", "kueue-webhook-server-cert"}, {"namespace", "kueue-system"}}}});
    if (!secret.ok()) return secret.status();
  }
  return Env().StartKueue(kKueueConfig);
}

// A ClusterQueue of `gpus` GPUs (and CPU and memory enough) on one flavor, and a
// LocalQueue `name` for it in namespace `ns`.
Status CreateQueues(const std::string& ns, const std::string& name, int gpus) {
  if (!Env().Call("GET", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors/default-flavor").ok()) {
    auto flavor = Env().Apply({{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                               {"kind", "ResourceFlavor"},
                               {"metadata", {{"name", "default-flavor"}}}});
    if (!flavor.ok()) return flavor.status();
  }
  const json quota = {
      {"coveredResources", {"cpu", "memory", "nvidia.com/gpu"}},
      {"flavors",
       {{{"name", "default-flavor"},
         {"resources",
          {{{"name", "cpu"}, {"nominalQuota", "100"}},
           {{"name", "memory"}, {"nominalQuota", "1000Gi"}},
           {{"name", "nvidia.com/gpu"}, {"nominalQuota", std::to_string(gpus)}}}}}}}};
  auto cluster_queue = Env().Apply(
      {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
       {"kind", "ClusterQueue"},
       {"metadata", {{"name", name}}},
       {"spec",
        {{"namespaceSelector", json::object()}, {"resourceGroups", json::array({quota})}}}});
  if (!cluster_queue.ok()) return cluster_queue.status();
  auto local_queue = Env().Apply({{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                  {"kind", "LocalQueue"},
                                  {"metadata", {{"name", name}, {"namespace", ns}}},
                                  {"spec", {{"clusterQueue", name}}}});
  return local_queue.ok() ? Status::Ok() : local_queue.status();
}

// A Job of 8 pods of 1 GPU for LocalQueue `queue`, suspended as Kueue's webhook would.
json GpuJob(const std::string& test, const std::string& name, const std::string& queue) {
  return {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", name}, {"namespace", test}, {"labels", {{"kueue.x-k8s.io/queue-name", queue}}}}},
      {"spec",
       {{"parallelism", 8},
        {"completions", 8},
        {"suspend", true},
        {"template",
         {{"metadata", {{"labels", {{"job", name}}}}},
          {"spec",
           {{"schedulerName", "gantry-" + test},
            {"nodeSelector", {{"gantry-test", test}}},
            {"restartPolicy", "Never"},
            {"containers", json::array({Container("train", "1", 1)})}}}}}}}};
}

bool Suspended(const std::string& test, const std::string& job) {
  const json j = Get("/apis/batch/v1/namespaces/" + test + "/jobs/" + job);
  return j.value("/spec/suspend"_json_pointer, false);
}

// The Workload Kueue made for the object named `owner`; an empty object while there is none.
json WorkloadOf(const std::string& test, const std::string& owner) {
  const json list = Get("/apis/kueue.x-k8s.io/v1beta2/namespaces/" + test + "/workloads");
  for (const json& w : list.value("items", json::array())) {
    for (const json& ref : w.value("/metadata/ownerReferences"_json_pointer, json::array())) {
      if (ref.value("name", "") == owner) return w;
    }
  }
  return json::object();
}

int BoundPods(const std::string& test, const std::string& selector) {
  int bound = 0;
  for (const json& pod : PodsIn(test, selector)) bound += !NodeName(pod).empty();
  return bound;
}

TEST(Operators, KueueAdmitsJobsByQuotaAndGantryPlacesTheirPods) {
  const std::string test = "op-kueue";
  const Status started = StartKueue();
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  // Room for both Jobs (16 GPUs): only the queue's quota of 8 holds the second back. The
  // nodes are not kwok's, so the first Job's pods stay bound and keep the quota.
  const Status nodes = CreateNodes(test, 0, 2, 8, /*kwok=*/false);
  ASSERT_TRUE(nodes.ok()) << nodes.message();
  const Status queues = CreateQueues(test, test, 8);
  ASSERT_TRUE(queues.ok()) << queues.message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  auto first = Env().Apply(GpuJob(test, "first", test));
  ASSERT_TRUE(first.ok()) << first.status().message();
  // One at a time, so that which one Kueue admits is known.
  ASSERT_TRUE(
      TestEnv::WaitFor([&] { return !Suspended(test, "first"); }, seconds(60), milliseconds(200)))
      << "Kueue did not admit the first Job: " << WorkloadOf(test, "first").dump(1);
  auto second = Env().Apply(GpuJob(test, "second", test));
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundPods(test, "job%3Dfirst") == 8; }, seconds(60),
                               milliseconds(200)))
      << BoundPods(test, "job%3Dfirst") << " of 8 bound\n"
      << daemon.Log();
  // Kueue made a Workload for the second, and keeps it pending on the quota.
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        const json w = WorkloadOf(test, "second");
        return !w.empty() && Condition(w, "QuotaReserved") == "False";
      },
      seconds(60), milliseconds(200)))
      << WorkloadOf(test, "second").dump(1);
  std::this_thread::sleep_for(seconds(2));
  EXPECT_TRUE(Suspended(test, "second"));
  EXPECT_NE(Condition(WorkloadOf(test, "second"), "Admitted"), "True");
  EXPECT_TRUE(PodsIn(test, "job%3Dsecond").empty());
}

TEST(Operators, KueueSchedulingGateHoldsAPodUntilAdmission) {
  const std::string test = "op-kueue-pod";
  const Status started = StartKueue();
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  const Status nodes = CreateNodes(test, 0, 1, 8, /*kwok=*/true);
  ASSERT_TRUE(nodes.ok()) << nodes.message();
  // No GPU quota yet: Kueue cannot admit the pod, so its gate stays.
  const Status queues = CreateQueues(test, test, 0);
  ASSERT_TRUE(queues.ok()) << queues.message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "gated"},
        {"namespace", test},
        {"labels", {{"kueue.x-k8s.io/queue-name", test}, {"kueue.x-k8s.io/managed", "true"}}},
        {"finalizers", {"kueue.x-k8s.io/managed"}}}},
      {"spec",
       {{"schedulerName", "gantry-" + test},
        {"nodeSelector", {{"gantry-test", test}}},
        {"schedulingGates", {{{"name", "kueue.x-k8s.io/admission"}}}},
        {"containers", json::array({Container("main", "1", 1)})}}}};
  auto created = Env().Apply(pod);
  ASSERT_TRUE(created.ok()) << created.status().message();
  const std::string path = "/api/v1/namespaces/" + test + "/pods/gated";
  // The daemon saw the pod and holds it for its gate (as kube-scheduler says so), while
  // Kueue keeps its Workload pending.
  auto gated_reason = [&] {
    for (const json& c : Get(path).value("/status/conditions"_json_pointer, json::array())) {
      if (c.value("type", "") == "PodScheduled") return c.value("reason", "");
    }
    return std::string();
  };
  ASSERT_TRUE(TestEnv::WaitFor([&] { return gated_reason() == "SchedulingGated"; }, seconds(30),
                               milliseconds(200)))
      << Get(path).dump(1) << "\n"
      << daemon.Log();
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        const json w = WorkloadOf(test, "gated");
        return !w.empty() && Condition(w, "QuotaReserved") == "False";
      },
      seconds(60), milliseconds(200)))
      << WorkloadOf(test, "gated").dump(1);
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(NodeName(Get(path)), "") << "a gated pod was bound";
  EXPECT_FALSE(Get(path).value("/spec/schedulingGates"_json_pointer, json::array()).empty());

  // A GPU of quota: Kueue admits the pod and removes its gate; the daemon binds it.
  json patch = {{"spec",
                 {{"resourceGroups",
                   {{{"coveredResources", {"cpu", "memory", "nvidia.com/gpu"}},
                     {"flavors",
                      {{{"name", "default-flavor"},
                        {"resources",
                         {{{"name", "cpu"}, {"nominalQuota", "100"}},
                          {{"name", "memory"}, {"nominalQuota", "1000Gi"}},
                          {{"name", "nvidia.com/gpu"}, {"nominalQuota", "1"}}}}}}}}}}}}};
  auto patched = Env().Call("PATCH", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/" + test, patch,
                            "application/merge-patch+json");
  ASSERT_TRUE(patched.ok()) << patched.status().message();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return NodeName(Get(path)) == test + "-node-0"; }, seconds(60),
                               milliseconds(200)))
      << Get(path).dump(1) << "\n"
      << daemon.Log();
  EXPECT_TRUE(Get(path).value("/spec/schedulingGates"_json_pointer, json::array()).empty());
  EXPECT_EQ(Condition(WorkloadOf(test, "gated"), "Admitted"), "True");
}

}  // namespace
}  // namespace gantry::testing

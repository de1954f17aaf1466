// The same pods scheduled twice on the same nodes of the real API server: once by the
// upstream kube-scheduler (the reference, a profile of its own so that it takes only the
// pods that ask for it), once by `gantry serve`. Each case says what kube-scheduler's
// rules allow: which pods run and on which nodes they may, which stay pending and why.
// Both schedulers are held to it, so the reference shows that the case says what
// kube-scheduler does, and gantry must do the same.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kReference = "kube-reference";
constexpr const char* kGantry = "gantry-side-by-side";

TestEnv& Env() {
  return TestEnv::Get();
}

// What kube-scheduler's rules allow for one pod: the nodes it may run on, or none
// (pending), with the PodScheduled reason kube-scheduler gives ("" when any will do).
struct Expect {
  std::string pod;
  std::set<std::string> nodes;
  std::string pending_reason;
  std::string gantry_message;  // a part of gantry's message for a pending pod, if any
};

struct Case {
  std::string name;
  std::vector<json> pods;  // metadata.name and spec; namespace and scheduler added
  std::vector<Expect> expect;
  std::vector<json> claims = {};  // PersistentVolumeClaims made in the namespace first
};

// A node of the case (label sbs-case=NAME), with taints when given.
void CaseNode(const std::string& test, const std::string& name, const std::string& cpu,
              std::map<std::string, std::string> labels = {}, json taints = nullptr) {
  labels["sbs-case"] = test;
  auto r = Env().CreateNode(name, 0, cpu, "16Gi", labels);
  ASSERT_TRUE(r.ok()) << r.status().message();
  if (!taints.is_null()) {
    auto t = Env().Call("PATCH", "/api/v1/nodes/" + name, json{{"spec", {{"taints", taints}}}},
                        "application/merge-patch+json");
    ASSERT_TRUE(t.ok()) << t.status().message();
  }
}

json Container(const std::string& name, const std::string& cpu) {
  return {{"name", name},
          {"image", "registry.k8s.io/pause:3.10"},
          {"resources", {{"requests", {{"cpu", cpu}, {"memory", "64Mi"}}}}}};
}

// A pod of the case: one container of `cpu`, on the case's nodes only; `extra` merged
// into its spec.
json CasePod(const std::string& test, const std::string& name, json extra = json::object(),
             const std::string& cpu = "100m") {
  json spec = {{"nodeSelector", {{"sbs-case", test}}}, {"containers", {Container("main", cpu)}}};
  spec.merge_patch(extra);
  return {{"metadata", {{"name", name}}}, {"spec", spec}};
}

json NodeAffinity(json terms) {
  return {
      {"affinity",
       {{"nodeAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}}}};
}

const json* PodScheduledFalse(const json& pod) {
  if (!pod.contains("status") || !pod["status"].contains("conditions")) return nullptr;
  for (const json& c : pod["status"]["conditions"]) {
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") return &c;
  }
  return nullptr;
}

std::map<std::string, json> PodsOf(const std::string& ns) {
  std::map<std::string, json> out;
  auto r = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods");
  if (!r.ok()) return out;
  for (const json& p : (*r)["items"]) out[p["metadata"]["name"].get<std::string>()] = p;
  return out;
}

// Creates the case's pods for `scheduler` in namespace `ns` and waits until each has the
// state the case expects (bound, or pending with a PodScheduled=False condition when the
// case names a reason), or 30 s pass. Returns the pods as they then are.
std::map<std::string, json> Schedule(const Case& c, const std::string& scheduler,
                                     const std::string& ns) {
  EXPECT_TRUE(Env().CreateNamespace(ns).ok());
  for (json claim : c.claims) {
    claim["apiVersion"] = "v1";
    claim["kind"] = "PersistentVolumeClaim";
    claim["metadata"]["namespace"] = ns;
    auto r = Env().Call("POST", "/api/v1/namespaces/" + ns + "/persistentvolumeclaims", claim);
    EXPECT_TRUE(r.ok()) << r.status().message();
  }
  for (json pod : c.pods) {
    pod["apiVersion"] = "v1";
    pod["kind"] = "Pod";
    pod["metadata"]["namespace"] = ns;
    pod["spec"]["schedulerName"] = scheduler;
    auto r = Env().Call("POST", "/api/v1/namespaces/" + ns + "/pods", pod);
    EXPECT_TRUE(r.ok()) << r.status().message();
  }
  std::map<std::string, json> pods;
  TestEnv::WaitFor(
      [&] {
        pods = PodsOf(ns);
        for (const Expect& e : c.expect) {
          auto it = pods.find(e.pod);
          if (it == pods.end()) return false;
          const bool bound = it->second["spec"].contains("nodeName");
          if (!e.nodes.empty() && !bound) return false;
          if (e.nodes.empty() && !e.pending_reason.empty() &&
              PodScheduledFalse(it->second) == nullptr)
            return false;
        }
        return true;
      },
      seconds(30), milliseconds(200));
  // Pending pods are given a moment more: a wrong bind would show now.
  std::this_thread::sleep_for(seconds(2));
  return PodsOf(ns);
}

// Deletes the namespace's pods at once (there are no kubelets to wait for).
void DeletePods(const std::string& ns) {
  for (const auto& [name, pod] : PodsOf(ns)) {
    (void)Env().Call("DELETE", "/api/v1/namespaces/" + ns + "/pods/" + name,
                     json{{"gracePeriodSeconds", 0}});
  }
  TestEnv::WaitFor([&] { return PodsOf(ns).empty(); }, seconds(30), milliseconds(100));
}

void ExpectAsKubeSchedulerAllows(const Case& c, const std::map<std::string, json>& pods,
                                 const std::string& who) {
  for (const Expect& e : c.expect) {
    SCOPED_TRACE(who + ": " + c.name + "/" + e.pod);
    auto it = pods.find(e.pod);
    ASSERT_NE(it, pods.end());
    const json& pod = it->second;
    if (!e.nodes.empty()) {
      ASSERT_TRUE(pod["spec"].contains("nodeName")) << "pending, but kube-scheduler's rules "
                                                       "let it run";
      EXPECT_TRUE(e.nodes.count(pod["spec"]["nodeName"].get<std::string>()))
          << "bound to " << pod["spec"]["nodeName"] << ", where kube-scheduler's rules refuse it";
      continue;
    }
    EXPECT_FALSE(pod["spec"].contains("nodeName"))
        << "bound to " << pod["spec"]["nodeName"] << "; kube-scheduler leaves it pending";
    if (e.pending_reason.empty()) continue;
    const json* condition = PodScheduledFalse(pod);
    ASSERT_NE(condition, nullptr) << "no PodScheduled=False condition";
    EXPECT_EQ(condition->value("reason", ""), e.pending_reason);
    if (who == "gantry" && !e.gantry_message.empty()) {
      EXPECT_NE(condition->value("message", "").find(e.gantry_message), std::string::npos)
          << condition->value("message", "");
    }
  }
}

class SideBySide : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Status started = Env().StartKubeScheduler(kReference);
    ASSERT_TRUE(started.ok()) << started.message();
    daemon_ = new DaemonProcess("side-by-side", DaemonConfig(kGantry), "side-by-side");
  }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }

  // Both schedulers, one after the other, on the case's nodes; each held to the case.
  static void RunBoth(const Case& c) {
    const auto reference = Schedule(c, kReference, c.name + "-kube");
    ExpectAsKubeSchedulerAllows(c, reference, "kube-scheduler");
    DeletePods(c.name + "-kube");
    const auto ours = Schedule(c, kGantry, c.name + "-gantry");
    ExpectAsKubeSchedulerAllows(c, ours, "gantry");
    ASSERT_TRUE(daemon_->running()) << daemon_->Log();
    EXPECT_EQ(SanitizerReport(daemon_->Log()), "");
  }

  static DaemonProcess* daemon_;
};

DaemonProcess* SideBySide::daemon_ = nullptr;

// matchFields on metadata.name is how the DaemonSet controller places its pods.
TEST_F(SideBySide, NodeAffinityMatchFieldsOnTheNodeName) {
  const std::string t = "sbs-matchfields";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  auto on = [&](const std::string& node) {
    return NodeAffinity(json::array(
        {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}));
  };
  Case c{t,
         {CasePod(t, "ds-1", on(t + "-1")), CasePod(t, "ds-none", on(t + "-none"))},
         {{"ds-1", {t + "-1"}, "", ""}, {"ds-none", {}, "Unschedulable", "node affinity"}}};
  RunBoth(c);
}

TEST_F(SideBySide, NodeAffinityGtAndLt) {
  const std::string t = "sbs-numeric";
  const char* counts[] = {"2", "4", "8"};
  for (int i = 0; i < 3; ++i)
    CaseNode(t, t + "-" + std::to_string(i), "4", {{"gpu-count", counts[i]}});
  auto expr = [](const char* op, const char* value) {
    return NodeAffinity(json::array(
        {{{"matchExpressions", {{{"key", "gpu-count"}, {"operator", op}, {"values", {value}}}}}}}));
  };
  Case c{
      t,
      {CasePod(t, "gt4", expr("Gt", "4")), CasePod(t, "lt3", expr("Lt", "3")),
       CasePod(t, "gt8", expr("Gt", "8"))},
      {{"gt4", {t + "-2"}, "", ""}, {"lt3", {t + "-0"}, "", ""}, {"gt8", {}, "Unschedulable", ""}}};
  RunBoth(c);
}

// NoSchedule and NoExecute keep pods that do not tolerate them away; a NoExecute
// toleration with tolerationSeconds still tolerates for placement; PreferNoSchedule
// never filters.
TEST_F(SideBySide, TaintsAndTolerations) {
  const std::string t = "sbs-taints";
  CaseNode(t, t + "-a", "4", {},
           json::array({{{"key", "dedicated"}, {"value", "x"}, {"effect", "NoSchedule"}}}));
  CaseNode(t, t + "-b", "4", {},
           json::array({{{"key", "maint"}, {"value", "y"}, {"effect", "NoExecute"}}}));
  CaseNode(t, t + "-c", "4", {},
           json::array({{{"key", "soft"}, {"value", "z"}, {"effect", "PreferNoSchedule"}}}));
  json tolerate_maint = {{"tolerations",
                          {{{"key", "maint"},
                            {"operator", "Equal"},
                            {"value", "y"},
                            {"effect", "NoExecute"},
                            {"tolerationSeconds", 30}}}}};
  json tolerate_all = {{"tolerations", {{{"operator", "Exists"}}}}};
  Case c{t,
         {CasePod(t, "plain"), CasePod(t, "maint-ok", tolerate_maint),
          CasePod(t, "anything", tolerate_all)},
         {{"plain", {t + "-c"}, "", ""},
          {"maint-ok", {t + "-b", t + "-c"}, "", ""},
          {"anything", {t + "-a", t + "-b", t + "-c"}, "", ""}}};
  RunBoth(c);
}

// An init container runs after the sidecars started before it, which keep running beside
// the app: on a 4-CPU node, 1 app + 1 sidecar + 3.5 init needs 4.5 CPUs; 2.5 init, 3.5.
TEST_F(SideBySide, SidecarAndInitContainerRequests) {
  const std::string t = "sbs-sidecars";
  CaseNode(t, t + "-0", "4");
  auto with_init = [](const std::string& init_cpu) {
    json sidecar = Container("proxy", "1");
    sidecar["restartPolicy"] = "Always";
    return json{{"initContainers", {sidecar, Container("setup", init_cpu)}}};
  };
  Case c{
      t,
      {CasePod(t, "too-big", with_init("3500m"), "1"), CasePod(t, "fits", with_init("2500m"), "1")},
      {{"too-big", {}, "Unschedulable", "cpu"}, {"fits", {t + "-0"}, "", ""}}};
  RunBoth(c);
}

// kube-scheduler: a gated pod is never scheduled, shows PodScheduled=False with reason
// SchedulingGated, and is scheduled once its gates are removed.
TEST_F(SideBySide, SchedulingGatesHoldUntilRemoved) {
  const std::string t = "sbs-gates";
  CaseNode(t, t + "-0", "4");
  json gated = {{"schedulingGates", {{{"name", "example.com/wait"}}}}};
  Case c{t, {CasePod(t, "gated", gated)}, {{"gated", {}, "SchedulingGated", ""}}};
  for (const auto& [scheduler, ns] :
       {std::pair{std::string(kReference), t + "-kube"}, {std::string(kGantry), t + "-gantry"}}) {
    const auto pods = Schedule(c, scheduler, ns);
    ExpectAsKubeSchedulerAllows(c, pods, scheduler == kGantry ? "gantry" : "kube-scheduler");
    // Gates may only be removed; then it runs.
    auto r = Env().Call("PATCH", "/api/v1/namespaces/" + ns + "/pods/gated",
                        json{{"spec", {{"schedulingGates", json::array()}}}},
                        "application/merge-patch+json");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(TestEnv::WaitFor([&] { return PodsOf(ns)["gated"]["spec"].contains("nodeName"); },
                                 seconds(30)))
        << scheduler << " did not schedule the pod once its gates were removed";
    DeletePods(ns);
  }
}

// Dynamic resource allocation is not gantry's: the pod waits, saying which field.
TEST_F(SideBySide, ResourceClaimsKeepThePodPendingWithAMessage) {
  const std::string t = "sbs-claims";
  CaseNode(t, t + "-0", "4");
  json claims = {{"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", "no-such-claim"}}}}};
  json pod = CasePod(t, "claimant", claims);
  pod["spec"]["containers"][0]["resources"]["claims"] = {{{"name", "gpu"}}};
  const Case reference{t, {pod}, {{"claimant", {}, "", ""}}};
  const auto theirs = Schedule(reference, kReference, t + "-kube");
  ExpectAsKubeSchedulerAllows(reference, theirs, "kube-scheduler");
  const Case ours{t, {pod}, {{"claimant", {}, "Unschedulable", "spec.resourceClaims"}}};
  ExpectAsKubeSchedulerAllows(ours, Schedule(ours, kGantry, t + "-gantry"), "gantry");
}

// ---------------------------------------------------------------------------------------
// PersistentVolumeClaims (VolumeRestrictions, VolumeBinding, VolumeZone). Claims are made
// bound as the PV controller leaves them (spec.volumeName and the bind-completed
// annotation); the WaitForFirstConsumer cases below run the PV controller itself.

// A cluster-scoped object (a PersistentVolume, a StorageClass) for the case.
void ClusterObject(const std::string& collection, json object) {
  auto r = Env().Call("POST", collection, object);
  ASSERT_TRUE(r.ok()) << r.status().message();
}

// A PersistentVolume named `name` of 1Gi: `source` its volume source and more of its spec.
void Volume(const std::string& name, json spec, json labels = json::object(),
            const std::string& access_mode = "ReadWriteOnce") {
  json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", name}, {"labels", labels}}},
             {"spec",
              {{"capacity", {{"storage", "1Gi"}}},
               {"accessModes", {access_mode}},
               {"persistentVolumeReclaimPolicy", "Retain"}}}};
  pv["spec"].merge_patch(spec);
  ClusterObject("/api/v1/persistentvolumes", pv);
}

// A claim for 1Gi, bound to `volume` as the PV controller leaves it, or unbound ("").
json Claim(const std::string& name, const std::string& volume, const std::string& storage_class,
           const std::string& access_mode = "ReadWriteOnce") {
  json c = {{"metadata", {{"name", name}}},
            {"spec",
             {{"accessModes", {access_mode}},
              {"storageClassName", storage_class},
              {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  if (!volume.empty()) {
    c["spec"]["volumeName"] = volume;
    c["metadata"]["annotations"] = {{"pv.kubernetes.io/bind-completed", "yes"}};
  }
  return c;
}

json ClaimVolume(const std::string& claim) {
  return {{"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}}}};
}

json LocalOn(const std::string& node) {
  return {{"local", {{"path", "/mnt/disks/ssd1"}}},
          {"nodeAffinity",
           {{"required",
             {{"nodeSelectorTerms",
               {{{"matchExpressions",
                  {{{"key", "kubernetes.io/hostname"},
                    {"operator", "In"},
                    {"values", {node}}}}}}}}}}}}};
}

// The documentation's local volume: the pod goes only to the volume's node; a volume on a
// node that does not exist keeps its pod pending.
TEST_F(SideBySide, LocalVolumeNodeAffinity) {
  const std::string t = "sbs-local";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  Volume(t + "-pv", LocalOn(t + "-1"));
  Volume(t + "-gone", LocalOn(t + "-gone"));
  Case c{t,
         {CasePod(t, "local", ClaimVolume("data")), CasePod(t, "stranded", ClaimVolume("gone"))},
         {{"local", {t + "-1"}, "", ""},
          {"stranded", {}, "Unschedulable", "node(s) had volume node affinity conflict"}},
         {Claim("data", t + "-pv", ""), Claim("gone", t + "-gone", "")}};
  RunBoth(c);
}

// VolumeZone: a volume labelled with one zone takes its pod to that zone's node.
TEST_F(SideBySide, VolumeInOneZone) {
  const std::string t = "sbs-zone";
  for (const char* z : {"a", "b", "c"}) {
    CaseNode(t, t + "-" + z, "4",
             {{"topology.kubernetes.io/zone", std::string("zone-") + z},
              {"topology.kubernetes.io/region", "region-1"}});
  }
  Volume(
      t + "-pv", {{"hostPath", {{"path", "/tmp/sbs-zone"}}}},
      {{"topology.kubernetes.io/zone", "zone-b"}, {"topology.kubernetes.io/region", "region-1"}});
  Case c{t,
         {CasePod(t, "zoned", ClaimVolume("data"))},
         {{"zoned", {t + "-b"}, "", ""}},
         {Claim("data", t + "-pv", "")}};
  RunBoth(c);
}

// A claim that does not exist, and one unbound in a class that binds immediately: the pod
// waits, in kube-scheduler's words.
TEST_F(SideBySide, MissingAndUnboundImmediateClaims) {
  const std::string t = "sbs-claims-pending";
  CaseNode(t, t + "-0", "4");
  ClusterObject("/apis/storage.k8s.io/v1/storageclasses",
                {{"apiVersion", "storage.k8s.io/v1"},
                 {"kind", "StorageClass"},
                 {"metadata", {{"name", t + "-immediate"}}},
                 {"provisioner", "example.com/none"},
                 {"volumeBindingMode", "Immediate"}});
  Case c{t,
         {CasePod(t, "missing", ClaimVolume("no-such-claim")),
          CasePod(t, "unbound", ClaimVolume("unbound"))},
         {{"missing", {}, "Unschedulable", "persistentvolumeclaim \"no-such-claim\" not found"},
          {"unbound", {}, "Unschedulable", "pod has unbound immediate PersistentVolumeClaims"}},
         {Claim("unbound", "", t + "-immediate")}};
  RunBoth(c);
}

// VolumeRestrictions: a ReadWriteOncePod claim that a bound pod uses keeps another pod
// that wants it pending.
TEST_F(SideBySide, ReadWriteOncePodClaimUsedByARunningPod) {
  const std::string t = "sbs-rwop";
  CaseNode(t, t + "-0", "4");
  CaseNode(t, t + "-1", "4");
  Volume(t + "-pv", {{"hostPath", {{"path", "/tmp/sbs-rwop"}}}}, json::object(),
         "ReadWriteOncePod");
  json holder = CasePod(t, "holder", ClaimVolume("data"));
  holder["spec"]["nodeName"] = t + "-0";
  Case c{t,
         {holder, CasePod(t, "second", ClaimVolume("data"))},
         {{"holder", {t + "-0"}, "", ""},
          {"second",
           {},
           "Unschedulable",
           "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
           "access mode"}},
         {Claim("data", t + "-pv", "", "ReadWriteOncePod")}};
  RunBoth(c);
}

// ---------------------------------------------------------------------------------------
// WaitForFirstConsumer: the scheduler chooses a volume (its claimRef) or a node to
// provision on (the claim's volume.kubernetes.io/selected-node) and binds the pod once the
// PV controller has bound the claim. Here the real PV controller does its part
// (kube-controller-manager with persistentvolume-binder only, started for these cases);
// no external provisioner runs, so a claim to provision stays unbound, unless the case
// provisions it by hand.

const std::pair<std::string, std::string> kRuns[] = {{kReference, "kube"}, {kGantry, "gantry"}};

std::string Who(const std::string& scheduler) {
  return scheduler == kGantry ? "gantry" : "kube-scheduler";
}

// A WaitForFirstConsumer class; `extra` merged into it (provisioner, allowedTopologies).
void WffcClass(const std::string& name, json extra) {
  json sc = {{"apiVersion", "storage.k8s.io/v1"},
             {"kind", "StorageClass"},
             {"metadata", {{"name", name}}},
             {"provisioner", "kubernetes.io/no-provisioner"},
             {"volumeBindingMode", "WaitForFirstConsumer"}};
  sc.merge_patch(extra);
  ClusterObject("/apis/storage.k8s.io/v1/storageclasses", sc);
}

json Get(const std::string& path) {
  auto r = Env().Call("GET", path);
  return r.ok() ? *r : json();
}

// A local volume of the class on `node`, once the PV controller has made it Available.
void AvailableVolume(const std::string& name, const std::string& node,
                     const std::string& storage_class) {
  json spec = LocalOn(node);
  spec["storageClassName"] = storage_class;
  Volume(name, spec);
  EXPECT_TRUE(TestEnv::WaitFor(
      [&] {
        return Get("/api/v1/persistentvolumes/" + name)
                   .value("/status/phase"_json_pointer, std::string()) == "Available";
      },
      seconds(30), milliseconds(100)))
      << "the PV controller did not make " << name << " Available";
}

json ClaimOf(const std::string& ns, const std::string& name) {
  return Get("/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + name);
}

std::string SelectedNode(const json& claim) {
  return claim.value("/metadata/annotations/volume.kubernetes.io~1selected-node"_json_pointer,
                     std::string());
}

class SideBySideWffc : public SideBySide {
 protected:
  static void SetUpTestSuite() {
    SideBySide::SetUpTestSuite();
    Status started = Env().StartControllerManager();
    ASSERT_TRUE(started.ok()) << started.message();
  }
};

// A static local volume on one node: the pod goes there, the volume's claimRef names the
// claim, and the pod is bound once the claim is.
TEST_F(SideBySideWffc, StaticLocalVolumeTakesThePodToItsNode) {
  const std::string t = "sbs-wffc-static";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  WffcClass(t, json::object());
  for (const auto& [scheduler, run] : kRuns) {
    SCOPED_TRACE(Who(scheduler));
    const std::string ns = t + "-" + run;
    AvailableVolume(t + "-pv-" + run, t + "-1", t);
    Case c{t,
           {CasePod(t, "consumer", ClaimVolume("data"))},
           {{"consumer", {t + "-1"}, "", ""}},
           {Claim("data", "", t)}};
    ExpectAsKubeSchedulerAllows(c, Schedule(c, scheduler, ns), Who(scheduler));
    const json pv = Get("/api/v1/persistentvolumes/" + t + "-pv-" + run);
    EXPECT_EQ(pv.value("/spec/claimRef/namespace"_json_pointer, std::string()), ns);
    EXPECT_EQ(pv.value("/spec/claimRef/name"_json_pointer, std::string()), "data");
    const json claim = ClaimOf(ns, "data");
    EXPECT_EQ(claim.value("/spec/volumeName"_json_pointer, std::string()), t + "-pv-" + run);
    EXPECT_EQ(claim.value("/status/phase"_json_pointer, std::string()), "Bound");
    DeletePods(ns);
  }
  ASSERT_TRUE(daemon_->running()) << daemon_->Log();
}

// Two pods, two claims, one volume that fits both: one runs on its node, the other waits.
TEST_F(SideBySideWffc, OneVolumeForTwoClaims) {
  const std::string t = "sbs-wffc-one";
  for (int i = 0; i < 2; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  WffcClass(t, json::object());
  for (const auto& [scheduler, run] : kRuns) {
    SCOPED_TRACE(Who(scheduler));
    const std::string ns = t + "-" + run;
    AvailableVolume(t + "-pv-" + run, t + "-1", t);
    Case c{t,
           {CasePod(t, "a", ClaimVolume("data-a")), CasePod(t, "b", ClaimVolume("data-b"))},
           {},
           {Claim("data-a", "", t), Claim("data-b", "", t)}};
    (void)Schedule(c, scheduler, ns);
    std::map<std::string, json> pods;
    int bound = 0, waiting = 0;
    TestEnv::WaitFor(
        [&] {
          pods = PodsOf(ns);
          bound = waiting = 0;
          for (const auto& [name, pod] : pods) {
            if (pod["spec"].contains("nodeName")) bound++;
            if (PodScheduledFalse(pod) != nullptr) waiting++;
          }
          return bound == 1 && waiting == 1;
        },
        seconds(30), milliseconds(200));
    EXPECT_EQ(bound, 1);
    EXPECT_EQ(waiting, 1);
    for (const auto& [name, pod] : pods) {
      if (pod["spec"].contains("nodeName")) {
        EXPECT_EQ(pod["spec"]["nodeName"], t + "-1");
        continue;
      }
      const json* condition = PodScheduledFalse(pod);
      ASSERT_NE(condition, nullptr) << name;
      EXPECT_EQ(condition->value("reason", ""), "Unschedulable");
      if (scheduler == kGantry) {
        EXPECT_NE(condition->value("message", "")
                      .find("node(s) didn't find available persistent volumes to bind"),
                  std::string::npos)
            << condition->value("message", "");
      }
    }
    DeletePods(ns);
  }
}

// Provisioning where the class's allowedTopologies allow: the claim names a node of the
// allowed zone. With no provisioner running, it stays unbound and the pod pending (in
// PreBind, without a PodScheduled=False condition), for both schedulers.
TEST_F(SideBySideWffc, ProvisioningSelectsAnAllowedNode) {
  const std::string t = "sbs-wffc-topology";
  for (const char* z : {"a", "b"}) {
    CaseNode(t, t + "-" + z, "4", {{"topology.kubernetes.io/zone", std::string("zone-") + z}});
  }
  WffcClass(t, {{"provisioner", "example.com/nobody"},
                {"allowedTopologies",
                 {{{"matchLabelExpressions",
                    {{{"key", "topology.kubernetes.io/zone"}, {"values", {"zone-b"}}}}}}}}});
  for (const auto& [scheduler, run] : kRuns) {
    SCOPED_TRACE(Who(scheduler));
    const std::string ns = t + "-" + run;
    Case c{t,
           {CasePod(t, "consumer", ClaimVolume("data"))},
           {{"consumer", {}, "", ""}},
           {Claim("data", "", t)}};
    (void)Schedule(c, scheduler, ns);
    EXPECT_TRUE(TestEnv::WaitFor([&] { return !SelectedNode(ClaimOf(ns, "data")).empty(); },
                                 seconds(30), milliseconds(200)));
    EXPECT_EQ(SelectedNode(ClaimOf(ns, "data")), t + "-b");
    std::this_thread::sleep_for(seconds(2));
    ExpectAsKubeSchedulerAllows(c, PodsOf(ns), Who(scheduler));
    EXPECT_EQ(ClaimOf(ns, "data").value("/status/phase"_json_pointer, std::string()), "Pending");
    DeletePods(ns);
  }
}

// No volume and a class that cannot provision: pending, in kube-scheduler's words.
TEST_F(SideBySideWffc, NoVolumeAndNoProvisioner) {
  const std::string t = "sbs-wffc-none";
  CaseNode(t, t + "-0", "4");
  WffcClass(t, json::object());
  Case c{t,
         {CasePod(t, "consumer", ClaimVolume("data"))},
         {{"consumer",
           {},
           "Unschedulable",
           "node(s) didn't find available persistent volumes to bind"}},
         {Claim("data", "", t)}};
  RunBoth(c);
}

// Provisioned where the scheduler chose (by the test, standing in for an external
// provisioner: a volume pre-bound to the claim on the selected node, which the PV
// controller then binds), then the pod bound there.
TEST_F(SideBySideWffc, ProvisionedWhereChosenThenBound) {
  const std::string t = "sbs-wffc";
  CaseNode(t, t + "-0", "4");
  CaseNode(t, t + "-1", "4");
  WffcClass(t + "-late", {{"provisioner", "example.com/by-the-test"}});
  for (const auto& [scheduler, run] : kRuns) {
    SCOPED_TRACE(Who(scheduler));
    const std::string ns = t + "-" + run;
    std::atomic<bool> done{false};
    std::thread provisioner([&, ns = ns, run = run] {
      while (!done.load()) {
        std::this_thread::sleep_for(milliseconds(200));
        const json claim = ClaimOf(ns, "data");
        const std::string node = SelectedNode(claim);
        if (node.empty()) continue;
        json spec = LocalOn(node);
        spec["storageClassName"] = t + "-late";
        spec["claimRef"] = {
            {"namespace", ns}, {"name", "data"}, {"uid", claim["metadata"].value("uid", "")}};
        Volume(t + "-provisioned-" + run, spec);
        return;
      }
    });
    const Case c{t,
                 {CasePod(t, "consumer", ClaimVolume("data"))},
                 {{"consumer", {t + "-0", t + "-1"}, "", ""}},
                 {Claim("data", "", t + "-late")}};
    const auto pods = Schedule(c, scheduler, ns);
    done = true;
    provisioner.join();
    ExpectAsKubeSchedulerAllows(c, pods, Who(scheduler));
    const json claim = ClaimOf(ns, "data");
    EXPECT_EQ(pods.at("consumer")["spec"].value("nodeName", ""), SelectedNode(claim));
    DeletePods(ns);
  }
  ASSERT_TRUE(daemon_->running()) << daemon_->Log();
  EXPECT_EQ(SanitizerReport(daemon_->Log()), "");
}

}  // namespace
}  // namespace gantry::testing

// Side by side with kube-scheduler (side_by_side.h): PersistentVolumeClaims
// (VolumeRestrictions, VolumeBinding, VolumeZone, NodeVolumeLimits), with the PV controller
// for WaitForFirstConsumer claims (and storage capacity).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/side_by_side.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

class SideBySideVolumes : public SideBySide {};

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
TEST_F(SideBySideVolumes, LocalVolumeNodeAffinity) {
  const std::string t = "sbs-local";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  Volume(t + "-pv", LocalOn(t + "-1"));
  Volume(t + "-gone", LocalOn(t + "-gone"));
  Case c{
      t,
      {CasePod(t, "local", ClaimVolume("data")), CasePod(t, "stranded", ClaimVolume("gone"))},
      {{"local", {t + "-1"}, "", ""},
       {"stranded", {}, "Unschedulable", "node(s) didn't match PersistentVolume's node affinity"}},
      {Claim("data", t + "-pv", ""), Claim("gone", t + "-gone", "")}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// VolumeZone: a volume labelled with one zone takes its pod to that zone's node.
TEST_F(SideBySideVolumes, VolumeInOneZone) {
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
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// A claim that does not exist, and one unbound in a class that binds immediately: the pod
// waits, in kube-scheduler's words.
TEST_F(SideBySideVolumes, MissingAndUnboundImmediateClaims) {
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
  c.words_differ =
      "the daemon says a PreFilter's reason without \"0/N nodes are available: \" and with "
      "where the claim is named in the pod";
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// VolumeRestrictions: a ReadWriteOncePod claim that a bound pod uses keeps another pod
// that wants it pending.
TEST_F(SideBySideVolumes, ReadWriteOncePodClaimUsedByARunningPod) {
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
           "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
           "mode already in-use by another pod"}},
         {Claim("data", t + "-pv", "", "ReadWriteOncePod")}};
  c.words_differ =
      "the daemon keeps the pod out of the session with kube-scheduler's reason and which pod "
      "holds the claim, where kube-scheduler counts the reason on each node that gets to it";
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// VolumeRestrictions for inline disks: a GCE PD that a pod on n0 writes keeps a reader of
// it off n0; two readers of another disk share a node.
TEST_F(SideBySideVolumes, InlineDiskConflicts) {
  const std::string t = "sbs-disks";
  CaseNode(t, t + "-0", "4");
  CaseNode(t, t + "-1", "4");
  auto disk = [](const std::string& name, bool read_only) {
    return json{
        {"volumes",
         {{{"name", "disk"}, {"gcePersistentDisk", {{"pdName", name}, {"readOnly", read_only}}}}}}};
  };
  json writer = CasePod(t, "writer", disk("pd-1", false));
  writer["spec"]["nodeName"] = t + "-0";
  json reader = CasePod(t, "reader", disk("pd-2", true));
  reader["spec"]["nodeName"] = t + "-1";
  Case c{t,
         {writer, reader, CasePod(t, "pd-1-reader", disk("pd-1", true)),
          CasePod(t, "pd-2-reader", disk("pd-2", true))},
         {{"writer", {t + "-0"}, "", ""},
          {"reader", {t + "-1"}, "", ""},
          {"pd-1-reader", {t + "-1"}, "", ""},
          {"pd-2-reader", {t + "-0", t + "-1"}, "", ""}},
         {}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// NodeVolumeLimits: a node's CSINode says how many volumes of a CSI driver it takes. n0
// takes one and runs a pod with its volume; n1 takes none. A pod sharing that pod's claim
// goes beside it (the volume is attached there already); a pod with a volume of its own
// fits nowhere.
TEST_F(SideBySideVolumes, CsiVolumeLimits) {
  const std::string t = "sbs-csi-limits";
  const std::string driver = t + ".csi.example.com";
  for (int i = 0; i < 2; ++i) {
    const std::string node = t + "-" + std::to_string(i);
    CaseNode(t, node, "4");
    ClusterObject(
        "/apis/storage.k8s.io/v1/csinodes",
        {{"apiVersion", "storage.k8s.io/v1"},
         {"kind", "CSINode"},
         {"metadata", {{"name", node}}},
         {"spec",
          {{"drivers",
            {{{"name", driver}, {"nodeID", node}, {"allocatable", {{"count", 1 - i}}}}}}}}});
  }
  for (const char* v : {"a", "b"}) {
    Volume(t + "-" + v, {{"csi", {{"driver", driver}, {"volumeHandle", std::string("vol-") + v}}}},
           json::object(), "ReadWriteMany");
  }
  json holder = CasePod(t, "holder", ClaimVolume("a"));
  holder["spec"]["nodeName"] = t + "-0";
  Case c{t,
         {holder, CasePod(t, "shares", ClaimVolume("a")), CasePod(t, "own", ClaimVolume("b"))},
         {{"holder", {t + "-0"}, "", ""},
          {"shares", {t + "-0"}, "", ""},
          {"own", {}, "Unschedulable", "2 node(s) exceed max volume count"}},
         {Claim("a", t + "-a", "", "ReadWriteMany"), Claim("b", t + "-b", "", "ReadWriteMany")}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
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
    // The resourceclaim controller too: templated_claims_test.cc's, linked later.
    Status started =
        Env().StartControllerManager("persistentvolume-binder,resourceclaim-controller");
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

// Storage capacity tracking: the class's driver publishes CSIStorageCapacity (its CSIDriver
// says storageCapacity: true), and only rack b's has room for the claim: the claim names
// the node of rack b, for both schedulers.
TEST_F(SideBySideWffc, StorageCapacitySelectsTheNodeWithRoom) {
  const std::string t = "sbs-wffc-capacity";
  const std::string driver = t + ".csi.example.com";
  for (const char* rack : {"a", "b"}) CaseNode(t, t + "-" + rack, "4", {{"rack", rack}});
  ClusterObject("/apis/storage.k8s.io/v1/csidrivers",
                {{"apiVersion", "storage.k8s.io/v1"},
                 {"kind", "CSIDriver"},
                 {"metadata", {{"name", driver}}},
                 {"spec", {{"attachRequired", false}, {"storageCapacity", true}}}});
  WffcClass(t, {{"provisioner", driver}});
  for (const auto& [rack, size] : {std::pair{"a", "512Mi"}, std::pair{"b", "10Gi"}}) {
    auto r = Env().Call("POST", "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities",
                        {{"apiVersion", "storage.k8s.io/v1"},
                         {"kind", "CSIStorageCapacity"},
                         {"metadata", {{"name", t + "-" + rack}}},
                         {"storageClassName", t},
                         {"nodeTopology", {{"matchLabels", {{"rack", rack}}}}},
                         {"capacity", size}});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
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
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
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

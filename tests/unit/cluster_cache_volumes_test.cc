// The daemon's cluster cache and pods' PersistentVolumeClaims: what kube-scheduler's
// VolumeRestrictions, VolumeBinding and VolumeZone plugins decide, with the documentation's
// local volume and zone examples; the pods a change re-syncs, and nothing kept after its
// object.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "tests/unit/test_util.h"
#include "tests/unit/volume_objects.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;
using namespace volume_objects;  // NOLINT: the test's vocabulary

// The documentation's local volume: a pod whose claim is bound to it goes only to its
// node (VolumeBinding: "node(s) didn't match PersistentVolume's node affinity" elsewhere).
TEST(ClusterCacheVolumes, LocalVolumeTakesThePodToItsNode) {
  ClusterCache c("gantry");
  Messages m(c);
  for (const char* n : {"node-a", "example-node", "node-c"})
    c.OnNode(EventType::kAdded, NodeObject(n));
  c.OnStorageClass(EventType::kAdded, StorageClass("local-storage", "WaitForFirstConsumer"));
  c.OnPersistentVolume(EventType::kAdded, LocalVolume("example-pv", "example-node"));
  c.OnClaim(EventType::kAdded, Claim("data", "example-pv", "local-storage"));
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  const Task* t = TaskNamed(c.state(), "ml/p");
  ASSERT_NE(t, nullptr) << m.Of("p");
  EXPECT_EQ(c.state().spec(t->spec).volume_node_affinity.size(), 1u);
  EXPECT_EQ(Placements(c), "ml/p@example-node");
  // Without its node the pod fits nowhere, and says why as kube-scheduler does.
  c.OnNode(EventType::kDeleted, NodeObject("example-node"));
  const Decisions d = RunSession(c.state());
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(
      Contains(d.pending[0].reason, "2 node(s) didn't match PersistentVolume's node affinity"));
}

// VolumeZone: a volume in us-east-1b takes the pod to a node of that zone; nodes without
// zone labels would do too, but these all have one.
TEST(ClusterCacheVolumes, ZonedVolumeTakesThePodToItsZone) {
  ClusterCache c("gantry");
  Messages m(c);
  for (const char* z : {"a", "b", "c"}) {
    c.OnNode(EventType::kAdded,
             NodeObject(std::string("node-") + z,
                        {{"topology.kubernetes.io/zone", std::string("us-east-1") + z},
                         {"topology.kubernetes.io/region", "us-east-1"}}));
  }
  c.OnPersistentVolume(EventType::kAdded, ZonedVolume("pv-b", "us-east-1b"));
  c.OnClaim(EventType::kAdded, Claim("data", "pv-b", ""));
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  ASSERT_NE(TaskNamed(c.state(), "ml/p"), nullptr) << m.Of("p");
  EXPECT_EQ(Placements(c), "ml/p@node-b");
  // The volume's label changes to a zone no node has: re-synced, and pending.
  json moved = ZonedVolume("pv-b", "us-east-1d");
  c.OnPersistentVolume(EventType::kModified, moved);
  const Decisions d = RunSession(c.state());
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(Contains(d.pending[0].reason, "3 node(s) had no available volume zone"));
}

// kube-scheduler's messages for claims that keep a pod pending on every node, and the
// pod placed once the claim is right.
TEST(ClusterCacheVolumes, ClaimsThatKeepThePodPendingSaySoInKubeSchedulersWords) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  EXPECT_EQ(c.pending_pods(), 0);
  EXPECT_TRUE(Contains(m.Of("p"),
                       "persistentvolumeclaim \"data\" not found "
                       "(spec.volumes[0].persistentVolumeClaim, volume "
                       "\"data\")"));
  // Unbound, in a class that binds immediately (or in no class, or one that is missing).
  c.OnStorageClass(EventType::kAdded, StorageClass("fast", "Immediate"));
  for (const char* sc : {"fast", "", "missing"}) {
    c.OnClaim(EventType::kModified, Claim("data", "", sc));
    EXPECT_EQ(c.pending_pods(), 0);
    EXPECT_TRUE(Contains(m.Of("p"), "pod has unbound immediate PersistentVolumeClaims")) << sc;
  }
  // Pre-bound (a volume named, the PV controller not done): still immediate and unbound.
  json prebound = Claim("data", "pv", "fast");
  prebound["metadata"]["annotations"].erase("pv.kubernetes.io/bind-completed");
  c.OnClaim(EventType::kModified, prebound);
  EXPECT_TRUE(Contains(m.Of("p"), "pod has unbound immediate PersistentVolumeClaims"));
  // Bound to a volume that does not exist (VolumeZone's PreFilter says so first).
  c.OnClaim(EventType::kModified, Claim("data", "pv", "fast"));
  EXPECT_TRUE(Contains(m.Of("p"), "persistentvolume \"pv\" not found"));
  // Lost, and being deleted.
  json lost = Claim("data", "pv", "fast");
  lost["status"]["phase"] = "Lost";
  c.OnClaim(EventType::kModified, lost);
  EXPECT_TRUE(Contains(m.Of("p"),
                       "persistentvolumeclaim \"data\" bound to non-existent persistentvolume "
                       "\"pv\""));
  json deleting = Claim("data", "pv", "fast");
  deleting["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z";
  c.OnClaim(EventType::kModified, deleting);
  EXPECT_TRUE(Contains(m.Of("p"), "persistentvolumeclaim \"data\" is being deleted"));
  // The volume comes and the claim is whole: placed.
  c.OnPersistentVolume(EventType::kAdded, LocalVolume("pv", "n1"));
  c.OnClaim(EventType::kModified, Claim("data", "pv", "fast"));
  EXPECT_EQ(c.pending_pods(), 1);
  EXPECT_EQ(Placements(c), "ml/p@n1");
}

// A class without a binding mode (not from an API server) is kube-scheduler's error.
TEST(ClusterCacheVolumes, AClassWithoutBindingModeIsAnError) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  json unset = StorageClass("local-storage", "");
  unset.erase("volumeBindingMode");
  c.OnStorageClass(EventType::kAdded, unset);
  c.OnClaim(EventType::kAdded, Claim("data", "", "local-storage"));
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  EXPECT_EQ(c.pending_pods(), 0);
  EXPECT_TRUE(Contains(m.Of("p"), "VolumeBindingMode not set for StorageClass \"local-storage\""));
}

// ---------------------------------------------------------------------------------------
// Delayed binding (WaitForFirstConsumer)

json WffcClass(const std::string& name, const std::string& provisioner, json topologies = nullptr) {
  json sc = StorageClass(name, "WaitForFirstConsumer");
  sc["provisioner"] = provisioner;
  if (!topologies.is_null()) sc["allowedTopologies"] = topologies;
  return sc;
}

// A local volume of `size` in class local-storage, Available as the PV controller leaves
// an unbound volume; `spec` merged into its spec.
json Available(const std::string& name, const std::string& node, const std::string& size,
               json spec = json::object(), json labels = json::object()) {
  json pv = LocalVolume(name, node);
  pv["spec"]["capacity"]["storage"] = size;
  if (spec.is_object()) pv["spec"].merge_patch(spec);
  if (labels.is_object()) pv["metadata"]["labels"] = labels;
  pv["metadata"]["resourceVersion"] = "1";
  pv["status"]["phase"] = "Available";
  return pv;
}

const TaskSpec* PendingSpec(const ClusterCache& c, const std::string& pod) {
  const Task* t = TaskNamed(c.state(), pod);
  return t == nullptr ? nullptr : &c.state().spec(t->spec);
}

std::string VolumeNames(const DelayedClaim& claim) {
  std::string out;
  for (const CandidateVolume& v : claim.volumes) out += (out.empty() ? "" : ",") + v.name;
  return out;
}

// FindMatchingVolume's rules, per claim: its class, capacity at least the request, the
// volume mode, every access mode, its selector, bound to no other claim, Available;
// smallest first. A volume whose claimRef names the claim is the claim's volume.
TEST(ClusterCacheVolumes, DelayedClaimsMatchVolumesAsFindMatchingVolume) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnStorageClass(EventType::kAdded, WffcClass("local-storage", "kubernetes.io/no-provisioner"));
  const json fast = {{"tier", "fast"}};
  c.OnPersistentVolume(EventType::kAdded, Available("big", "n1", "10Gi", {}, fast));
  c.OnPersistentVolume(EventType::kAdded, Available("small", "n1", "1Gi", {}, fast));
  c.OnPersistentVolume(EventType::kAdded, Available("tiny", "n1", "500Mi", {}, fast));
  c.OnPersistentVolume(EventType::kAdded,
                       Available("rox", "n1", "1Gi", {{"accessModes", {"ReadOnlyMany"}}}, fast));
  c.OnPersistentVolume(EventType::kAdded,
                       Available("block", "n1", "1Gi", {{"volumeMode", "Block"}}, fast));
  c.OnPersistentVolume(EventType::kAdded,
                       Available("slow", "n1", "1Gi", {{"storageClassName", "slow"}}, fast));
  c.OnPersistentVolume(EventType::kAdded, Available("unlabelled", "n1", "1Gi"));
  c.OnPersistentVolume(
      EventType::kAdded,
      Available("taken", "n1", "1Gi",
                {{"claimRef", {{"namespace", "ml"}, {"name", "other"}, {"uid", "u"}}}}, fast));
  json pending = Available("pending", "n1", "1Gi", {}, fast);
  pending["status"]["phase"] = "Pending";
  c.OnPersistentVolume(EventType::kAdded, pending);
  json claim = Claim("data", "", "local-storage");
  claim["spec"]["selector"] = {{"matchLabels", fast}};
  c.OnClaim(EventType::kAdded, claim);
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  const TaskSpec* spec = PendingSpec(c, "ml/p");
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->delayed_claims.size(), 1u);
  EXPECT_EQ(spec->delayed_claims[0].claim, "data");
  EXPECT_EQ(VolumeNames(spec->delayed_claims[0]), "small,big");
  EXPECT_FALSE(spec->delayed_claims[0].prebound);
  EXPECT_FALSE(spec->delayed_claims[0].provisionable);  // kubernetes.io/no-provisioner
  // Pre-bound to another uid of the claim's name: someone else's.
  c.OnPersistentVolume(
      EventType::kAdded,
      Available("stale", "n1", "5Gi",
                {{"claimRef", {{"namespace", "ml"}, {"name", "data"}, {"uid", "x"}}}}));
  EXPECT_EQ(VolumeNames(PendingSpec(c, "ml/p")->delayed_claims[0]), "small,big");
  // Pre-bound by name, even unlabelled and not Available: the claim's volume alone.
  json mine =
      Available("mine", "n1", "5Gi", {{"claimRef", {{"namespace", "ml"}, {"name", "data"}}}});
  mine["status"]["phase"] = "Pending";
  c.OnPersistentVolume(EventType::kAdded, mine);
  spec = PendingSpec(c, "ml/p");
  ASSERT_TRUE(spec->delayed_claims[0].prebound);
  EXPECT_EQ(spec->delayed_claims[0].prebound->name, "mine");
  EXPECT_EQ(VolumeNames(spec->delayed_claims[0]), "");
}

// No volume and a class that cannot provision: pending in kube-scheduler's words.
TEST(ClusterCacheVolumes, NoVolumeAndNoProvisionerKeepsThePodPending) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnNode(EventType::kAdded, NodeObject("n2"));
  c.OnStorageClass(EventType::kAdded, WffcClass("local-storage", "kubernetes.io/no-provisioner"));
  c.OnClaim(EventType::kAdded, Claim("data", "", "local-storage"));
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  const Decisions d = RunSession(c.state());
  EXPECT_TRUE(d.binds.empty());
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  c.CollectStatus(d, &conditions, &groups, &events);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_TRUE(Contains(conditions[0].message,
                       "0/2 nodes are available: 2 node(s) didn't find available persistent "
                       "volumes to bind."))
      << conditions[0].message;
}

// kube-scheduler's AssumePodVolumes, bindAPIUpdate and PreBind: the volume's claimRef is
// written, the pod counts where it was placed but is bound only once its claim is; and
// the volume is taken for the other pending pods meanwhile.
TEST(ClusterCacheVolumes, AStaticVolumeIsWrittenThenThePodBoundOnceTheClaimIs) {
  ClusterCache c("gantry");
  for (const char* n : {"n0", "n1", "n2"}) c.OnNode(EventType::kAdded, NodeObject(n));
  c.OnStorageClass(EventType::kAdded, WffcClass("local-storage", "kubernetes.io/no-provisioner"));
  c.OnPersistentVolume(EventType::kAdded, Available("pv", "n1", "1Gi"));
  json claim = Claim("data", "", "local-storage");
  claim["metadata"]["resourceVersion"] = "3";
  c.OnClaim(EventType::kAdded, claim);
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  const Decisions d = RunSession(c.state());
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(d.binds[0].volumes, std::vector<std::string>{"pv"});
  EXPECT_TRUE(c.Assume(d, 100).empty());  // not bound yet
  std::vector<VolumeWrites> writes = c.TakeVolumeWrites();
  ASSERT_EQ(writes.size(), 1u);
  ASSERT_EQ(writes[0].writes.size(), 1u);
  EXPECT_EQ(writes[0].writes[0].path, "/api/v1/persistentvolumes/pv");
  const json patch = json::parse(writes[0].writes[0].patch);
  EXPECT_EQ(patch["metadata"]["resourceVersion"], "1");
  EXPECT_EQ(patch["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"], "yes");
  EXPECT_EQ(patch["spec"]["claimRef"]["name"], "data");
  EXPECT_EQ(patch["spec"]["claimRef"]["namespace"], "ml");
  EXPECT_EQ(patch["spec"]["claimRef"]["uid"], "uid-claim-data");
  EXPECT_EQ(c.assumed_pods(), 1);
  // Another pod, another claim of the class: the volume is taken meanwhile.
  c.OnClaim(EventType::kAdded, Claim("logs", "", "local-storage"));
  c.OnPod(EventType::kAdded, PodObject("q", ClaimVolume("logs")));
  ASSERT_NE(PendingSpec(c, "ml/q"), nullptr);
  EXPECT_EQ(VolumeNames(PendingSpec(c, "ml/q")->delayed_claims[0]), "");
  c.VolumeWritesDone({"ml", "p", "uid-p", true, "", {{"pv/pv", "7"}}}, 101);
  EXPECT_TRUE(c.TakeReadyBinds().empty());
  // The PV controller binds them: the volume first (an older version is not judged), then
  // the claim.
  json pv = Available("pv", "n1", "1Gi");
  pv["metadata"]["resourceVersion"] = "7";
  pv["spec"]["claimRef"] = {{"namespace", "ml"}, {"name", "data"}, {"uid", "uid-claim-data"}};
  pv["status"]["phase"] = "Bound";
  c.OnPersistentVolume(EventType::kModified, pv);
  EXPECT_TRUE(c.TakeReadyBinds().empty());
  json bound = Claim("data", "pv", "local-storage");
  bound["metadata"]["resourceVersion"] = "8";
  c.OnClaim(EventType::kModified, bound);
  std::vector<BindRequest> ready = c.TakeReadyBinds();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].name, "p");
  EXPECT_EQ(ready[0].node, "n1");
  EXPECT_EQ(c.sizes().volume_waits, 0u);
  EXPECT_EQ(c.sizes().volume_overlays, 0u);
  EXPECT_EQ(c.ExpireVolumeBindings(1000), 0u);
}

// Provisioning: the claim gets the selected-node annotation; when the provisioner gives
// up (takes it away), or the claims are not bound within the timeout, the pod is placed
// again after a backoff, with a Warning saying why.
TEST(ClusterCacheVolumes, ProvisioningThatFailsOrTimesOutPlacesThePodAgain) {
  ClusterCache c("gantry");
  c.set_volume_bind_timeout(600);
  c.OnNode(EventType::kAdded, NodeObject("n0", {{"topology.kubernetes.io/zone", "a"}}));
  c.OnNode(EventType::kAdded, NodeObject("n1", {{"topology.kubernetes.io/zone", "b"}}));
  c.OnStorageClass(
      EventType::kAdded,
      WffcClass("fast", "example.com/p",
                json::array({{{"matchLabelExpressions",
                               {{{"key", "topology.kubernetes.io/zone"}, {"values", {"b"}}}}}}})));
  json claim = Claim("data", "", "fast");
  claim["metadata"]["resourceVersion"] = "3";
  c.OnClaim(EventType::kAdded, claim);
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  const Decisions d = RunSession(c.state());
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(c.state().node(d.binds[0].node).name, "n1");  // the allowed zone
  EXPECT_EQ(d.binds[0].volumes, std::vector<std::string>{""});
  EXPECT_TRUE(c.Assume(d, 100).empty());
  std::vector<VolumeWrites> writes = c.TakeVolumeWrites();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].writes[0].path, "/api/v1/namespaces/ml/persistentvolumeclaims/data");
  const json patch = json::parse(writes[0].writes[0].patch);
  EXPECT_EQ(patch["metadata"]["annotations"]["volume.kubernetes.io/selected-node"], "n1");
  EXPECT_EQ(patch["metadata"]["resourceVersion"], "3");
  // The writes take 50 s (a slow API server): the 600 s wait counts from when they are done.
  c.VolumeWritesDone({"ml", "p", "uid-p", true, "", {{"pvc/ml/data", "4"}}}, 150);
  // The claim as written: still waiting; long after, given up.
  claim["metadata"]["resourceVersion"] = "4";
  claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] = "n1";
  c.OnClaim(EventType::kModified, claim);
  EXPECT_EQ(c.ExpireVolumeBindings(701), 0u);
  EXPECT_EQ(c.ExpireVolumeBindings(749), 0u);
  EXPECT_EQ(c.ExpireVolumeBindings(751), 1u);
  EXPECT_EQ(c.assumed_pods(), 0);
  EXPECT_EQ(c.sizes().volume_waits, 0u);
  EXPECT_EQ(c.sizes().volume_overlays, 0u);
  bool said = false;
  for (const ObjectEvent& e : c.TakeProblems()) {
    said = said || (e.reason == "FailedScheduling" && Contains(e.message, "timed out"));
  }
  EXPECT_TRUE(said);
  // After the backoff it is placed again, on the node its claim names now.
  c.ReleaseHeld(1000);
  const Decisions again = RunSession(c.state());
  ASSERT_EQ(again.binds.size(), 1u);
  EXPECT_TRUE(c.Assume(again, 1000).empty());
  ASSERT_EQ(c.TakeVolumeWrites().size(), 1u);
  c.VolumeWritesDone({"ml", "p", "uid-p", true, "", {{"pvc/ml/data", "5"}}}, 1001);
  // The provisioner gives up: it takes the annotation away.
  claim["metadata"]["resourceVersion"] = "6";
  claim["metadata"]["annotations"].erase("volume.kubernetes.io/selected-node");
  c.OnClaim(EventType::kModified, claim);
  EXPECT_EQ(c.ExpireVolumeBindings(1002), 1u);
  EXPECT_EQ(c.assumed_pods(), 0);
  said = false;
  for (const ObjectEvent& e : c.TakeProblems()) {
    said = said || Contains(e.message, "provisioning failed for PVC \"data\"");
  }
  EXPECT_TRUE(said);
}

// A write the API server refuses is a failed bind; a pod deleted while it waits leaves
// nothing behind.
TEST(ClusterCacheVolumes, ARefusedWriteOrADeletedPodEndsTheWait) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnStorageClass(EventType::kAdded, WffcClass("local-storage", "kubernetes.io/no-provisioner"));
  c.OnPersistentVolume(EventType::kAdded, Available("pv", "n1", "1Gi"));
  c.OnClaim(EventType::kAdded, Claim("data", "", "local-storage"));
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  EXPECT_TRUE(c.Assume(RunSession(c.state()), 100).empty());
  ASSERT_EQ(c.TakeVolumeWrites().size(), 1u);
  c.VolumeWritesDone({"ml", "p", "uid-p", false, "updating persistentvolume \"pv\": 409", {}}, 101);
  EXPECT_EQ(c.assumed_pods(), 0);
  EXPECT_EQ(c.sizes().volume_overlays, 0u);
  c.ReleaseHeld(1000);
  EXPECT_TRUE(c.Assume(RunSession(c.state()), 1000).empty());
  EXPECT_EQ(c.sizes().volume_overlays, 1u);
  c.OnPod(EventType::kDeleted, PodObject("p", ClaimVolume("data")));
  EXPECT_EQ(c.sizes().volume_waits, 1u);  // its queued writes, until taken
  (void)c.TakeVolumeWrites();
  EXPECT_EQ(c.sizes().volume_waits, 0u);
  EXPECT_EQ(c.sizes().volume_overlays, 0u);
}

// Generic ephemeral volumes: the claim <pod>-<volume>, made by its controller for the pod.
TEST(ClusterCacheVolumes, EphemeralVolumesWaitForTheirClaimMadeForThePod) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnNode(EventType::kAdded, NodeObject("n2"));
  json volumes = json::array(
      {{{"name", "scratch"},
        {"ephemeral",
         {{"volumeClaimTemplate", {{"spec", {{"accessModes", {"ReadWriteOnce"}}}}}}}}}});
  c.OnPod(EventType::kAdded, PodObject("p", volumes));
  EXPECT_TRUE(Contains(m.Of("p"),
                       "waiting for ephemeral volume controller to create the "
                       "persistentvolumeclaim \"p-scratch\" (spec.volumes[0].ephemeral"));
  // A claim of that name that the pod does not own is not its.
  c.OnPersistentVolume(EventType::kAdded, LocalVolume("pv", "n2"));
  c.OnClaim(EventType::kAdded, Claim("p-scratch", "pv", ""));
  EXPECT_TRUE(
      Contains(m.Of("p"), "PVC ml/p-scratch was not created for pod ml/p (pod is not owner)"));
  json owned = Claim("p-scratch", "pv", "");
  owned["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"},
                                           {"kind", "Pod"},
                                           {"name", "p"},
                                           {"uid", "uid-p"},
                                           {"controller", true}}};
  c.OnClaim(EventType::kModified, owned);
  EXPECT_EQ(Placements(c), "ml/p@n2");
}

// ReadWriteOncePod (VolumeRestrictions): a claim used by a pod on a node keeps other pods
// that want it pending, until that pod is gone.
TEST(ClusterCacheVolumes, ReadWriteOncePodClaimHeldByARunningPod) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnPersistentVolume(EventType::kAdded, LocalVolume("pv", "n1"));
  c.OnClaim(EventType::kAdded, Claim("data", "pv", "", "ReadWriteOncePod"));
  c.OnPod(EventType::kAdded, Bound(PodObject("holder", ClaimVolume("data"), "other"), "n1"));
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  EXPECT_EQ(c.pending_pods(), 0);
  EXPECT_TRUE(Contains(m.Of("p"),
                       "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
                       "access mode already in-use by another pod "
                       "(spec.volumes[0].persistentVolumeClaim, "
                       "volume \"data\": claim \"data\" is used by pod ml/holder)"));
  // Finished, it no longer holds the claim.
  json done = Bound(PodObject("holder", ClaimVolume("data"), "other"), "n1");
  done["status"]["phase"] = "Succeeded";
  c.OnPod(EventType::kModified, done);
  EXPECT_EQ(c.pending_pods(), 1);
  c.OnPod(EventType::kModified, Bound(PodObject("holder", ClaimVolume("data"), "other"), "n1"));
  EXPECT_EQ(c.pending_pods(), 0);
  c.OnPod(EventType::kDeleted, Bound(PodObject("holder", ClaimVolume("data"), "other"), "n1"));
  EXPECT_EQ(c.pending_pods(), 1);
  EXPECT_EQ(Placements(c), "ml/p@n1");
}

// Two pending pods that want one ReadWriteOncePod claim: the session places one (the
// engine refuses the second once the first is placed), and once it is assumed the other
// leaves the session until the bind fails or the pod goes.
TEST(ClusterCacheVolumes, ReadWriteOncePodClaimWantedByTwoPendingPods) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnNode(EventType::kAdded, NodeObject("n2"));
  c.OnClaim(EventType::kAdded, Claim("data", "pv", "", "ReadWriteOncePod"));
  c.OnPersistentVolume(EventType::kAdded, ZonedVolume("pv", "us-east-1a"));
  json older = PodObject("a", ClaimVolume("data"));
  json newer = PodObject("b", ClaimVolume("data"));
  newer["metadata"]["creationTimestamp"] = "2025-01-01T00:00:05Z";
  c.OnPod(EventType::kAdded, newer);
  c.OnPod(EventType::kAdded, older);
  ASSERT_EQ(c.pending_pods(), 2);
  const Decisions d = RunSession(c.state());
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(c.state().task(d.binds[0].task).name, "ml/a") << "the older goes first";
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(Contains(d.pending[0].reason,
                       "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
                       "access mode already in-use by another pod"));
  ASSERT_EQ(c.Assume(d).size(), 1u);
  EXPECT_EQ(c.pending_pods(), 0) << "b waits while a holds the claim";
  EXPECT_TRUE(Contains(m.Of("b"), "claim \"data\" is used by pod ml/a"));
  c.BindFailed("ml", "a", "uid-a", /*now=*/0);
  c.ReleaseHeld(100);
  EXPECT_EQ(c.pending_pods(), 2);
}

// Objects that cannot be read are reported, and the pods that need them say which.
TEST(ClusterCacheVolumes, UnreadableVolumeIsReportedAndNamedByItsPods) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  json bad = LocalVolume("pv", "n1");
  bad["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
     ["operator"] = "Near";
  c.OnPersistentVolume(EventType::kAdded, bad);
  const std::vector<ObjectEvent> problems = c.TakeProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, "PersistentVolume");
  EXPECT_EQ(problems[0].reason, "InvalidPersistentVolume");
  c.OnClaim(EventType::kAdded, Claim("data", "pv", ""));
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  EXPECT_EQ(c.pending_pods(), 0);
  EXPECT_TRUE(Contains(m.Of("p"),
                       "persistentvolume \"pv\" cannot be read by gantry: persistentvolume pv: "
                       "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0]."
                       "operator"));
}

// A claim's event visits only the pods that name it; a volume's and a class's only those
// of their claims.
TEST(ClusterCacheVolumes, ChangesResyncOnlyThePodsTheyConcern) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnStorageClass(EventType::kAdded, StorageClass("fast", "Immediate"));
  for (int i = 0; i < 50; ++i) {
    const std::string n = std::to_string(i);
    c.OnPersistentVolume(EventType::kAdded, LocalVolume("pv-" + n, "n1"));
    c.OnClaim(EventType::kAdded, Claim("claim-" + n, "pv-" + n, "fast"));
    c.OnPod(EventType::kAdded, PodObject("p-" + n, ClaimVolume("claim-" + n)));
  }
  EXPECT_EQ(c.pending_pods(), 50);
  int64_t before = c.pod_records_visited();
  c.OnClaim(EventType::kModified, Claim("claim-7", "pv-7", "fast"));
  EXPECT_EQ(c.pod_records_visited() - before, 1);
  before = c.pod_records_visited();
  c.OnPersistentVolume(EventType::kModified, LocalVolume("pv-8", "n1"));
  EXPECT_EQ(c.pod_records_visited() - before, 1);
  before = c.pod_records_visited();
  c.OnStorageClass(EventType::kModified, StorageClass("fast", "Immediate"));
  EXPECT_EQ(c.pod_records_visited() - before, 50) << "each claim of the class, once";
  before = c.pod_records_visited();
  c.OnStorageClass(EventType::kAdded, StorageClass("slow", "Immediate"));
  EXPECT_EQ(c.pod_records_visited() - before, 0);
}

// Nothing outlives its object: claims, volumes, classes and the indexes from pods.
TEST(ClusterCacheVolumes, NothingIsKeptAfterItsObjectIsGone) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnStorageClass(EventType::kAdded, StorageClass("fast", "Immediate"));
  c.OnPersistentVolume(EventType::kAdded, LocalVolume("pv", "n1"));
  c.OnClaim(EventType::kAdded, Claim("data", "pv", "fast", "ReadWriteOncePod"));
  json bad_claim = Claim("bad", "", "");
  bad_claim["spec"]["accessModes"] = 5;
  c.OnClaim(EventType::kAdded, bad_claim);
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  c.OnPod(EventType::kAdded, PodObject("q", ClaimVolume("missing")));
  c.OnPod(EventType::kAdded, Bound(PodObject("r", ClaimVolume("bad"), "other"), "n1"));
  EXPECT_FALSE(m.Of("q").empty());  // written, and remembered, until q goes
  ClusterCache::Sizes s = c.sizes();
  EXPECT_EQ(s.claims, 2u);
  EXPECT_EQ(s.volumes, 1u);
  EXPECT_EQ(s.storage_classes, 1u);
  EXPECT_EQ(s.claim_index, 6u);  // 3 pods' claims, the claim's volume and class, the volume's class
  EXPECT_GT(s.component_records, 0u);  // the pods the volume binder follows
  for (const char* p : {"p", "q"}) c.OnPod(EventType::kDeleted, PodObject(p, json::array()));
  c.OnPod(EventType::kDeleted, Bound(PodObject("r", json::array(), "other"), "n1"));
  c.OnClaim(EventType::kDeleted, Claim("data", "", ""));
  c.OnClaim(EventType::kDeleted, bad_claim);
  c.OnPersistentVolume(EventType::kDeleted, LocalVolume("pv", "n1"));
  c.OnStorageClass(EventType::kDeleted, StorageClass("fast", "Immediate"));
  s = c.sizes();
  EXPECT_EQ(s.claims, 0u);
  EXPECT_EQ(s.volumes, 0u);
  EXPECT_EQ(s.storage_classes, 0u);
  EXPECT_EQ(s.claim_index, 0u);
  EXPECT_EQ(s.pods, 0u);
  EXPECT_EQ(s.component_records, 0u);
}

}  // namespace
}  // namespace gantry

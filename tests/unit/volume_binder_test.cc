// The volume binder alone (daemon/volume_binder.h): no cache, no jobs, no session. Pods are
// the PodInfo values it is told about, nodes those of a ClusterState; what it answers (the
// pods and nodes to sync, the writes, the binds that are ready, the waits to give up) is
// checked as values.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "daemon/volume_binder.h"
#include "k8s/objects.h"
#include "tests/unit/test_util.h"
#include "tests/unit/volume_objects.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;
using volume_objects::Claim;
using volume_objects::ClaimVolume;
using volume_objects::LocalVolume;
using volume_objects::NodeObject;
using volume_objects::PodObject;
using volume_objects::StorageClass;

json NoProvisionerClass(const std::string& name) {
  json sc = StorageClass(name, "WaitForFirstConsumer");
  sc["provisioner"] = "kubernetes.io/no-provisioner";
  return sc;
}

json ProvisioningClass(const std::string& name) {
  return StorageClass(name, "WaitForFirstConsumer");  // provisioner example.com/p
}

// A local volume on `node`, Available, in class local-storage, at resourceVersion 1.
json Available(const std::string& name, const std::string& node) {
  json pv = LocalVolume(name, node);
  pv["spec"]["capacity"]["storage"] = "1Gi";
  pv["metadata"]["resourceVersion"] = "1";
  pv["status"]["phase"] = "Available";
  return pv;
}

std::vector<std::string> Sorted(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  return keys;
}

class VolumeBinderTest : public ::testing::Test {
 protected:
  void AddNode(const std::string& name) {
    auto node = k8s::ParseNode(NodeObject(name));
    ASSERT_TRUE(node.ok()) << node.status().message();
    ASSERT_TRUE(cluster_.AddNode(std::move(node).value()).ok());
  }
  // Pod `name` of namespace ml, told to the binder, naming `claim`.
  k8s::PodInfo Track(const std::string& name, const std::string& claim) {
    std::string problem;
    auto pod = k8s::DecodePod(PodObject(name, ClaimVolume(claim)), &problem);
    EXPECT_TRUE(pod.ok());
    binder_.TrackPod("ml/" + name, *pod);
    return *pod;
  }
  // What Resolve says of the pod, and its spec.
  std::string Resolve(const k8s::PodInfo& pod, TaskSpec* spec = nullptr) {
    TaskSpec local;
    return binder_.Resolve(pod, spec != nullptr ? spec : &local);
  }
  BindRequest BindOf(const std::string& name, const std::string& node) {
    BindRequest bind;
    bind.namespace_ = "ml";
    bind.name = name;
    bind.uid = "uid-" + name;
    bind.node = node;
    return bind;
  }

  ClusterState cluster_;
  VolumeBinder binder_;
};

// A bound claim's volume takes the pod to its node; a claim not found keeps it pending in
// kube-scheduler's words, until the claim comes, when the pods that name it are answered.
TEST_F(VolumeBinderTest, ResolvesAPodsClaimsAndAnswersWithThePodsAChangeReaches) {
  const k8s::PodInfo p = Track("p", "data");
  const k8s::PodInfo q = Track("q", "logs");
  const k8s::PodInfo r = Track("r", "data");
  EXPECT_EQ(Resolve(p),
            "persistentvolumeclaim \"data\" not found (spec.volumes[0].persistentVolumeClaim, "
            "volume \"data\")");
  (void)binder_.OnStorageClass(EventType::kAdded, NoProvisionerClass("local-storage"), cluster_);
  (void)binder_.OnPersistentVolume(EventType::kAdded, LocalVolume("pv", "n1"), cluster_);
  Resync resync =
      binder_.OnClaim(EventType::kAdded, Claim("data", "pv", "local-storage"), cluster_);
  EXPECT_EQ(Sorted(resync.pods), (std::vector<std::string>{"ml/p", "ml/r"}));
  EXPECT_TRUE(resync.nodes.empty());
  EXPECT_TRUE(resync.problems.empty());
  TaskSpec spec;
  EXPECT_EQ(Resolve(p, &spec), "");
  EXPECT_EQ(spec.volume_node_affinity.size(), 1u);
  // The volume changes: the pods of the claims bound to it.
  resync = binder_.OnPersistentVolume(EventType::kModified, LocalVolume("pv", "n2"), cluster_);
  EXPECT_EQ(Sorted(resync.pods), (std::vector<std::string>{"ml/p", "ml/r"}));
  // A class no claim has reaches no pod; q's claim, only q.
  EXPECT_TRUE(
      binder_.OnStorageClass(EventType::kAdded, StorageClass("other", "Immediate"), cluster_)
          .pods.empty());
  resync = binder_.OnClaim(EventType::kAdded, Claim("logs", "", "other"), cluster_);
  EXPECT_EQ(resync.pods, (std::vector<std::string>{"ml/q"}));
  EXPECT_TRUE(Contains(Resolve(q), "pod has unbound immediate PersistentVolumeClaims"));
  // Each pod that names a changed claim is visited once.
  const int64_t before = binder_.pods_visited();
  (void)binder_.OnClaim(EventType::kModified, Claim("data", "pv", "local-storage"), cluster_);
  EXPECT_EQ(binder_.pods_visited() - before, 2);
  (void)r;
}

// An object that cannot be read is an event in the answer, once, and the words of the pods
// that name it.
TEST_F(VolumeBinderTest, AnUnreadableClaimIsAProblemOnceAndThePodsReason) {
  const k8s::PodInfo p = Track("p", "data");
  json bad = Claim("data", "", "");
  bad["spec"]["accessModes"] = "ReadWriteOnce";  // not a list
  Resync resync = binder_.OnClaim(EventType::kAdded, bad, cluster_);
  ASSERT_EQ(resync.problems.size(), 1u);
  EXPECT_EQ(resync.problems[0].kind, "PersistentVolumeClaim");
  EXPECT_EQ(resync.problems[0].reason, "InvalidPersistentVolumeClaim");
  EXPECT_EQ(resync.pods, (std::vector<std::string>{"ml/p"}));
  EXPECT_TRUE(Contains(Resolve(p), "persistentvolumeclaim \"data\" cannot be read by gantry"));
  EXPECT_TRUE(
      binder_.OnClaim(EventType::kModified, bad, cluster_).problems.empty());  // said already
}

// ReadWriteOncePod: a pod that uses the claim keeps the others from it; when it stops (or is
// forgotten), the pods that want the claim are answered.
TEST_F(VolumeBinderTest, AReadWriteOncePodClaimInUseKeepsOthersAndItsEndResyncsThem) {
  (void)binder_.OnPersistentVolume(EventType::kAdded, LocalVolume("pv", "n1"), cluster_);
  (void)binder_.OnClaim(EventType::kAdded, Claim("solo", "pv", "", "ReadWriteOncePod"), cluster_);
  const k8s::PodInfo p = Track("p", "solo");
  const k8s::PodInfo q = Track("q", "solo");
  EXPECT_EQ(Resolve(q), "");
  Resync resync = binder_.SetClaimsInUse("ml/p", true, cluster_);
  EXPECT_EQ(resync.pods, (std::vector<std::string>{"ml/q"}));
  EXPECT_TRUE(Contains(Resolve(q), "already in-use by another pod"));
  EXPECT_TRUE(Contains(Resolve(q), "is used by pod ml/p"));
  EXPECT_TRUE(binder_.SetClaimsInUse("ml/p", true, cluster_).pods.empty());  // no change
  resync = binder_.ForgetPod("ml/p", cluster_);
  EXPECT_EQ(resync.pods, (std::vector<std::string>{"ml/q"}));
  EXPECT_EQ(Resolve(q), "");
  (void)binder_.ForgetPod("ml/q", cluster_);
  (void)binder_.OnClaim(EventType::kDeleted, Claim("solo", "pv", "", "ReadWriteOncePod"), cluster_);
  (void)binder_.OnPersistentVolume(EventType::kDeleted, LocalVolume("pv", "n1"), cluster_);
  const VolumeBinder::Sizes sizes = binder_.sizes();
  EXPECT_EQ(sizes.pods, 0u);
  EXPECT_EQ(sizes.claim_index, 0u);
  EXPECT_EQ(sizes.claims, 0u);
  EXPECT_EQ(sizes.volumes, 0u);
}

// Assume: the volume chosen for a delayed claim is taken for other pods at once and its
// claimRef written; the bind is ready once the PV controller has bound the claim, and the
// end of the wait answers with the pods that saw the volume taken.
TEST_F(VolumeBinderTest, AnAssumedVolumeIsWrittenAndTheBindIsReadyOnceTheClaimIsBound) {
  AddNode("n1");
  (void)binder_.OnStorageClass(EventType::kAdded, NoProvisionerClass("local-storage"), cluster_);
  (void)binder_.OnPersistentVolume(EventType::kAdded, Available("pv", "n1"), cluster_);
  json claim = Claim("data", "", "local-storage");
  claim["metadata"]["resourceVersion"] = "3";
  (void)binder_.OnClaim(EventType::kAdded, claim, cluster_);
  (void)binder_.OnClaim(EventType::kAdded, Claim("logs", "", "local-storage"), cluster_);
  const k8s::PodInfo p = Track("p", "data");
  const k8s::PodInfo q = Track("q", "logs");
  TaskSpec spec;
  ASSERT_EQ(Resolve(p, &spec), "");
  ASSERT_EQ(spec.delayed_claims.size(), 1u);
  ASSERT_EQ(spec.delayed_claims[0].volumes.size(), 1u);
  EXPECT_EQ(spec.delayed_claims[0].volumes[0].name, "pv");

  BindDecision decision;
  decision.volumes = {"pv"};
  VolumeBinder::Touched touched;
  EXPECT_EQ(binder_.Assume("ml/p", decision, spec, BindOf("p", "n1"), 100, &touched), "");
  EXPECT_EQ(touched.claims, (std::vector<std::string>{"ml/data"}));
  EXPECT_EQ(touched.classes, (std::vector<std::string>{"local-storage"}));
  EXPECT_TRUE(binder_.Waiting("ml/p"));
  // q's claim of the class is answered, and sees the volume taken.
  EXPECT_EQ(binder_.ResyncAfterAssume(touched, cluster_).pods, (std::vector<std::string>{"ml/q"}));
  TaskSpec q_spec;
  ASSERT_EQ(Resolve(q, &q_spec), "");
  ASSERT_EQ(q_spec.delayed_claims.size(), 1u);
  EXPECT_TRUE(q_spec.delayed_claims[0].volumes.empty());
  const std::vector<VolumeWrites> writes = binder_.TakeWrites();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].name, "p");
  ASSERT_EQ(writes[0].writes.size(), 1u);
  EXPECT_EQ(writes[0].writes[0].path, "/api/v1/persistentvolumes/pv");
  const json patch = json::parse(writes[0].writes[0].patch);
  EXPECT_EQ(patch["spec"]["claimRef"]["name"], "data");
  EXPECT_EQ(patch["spec"]["claimRef"]["uid"], "uid-claim-data");

  Resync resync;
  EXPECT_EQ(
      binder_.WritesDone({"ml", "p", "uid-p", true, "", {{"pv/pv", "7"}}}, 101, cluster_, &resync),
      std::nullopt);
  EXPECT_TRUE(binder_.TakeReadyBinds().empty());
  // The PV controller binds the volume, then the claim.
  json pv = Available("pv", "n1");
  pv["metadata"]["resourceVersion"] = "7";
  pv["spec"]["claimRef"] = {{"namespace", "ml"}, {"name", "data"}, {"uid", "uid-claim-data"}};
  pv["status"]["phase"] = "Bound";
  (void)binder_.OnPersistentVolume(EventType::kModified, pv, cluster_);
  EXPECT_TRUE(binder_.TakeReadyBinds().empty());
  json bound = Claim("data", "pv", "local-storage");
  bound["metadata"]["resourceVersion"] = "8";
  resync = binder_.OnClaim(EventType::kModified, bound, cluster_);
  const std::vector<BindRequest> ready = binder_.TakeReadyBinds();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].name, "p");
  EXPECT_EQ(ready[0].node, "n1");
  EXPECT_FALSE(binder_.Waiting("ml/p"));
  // The pods of the class see the assumption gone; p itself is not among them.
  EXPECT_EQ(std::count(resync.pods.begin(), resync.pods.end(), "ml/q"), 1);
  EXPECT_EQ(std::count(resync.pods.begin(), resync.pods.end(), "ml/p"), 0);
  EXPECT_EQ(binder_.sizes().volume_waits, 0u);
  EXPECT_EQ(binder_.sizes().volume_overlays, 0u);
  EXPECT_TRUE(binder_.Poll(10000).empty());
}

// Provisioning: the claim's selected-node annotation is written; a wait past its deadline,
// or one whose provisioner gave up, is handed back by Poll for the caller to give up.
TEST_F(VolumeBinderTest, PollHandsBackTheWaitsThatTimedOutOrFailed) {
  AddNode("n1");
  binder_.set_bind_timeout(600);
  (void)binder_.OnStorageClass(EventType::kAdded, ProvisioningClass("fast"), cluster_);
  json claim = Claim("data", "", "fast");
  claim["metadata"]["resourceVersion"] = "3";
  (void)binder_.OnClaim(EventType::kAdded, claim, cluster_);
  const k8s::PodInfo p = Track("p", "data");
  TaskSpec spec;
  ASSERT_EQ(Resolve(p, &spec), "");
  ASSERT_EQ(spec.delayed_claims.size(), 1u);
  EXPECT_TRUE(spec.delayed_claims[0].provisionable);
  BindDecision decision;
  decision.volumes = {""};
  VolumeBinder::Touched touched;
  ASSERT_EQ(binder_.Assume("ml/p", decision, spec, BindOf("p", "n1"), 100, &touched), "");
  const std::vector<VolumeWrites> writes = binder_.TakeWrites();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].writes[0].path, "/api/v1/namespaces/ml/persistentvolumeclaims/data");
  // Before the writes are done the deadline counts from the Assume; after, from then.
  EXPECT_TRUE(binder_.Poll(699).empty());
  Resync resync;
  EXPECT_EQ(binder_.WritesDone({"ml", "p", "uid-p", true, "", {{"pvc/ml/data", "4"}}}, 150,
                               cluster_, &resync),
            std::nullopt);
  EXPECT_TRUE(binder_.Poll(749).empty());
  using Due = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(binder_.Poll(751), (Due{{"ml/p", "timed out waiting for the condition"}}));
  // Poll only says; Forget gives it up.
  EXPECT_TRUE(binder_.Waiting("ml/p"));
  (void)binder_.Forget("ml/p", cluster_);
  EXPECT_FALSE(binder_.Waiting("ml/p"));
  EXPECT_TRUE(binder_.Poll(751).empty());

  // Again, and the provisioner gives up: it takes the annotation away.
  ASSERT_EQ(binder_.Assume("ml/p", decision, spec, BindOf("p", "n1"), 1000, &touched), "");
  (void)binder_.TakeWrites();
  (void)binder_.WritesDone({"ml", "p", "uid-p", true, "", {{"pvc/ml/data", "5"}}}, 1001, cluster_,
                           &resync);
  claim["metadata"]["resourceVersion"] = "6";
  (void)binder_.OnClaim(EventType::kModified, claim, cluster_);
  EXPECT_EQ(binder_.Poll(1002), (Due{{"ml/p", "provisioning failed for PVC \"data\""}}));
  EXPECT_TRUE(binder_.Poll(1002).empty()) << "a failure is handed back once";
  (void)binder_.Forget("ml/p", cluster_);
  EXPECT_EQ(binder_.sizes().volume_waits, 0u);
  EXPECT_EQ(binder_.sizes().volume_overlays, 0u);
}

// A refused write is the binding's failure; an answer for another pod of the name (another
// uid), or for a pod that does not wait, is nothing.
TEST_F(VolumeBinderTest, ARefusedWriteIsAFailureAndAStaleAnswerIsNothing) {
  AddNode("n1");
  (void)binder_.OnStorageClass(EventType::kAdded, ProvisioningClass("fast"), cluster_);
  (void)binder_.OnClaim(EventType::kAdded, Claim("data", "", "fast"), cluster_);
  const k8s::PodInfo p = Track("p", "data");
  TaskSpec spec;
  ASSERT_EQ(Resolve(p, &spec), "");
  BindDecision decision;
  decision.volumes = {""};
  VolumeBinder::Touched touched;
  ASSERT_EQ(binder_.Assume("ml/p", decision, spec, BindOf("p", "n1"), 100, &touched), "");
  Resync resync;
  EXPECT_EQ(binder_.WritesDone({"ml", "p", "other-uid", false, "409", {}}, 101, cluster_, &resync),
            std::nullopt);
  EXPECT_EQ(binder_.WritesDone({"ml", "x", "uid-x", false, "409", {}}, 101, cluster_, &resync),
            std::nullopt);
  EXPECT_EQ(binder_.WritesDone({"ml", "p", "uid-p", false, "409", {}}, 101, cluster_, &resync),
            "409");
  // A choice that names what is gone is refused, and nothing is assumed.
  decision.volumes = {"no-such-volume"};
  (void)binder_.Forget("ml/p", cluster_);
  EXPECT_EQ(binder_.Assume("ml/p", decision, spec, BindOf("p", "n1"), 200, &touched),
            "persistentvolume no-such-volume is gone");
  EXPECT_FALSE(binder_.Waiting("ml/p"));
  EXPECT_EQ(binder_.sizes().volume_overlays, 0u);
}

// CSI objects answer with the nodes whose CSI part changed; a CSIDriver with every pod to
// place that has volumes.
TEST_F(VolumeBinderTest, CsiObjectsAnswerWithTheirNodes) {
  json csi_node = {{"metadata", {{"name", "n1"}, {"uid", "u"}}},
                   {"spec",
                    {{"drivers", json::array({{{"name", "ebs.csi.aws.com"},
                                               {"nodeID", "i-1"},
                                               {"allocatable", {{"count", 2}}}}})}}}};
  Resync resync = binder_.OnCsiNode(EventType::kAdded, csi_node);
  EXPECT_EQ(resync.nodes, (std::vector<std::string>{"n1"}));
  EXPECT_TRUE(binder_.NodeCsiOf("n1").has_csi_node);
  EXPECT_FALSE(binder_.NodeCsiOf("n2").has_csi_node);
  json attachment = {{"metadata", {{"name", "a1"}}},
                     {"spec",
                      {{"attacher", "ebs.csi.aws.com"},
                       {"nodeName", "n2"},
                       {"source", {{"persistentVolumeName", "v1"}}}}}};
  resync = binder_.OnVolumeAttachment(EventType::kAdded, attachment);
  EXPECT_EQ(resync.nodes, (std::vector<std::string>{"n2"}));
  json driver = {{"metadata", {{"name", "ebs.csi.aws.com"}}},
                 {"spec", {{"storageCapacity", false}, {"preventPodSchedulingIfMissing", true}}}};
  resync = binder_.OnCsiDriver(EventType::kAdded, driver);
  EXPECT_TRUE(resync.pods_with_volumes);
  EXPECT_TRUE(resync.pods.empty());
}

}  // namespace
}  // namespace gantry

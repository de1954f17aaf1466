// The daemon's cluster cache and CSI objects: a node's CSINode limits and its
// VolumeAttachments against the volumes of the pods on it (NodeVolumeLimits), drivers that
// must be on the node, and CSIStorageCapacity for claims provisioned on first use
// (VolumeBinding's hasEnoughCapacity). Objects as the API server returns them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "tests/unit/test_util.h"
#include "tests/unit/volume_objects.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;
using namespace volume_objects;  // NOLINT: the test's vocabulary

constexpr const char* kEbs = "ebs.csi.aws.com";

json CsiNode(const std::string& node, int count, const std::string& driver = kEbs) {
  return {{"metadata", {{"name", node}, {"uid", "uid-csinode-" + node}}},
          {"spec",
           {{"drivers", json::array({{{"name", driver},
                                      {"nodeID", "i-" + node},
                                      {"allocatable", {{"count", count}}}}})}}}};
}

json CsiVolume(const std::string& name, const std::string& handle) {
  return {{"metadata", {{"name", name}, {"uid", "uid-pv-" + name}}},
          {"spec",
           {{"capacity", {{"storage", "10Gi"}}},
            {"accessModes", {"ReadWriteOnce"}},
            {"csi", {{"driver", kEbs}, {"volumeHandle", handle}}}}},
          {"status", {{"phase", "Bound"}}}};
}

json Attachment(const std::string& name, const std::string& node, const std::string& pv) {
  return {{"metadata", {{"name", name}}},
          {"spec",
           {{"attacher", kEbs}, {"nodeName", node}, {"source", {{"persistentVolumeName", pv}}}}}};
}

json CsiDriver(const std::string& name, bool capacity, bool required) {
  return {{"metadata", {{"name", name}}},
          {"spec", {{"storageCapacity", capacity}, {"preventPodSchedulingIfMissing", required}}}};
}

// A pod "pN" with a claim "cN" bound to the CSI volume "vN" (handle "vol-N").
void AddPodWithVolume(ClusterCache& c, int n, const std::string& node = "") {
  const std::string i = std::to_string(n);
  c.OnPersistentVolume(EventType::kAdded, CsiVolume("v" + i, "vol-" + i));
  c.OnClaim(EventType::kAdded, Claim("c" + i, "v" + i, ""));
  json pod = PodObject("p" + i, ClaimVolume("c" + i));
  if (!node.empty()) pod = Bound(pod, node);
  c.OnPod(EventType::kAdded, pod);
}

TEST(ClusterCacheCsi, BoundPodsVolumesCountAgainstTheNodesLimit) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnNode(EventType::kAdded, NodeObject("n2"));
  c.OnCsiNode(EventType::kAdded, CsiNode("n1", 1));
  c.OnCsiNode(EventType::kAdded, CsiNode("n2", 2));
  AddPodWithVolume(c, 0, "n2");  // running on n2, which has room for one more
  AddPodWithVolume(c, 1);
  AddPodWithVolume(c, 2);
  AddPodWithVolume(c, 3);
  // One each on n1 (limit 1) and n2 (limit 2, one used); the third has no room.
  const Decisions d = RunSession(c.state());
  std::vector<std::string> placed;
  for (const BindDecision& b : d.binds) placed.push_back(c.state().node(b.node).name);
  std::sort(placed.begin(), placed.end());
  EXPECT_EQ(placed, (std::vector<std::string>{"n1", "n2"}));
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(Contains(d.pending[0].reason, "2 node(s) exceed max volume count"))
      << d.pending[0].reason;
}

TEST(ClusterCacheCsi, LimitsFollowTheCsiNodeAndAttachments) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  AddPodWithVolume(c, 1);
  EXPECT_EQ(Placements(c), "ml/p1@n1") << "no CSINode: no limit";
  c.OnCsiNode(EventType::kAdded, CsiNode("n1", 1));
  EXPECT_EQ(Placements(c), "ml/p1@n1");
  // A volume attached to n1 that no pod there uses takes the one slot.
  c.OnPersistentVolume(EventType::kAdded, CsiVolume("other", "vol-other"));
  c.OnVolumeAttachment(EventType::kAdded, Attachment("va-1", "n1", "other"));
  EXPECT_EQ(Placements(c), "");
  c.OnCsiNode(EventType::kModified, CsiNode("n1", 2));
  EXPECT_EQ(Placements(c), "ml/p1@n1");
  c.OnCsiNode(EventType::kModified, CsiNode("n1", 1));
  EXPECT_EQ(Placements(c), "");
  c.OnVolumeAttachment(EventType::kDeleted, Attachment("va-1", "n1", "other"));
  EXPECT_EQ(Placements(c), "ml/p1@n1");
  // A node update keeps what its CSINode said.
  c.OnVolumeAttachment(EventType::kAdded, Attachment("va-1", "n1", "other"));
  c.OnNode(EventType::kModified, NodeObject("n1", {{"zone", "a"}}));
  EXPECT_EQ(Placements(c), "");
  // An attachment whose volume is not a CSI volume counts nothing (the PV changed).
  c.OnPersistentVolume(EventType::kModified, ZonedVolume("other", "us-east-1a"));
  EXPECT_EQ(Placements(c), "ml/p1@n1");
}

// A volume shared by a pod on the node counts once; an unbound claim counts under its
// class's provisioner until it is bound.
TEST(ClusterCacheCsi, SharedAndUnboundClaims) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnCsiNode(EventType::kAdded, CsiNode("n1", 1));
  AddPodWithVolume(c, 1, "n1");
  c.OnPod(EventType::kAdded, PodObject("shares", ClaimVolume("c1")));
  EXPECT_EQ(Placements(c), "ml/shares@n1");
  // A bound pod whose claim waits for its first consumer: counted by its class.
  c.OnStorageClass(EventType::kAdded, json{{"metadata", {{"name", "ebs-wffc"}}},
                                           {"provisioner", kEbs},
                                           {"volumeBindingMode", "WaitForFirstConsumer"}});
  c.OnPod(EventType::kDeleted, Bound(PodObject("p1", ClaimVolume("c1")), "n1"));
  c.OnClaim(EventType::kAdded, Claim("later", "", "ebs-wffc"));
  c.OnPod(EventType::kAdded, Bound(PodObject("bound", ClaimVolume("later")), "n1"));
  EXPECT_EQ(Placements(c), "") << "n1's one volume is the bound pod's claim";
  c.OnPod(EventType::kDeleted, Bound(PodObject("bound", ClaimVolume("later")), "n1"));
  EXPECT_EQ(Placements(c), "ml/shares@n1");
}

TEST(ClusterCacheCsi, ADriverThatMustBeOnTheNode) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnNode(EventType::kAdded, NodeObject("n2"));
  c.OnCsiNode(EventType::kAdded, CsiNode("n2", 10, "other.csi.io"));
  AddPodWithVolume(c, 1);
  EXPECT_EQ(Placements(c), "ml/p1@n1");
  c.OnCsiDriver(EventType::kAdded, CsiDriver(kEbs, false, true));
  const Decisions d = RunSession(c.state());
  EXPECT_TRUE(d.binds.empty());
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(
      Contains(d.pending[0].reason, "2 ebs.csi.aws.com CSI driver is not installed on the node"))
      << d.pending[0].reason;
  c.OnCsiNode(EventType::kAdded, CsiNode("n1", 10));
  EXPECT_EQ(Placements(c), "ml/p1@n1");
}

// hasEnoughCapacity: a class whose driver tracks capacity provisions only where a
// CSIStorageCapacity of the class with room for the claim selects the node.
TEST(ClusterCacheCsi, StorageCapacityDecidesWhereAClaimIsProvisioned) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", {{"zone", "a"}}));
  c.OnNode(EventType::kAdded, NodeObject("n2", {{"zone", "b"}}));
  c.OnStorageClass(EventType::kAdded, json{{"metadata", {{"name", "fast"}}},
                                           {"provisioner", "fast.csi.io"},
                                           {"volumeBindingMode", "WaitForFirstConsumer"}});
  c.OnClaim(EventType::kAdded, Claim("data", "", "fast"));  // asks for 1Gi
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  EXPECT_EQ(Placements(c), "ml/p@n1") << "no CSIDriver: no capacity tracking";
  c.OnCsiDriver(EventType::kAdded, CsiDriver("fast.csi.io", true, false));
  const Decisions none = RunSession(c.state());
  ASSERT_EQ(none.pending.size(), 1u);
  EXPECT_TRUE(Contains(none.pending[0].reason, "2 node(s) did not have enough free storage"))
      << none.pending[0].reason;
  auto capacity = [](const std::string& name, const std::string& zone, const char* size,
                     const std::string& storage_class = "fast") {
    return json{{"metadata", {{"name", name}, {"namespace", "kube-system"}}},
                {"storageClassName", storage_class},
                {"nodeTopology", {{"matchLabels", {{"zone", zone}}}}},
                {"capacity", size}};
  };
  c.OnStorageCapacity(EventType::kAdded, capacity("cap-a", "a", "512Mi"));  // too small
  c.OnStorageCapacity(EventType::kAdded, capacity("cap-b", "b", "100Gi", "other"));
  EXPECT_EQ(Placements(c), "");
  c.OnStorageCapacity(EventType::kAdded, capacity("cap-b2", "b", "100Gi"));
  EXPECT_EQ(Placements(c), "ml/p@n2");
  // maximumVolumeSize wins over capacity.
  json capped = capacity("cap-b2", "b", "100Gi");
  capped["maximumVolumeSize"] = "1Mi";
  c.OnStorageCapacity(EventType::kModified, capped);
  EXPECT_EQ(Placements(c), "");
  c.OnStorageCapacity(EventType::kModified, capacity("cap-a", "a", "2Gi"));
  EXPECT_EQ(Placements(c), "ml/p@n1");
}

// The largest capacity a quantity can say (INT64_MAX milli-bytes, about 9.2 PB) has room
// for the claim: rounding it up to bytes must not overflow into a negative size.
TEST(ClusterCacheCsi, TheLargestCapacityHasRoom) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1", {{"zone", "a"}}));
  c.OnStorageClass(EventType::kAdded, json{{"metadata", {{"name", "fast"}}},
                                           {"provisioner", "fast.csi.io"},
                                           {"volumeBindingMode", "WaitForFirstConsumer"}});
  c.OnCsiDriver(EventType::kAdded, CsiDriver("fast.csi.io", true, false));
  c.OnClaim(EventType::kAdded, Claim("data", "", "fast"));  // asks for 1Gi
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("data")));
  c.OnStorageCapacity(EventType::kAdded,
                      json{{"metadata", {{"name", "cap"}, {"namespace", "kube-system"}}},
                           {"storageClassName", "fast"},
                           {"nodeTopology", {{"matchLabels", {{"zone", "a"}}}}},
                           {"capacity", "9223372036854775807m"}});
  EXPECT_EQ(Placements(c), "ml/p@n1");
}

TEST(ClusterCacheCsi, UnreadableObjectsAreReportedOnce) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("n1"));
  c.OnCsiNode(EventType::kAdded, CsiNode("n1", 1));
  json bad = CsiNode("n1", 1);
  bad["spec"]["drivers"][0]["allocatable"]["count"] = "many";
  c.OnCsiNode(EventType::kModified, bad);
  c.OnCsiNode(EventType::kModified, bad);
  const std::vector<ObjectEvent> problems = c.TakeProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(
      Contains(problems[0].message,
               "csinode n1: spec.drivers[0].allocatable.count: expected a count of volumes"))
      << problems[0].message;
  // What was read before still holds.
  AddPodWithVolume(c, 1, "n1");
  AddPodWithVolume(c, 2);
  EXPECT_EQ(Placements(c), "");
}

}  // namespace
}  // namespace gantry

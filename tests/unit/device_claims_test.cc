// The daemon's DRA component on its own (daemon/device_claims.h): objects from the watch,
// the inventory rebuilt when slices, classes or rules change, a pod's claims resolved to
// claim keys (or why it waits, in kube-scheduler's words), and allocations assumed until
// the watch shows them written, or forgotten.
#include "daemon/device_claims.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;

json Class(const std::string& name) {
  return {{"metadata", {{"name", name}, {"uid", "u-" + name}}},
          {"spec",
           {{"selectors", {{{"cel", {{"expression", "device.driver == \"gpu.example.com\""}}}}}}}}};
}

json Slice(const std::string& node, int devices) {
  json list = json::array();
  for (int i = 0; i < devices; ++i) list.push_back({{"name", "gpu-" + std::to_string(i)}});
  return {{"metadata", {{"name", node + "-gpus"}, {"uid", "u-s-" + node}}},
          {"spec",
           {{"driver", "gpu.example.com"},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"nodeName", node},
            {"devices", list}}}};
}

json Claim(const std::string& name, const std::string& uid = "") {
  return {{"metadata",
           {{"name", name},
            {"namespace", "ml"},
            {"uid", uid.empty() ? "u-" + name : uid},
            {"resourceVersion", "1"}}},
          {"spec",
           {{"devices",
             {{"requests", {{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu"}}}}}}}}}}};
}

// The claim as the API server shows it once the daemon's writes are done.
json Written(json claim, const std::string& device, const std::string& pod_uid) {
  claim["metadata"]["finalizers"] = {"resource.kubernetes.io/delete-protection"};
  json result = {{"request", "gpu"}, {"driver", "gpu.example.com"}, {"pool", "node-1"}};
  result["device"] = device;
  json reservation = {{"resource", "pods"}, {"name", "p"}};
  reservation["uid"] = pod_uid;
  claim["status"]["allocation"]["devices"]["results"] = json::array({result});
  claim["status"]["reservedFor"] = json::array({reservation});
  return claim;
}

k8s::PodInfo Pod(const json& claims, const json& statuses = json::array()) {
  json pod = {{"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "u-p"}}},
              {"spec", {{"schedulerName", "gantry"}, {"containers", json::array()}}},
              {"status", json::object()}};
  pod["spec"]["resourceClaims"] = claims;
  if (!statuses.empty()) pod["status"]["resourceClaimStatuses"] = statuses;
  return Must(k8s::ParsePod(pod));
}

dra::Allocation Gpu(const std::string& device) {
  dra::Allocation a;
  dra::AllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.example.com";
  r.pool = "node-1";
  r.device = device;
  a.results.push_back(r);
  return a;
}

// The allocated devices a session reads are those of the claims it reads, on every change.
void ExpectAllocatedAsTheClaims(const DeviceInputs& in) {
  ASSERT_NE(in.allocated, nullptr);
  ASSERT_NE(in.claims, nullptr);
  std::vector<dra::ResourceClaim> claims;
  for (const auto& [key, claim] : *in.claims) claims.push_back(claim);
  const dra::AllocatedState want = dra::AllocatedState::FromClaims(claims);
  for (int i = 0; i < 4; ++i) {
    const std::string key = dra::DeviceKey("gpu.example.com", "node-1", "gpu-" + std::to_string(i));
    EXPECT_EQ(in.allocated->Allocated(key), want.Allocated(key)) << key;
  }
}

TEST(DeviceClaims, TheAllocatedDevicesFollowTheClaimsAsRead) {
  DeviceClaims d;
  const std::string gpu0 = dra::DeviceKey("gpu.example.com", "node-1", "gpu-0");
  const std::string gpu1 = dra::DeviceKey("gpu.example.com", "node-1", "gpu-1");
  d.OnResourceClaim(EventType::kAdded, Claim("c1"));
  EXPECT_FALSE(d.Inputs().allocated->Allocated(gpu0));
  d.OnResourceClaim(EventType::kModified, Written(Claim("c1"), "gpu-0", "u-other"));
  d.OnResourceClaim(EventType::kAdded, Written(Claim("c2"), "gpu-1", "u-other"));
  EXPECT_TRUE(d.Inputs().allocated->Allocated(gpu0));
  EXPECT_TRUE(d.Inputs().allocated->Allocated(gpu1));
  ExpectAllocatedAsTheClaims(d.Inputs());
  d.OnResourceClaim(EventType::kModified, Written(Claim("c1"), "gpu-1", "u-other"));  // moved
  EXPECT_FALSE(d.Inputs().allocated->Allocated(gpu0));
  d.OnResourceClaim(EventType::kDeleted, Written(Claim("c2"), "gpu-1", "u-other"));
  EXPECT_TRUE(d.Inputs().allocated->Allocated(gpu1));    // c1 holds it still
  d.OnResourceClaim(EventType::kModified, Claim("c1"));  // deallocated
  EXPECT_FALSE(d.Inputs().allocated->Allocated(gpu1));
  ExpectAllocatedAsTheClaims(d.Inputs());
}

TEST(DeviceClaims, TheInventoryIsRebuiltOnlyWhenSlicesClassesOrRulesChange) {
  DeviceClaims d;
  EXPECT_TRUE(d.OnDeviceClass(EventType::kAdded, Class("gpu")).problems.empty());
  EXPECT_TRUE(d.OnResourceSlice(EventType::kAdded, Slice("node-1", 2)).problems.empty());
  DeviceInputs in = d.Inputs();
  ASSERT_NE(in.inventory, nullptr);
  ASSERT_EQ(in.inventory->slices().size(), 1u);
  EXPECT_EQ(in.inventory->slices()[0].devices.size(), 2u);
  EXPECT_NE(in.inventory->FindClass("gpu"), nullptr);
  EXPECT_EQ(in.verdicts != nullptr, DeviceClaims::HasCel());
  EXPECT_EQ(d.inventory_builds(), 1);
  // A claim, or the same slice again, changes no inventory.
  d.OnResourceClaim(EventType::kAdded, Claim("c1"));
  d.OnResourceSlice(EventType::kModified, Slice("node-1", 2));
  in = d.Inputs();
  EXPECT_EQ(d.inventory_builds(), 1);
  ASSERT_NE(in.claims, nullptr);
  EXPECT_EQ(in.claims->count("ml/c1"), 1u);
  d.OnResourceSlice(EventType::kModified, Slice("node-1", 3));
  d.OnResourceSlice(EventType::kAdded, Slice("node-2", 1));
  in = d.Inputs();
  EXPECT_EQ(d.inventory_builds(), 2);
  ASSERT_EQ(in.inventory->slices().size(), 2u);
  d.OnResourceSlice(EventType::kDeleted, Slice("node-1", 3));
  d.OnDeviceClass(EventType::kDeleted, Class("gpu"));
  in = d.Inputs();
  ASSERT_EQ(in.inventory->slices().size(), 1u);
  EXPECT_EQ(in.inventory->slices()[0].pool.name, "node-2");
  EXPECT_EQ(in.inventory->FindClass("gpu"), nullptr);
}

TEST(DeviceClaims, AnObjectThatCannotBeReadIsReportedByField) {
  DeviceClaims d;
  json bad = Slice("node-1", 1);
  bad["spec"]["devices"][0]["name"] = "Not_A_Label";
  Resync r = d.OnResourceSlice(EventType::kAdded, bad);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].kind, "ResourceSlice");
  EXPECT_EQ(r.problems[0].type, "Warning");
  EXPECT_TRUE(Contains(r.problems[0].message, "spec.devices[0].name"));
  EXPECT_TRUE(d.Inputs().inventory->slices().empty());
  // A slice read before and now unreadable is no longer offered.
  d.OnResourceSlice(EventType::kModified, Slice("node-1", 1));
  ASSERT_EQ(d.Inputs().inventory->slices().size(), 1u);
  d.OnResourceSlice(EventType::kModified, bad);
  EXPECT_TRUE(d.Inputs().inventory->slices().empty());
}

TEST(DeviceClaims, AnUnreadableClaimKeepsWhatItHeld) {
  DeviceClaims d;
  d.OnResourceClaim(EventType::kAdded, Written(Claim("c1"), "gpu-0", "u-other"));
  json bad = Claim("c1");
  bad["spec"]["devices"]["requests"][0]["exactly"]["count"] = "two";
  Resync r = d.OnResourceClaim(EventType::kModified, bad);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].kind, "ResourceClaim");
  const DeviceInputs in = d.Inputs();
  ASSERT_EQ(in.claims->count("ml/c1"), 1u);
  EXPECT_TRUE(in.claims->at("ml/c1").allocation.has_value());  // its device stays taken
}

TEST(DeviceClaims, APodsClaimsResolveToClaimKeysOnceTheyExist) {
  DeviceClaims d;
  const k8s::PodInfo pod = Pod(json::parse(R"([{"name": "a", "resourceClaimName": "c1"},
      {"name": "b", "resourceClaimName": "c2"}, {"name": "c", "resourceClaimName": "c1"}])"));
  d.TrackPod("ml/p", pod);
  TaskSpec spec;
  EXPECT_EQ(d.Resolve(pod, &spec), "resourceclaim \"c1\" not found");
  Resync r = d.OnResourceClaim(EventType::kAdded, Claim("c1"));
  EXPECT_EQ(r.pods, std::vector<std::string>{"ml/p"});
  EXPECT_EQ(d.Resolve(pod, &spec), "resourceclaim \"c2\" not found");
  d.OnResourceClaim(EventType::kAdded, Claim("c2"));
  EXPECT_EQ(d.Resolve(pod, &spec), "");
  EXPECT_EQ(spec.resource_claims, (std::vector<std::string>{"ml/c1", "ml/c2"}));
  json deleting = Claim("c2");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  d.OnResourceClaim(EventType::kModified, deleting);
  EXPECT_EQ(d.Resolve(pod, &spec), "resourceclaim \"c2\" is being deleted");
  EXPECT_EQ(d.sizes().pods, 1u);
  d.ForgetPod("ml/p");
  EXPECT_EQ(d.sizes().pods, 0u);
  EXPECT_EQ(d.sizes().claim_index, 0u);
  EXPECT_TRUE(d.OnResourceClaim(EventType::kDeleted, Claim("c1")).pods.empty());
}

TEST(DeviceClaims, ATemplatesClaimIsWaitedForUntilTheControllerMadeIt) {
  DeviceClaims d;
  const json refs = json::parse(R"([{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])");
  TaskSpec spec;
  EXPECT_EQ(d.Resolve(Pod(refs), &spec),
            "waiting for dynamic resource controller to create the resourceclaim \"gpu\"");
  const k8s::PodInfo made =
      Pod(refs, json::parse(R"([{"name": "gpu", "resourceClaimName": "p-gpu-x7k2p"}])"));
  d.TrackPod("ml/p", made);
  EXPECT_EQ(d.Resolve(made, &spec), "resourceclaim \"p-gpu-x7k2p\" not found");
  EXPECT_EQ(d.OnResourceClaim(EventType::kAdded, Claim("p-gpu-x7k2p")).pods,
            std::vector<std::string>{"ml/p"});
  EXPECT_EQ(d.Resolve(made, &spec), "");
  EXPECT_EQ(spec.resource_claims, std::vector<std::string>{"ml/p-gpu-x7k2p"});
  // The controller said no claim is needed: nothing to allocate.
  const k8s::PodInfo none = Pod(refs, json::parse(R"([{"name": "gpu"}])"));
  EXPECT_EQ(d.Resolve(none, &spec), "");
  EXPECT_TRUE(spec.resource_claims.empty());
}

TEST(DeviceClaims, AnAllocationIsAssumedUntilTheWatchShowsItWritten) {
  DeviceClaims d;
  d.OnResourceClaim(EventType::kAdded, Claim("c1"));
  const k8s::PodInfo pod = Pod(json::parse(R"([{"name": "a", "resourceClaimName": "c1"}])"));
  d.TrackPod("ml/p", pod);
  TaskSpec spec;
  ASSERT_EQ(d.Resolve(pod, &spec), "");
  BindDecision b;
  b.devices = {Gpu("gpu-1")};
  std::string why;
  const std::vector<ClaimWrite> writes = d.Assume("ml/p", pod, nullptr, b, spec, &why);
  EXPECT_EQ(why, "");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].namespace_, "ml");
  EXPECT_EQ(writes[0].name, "c1");
  EXPECT_EQ(writes[0].uid, "u-c1");
  EXPECT_EQ(writes[0].allocation, Gpu("gpu-1"));
  // The next session sees the device taken and the claim reserved for the pod.
  DeviceInputs in = d.Inputs();
  const dra::ResourceClaim& assumed = in.claims->at("ml/c1");
  EXPECT_EQ(assumed.allocation, Gpu("gpu-1"));
  ASSERT_EQ(assumed.reserved_for.size(), 1u);
  EXPECT_EQ(assumed.reserved_for[0], (dra::ConsumerReference{"", "pods", "p", "u-p"}));
  EXPECT_TRUE(in.allocated->Allocated(dra::DeviceKey("gpu.example.com", "node-1", "gpu-1")));
  ExpectAllocatedAsTheClaims(in);
  EXPECT_TRUE(d.Assumed("ml/p"));
  // The finalizer's write is seen first: still assumed.
  json finalized = Claim("c1");
  finalized["metadata"]["finalizers"] = {"resource.kubernetes.io/delete-protection"};
  d.OnResourceClaim(EventType::kModified, finalized);
  EXPECT_EQ(d.Inputs().claims->at("ml/c1").allocation, Gpu("gpu-1"));
  EXPECT_EQ(d.sizes().assumed, 1u);
  // Then the status: the assumption ends, and the table holds what the API server says.
  d.OnResourceClaim(EventType::kModified, Written(Claim("c1"), "gpu-1", "u-p"));
  EXPECT_EQ(d.sizes().assumed, 0u);
  EXPECT_FALSE(d.Assumed("ml/p"));
  EXPECT_EQ(d.Inputs().claims->at("ml/c1").allocation, Gpu("gpu-1"));
  EXPECT_TRUE(d.Inputs().claims->at("ml/c1").has_finalizer);
  ExpectAllocatedAsTheClaims(d.Inputs());
}

TEST(DeviceClaims, AForgottenAssumptionGivesTheDeviceBack) {
  DeviceClaims d;
  d.OnResourceClaim(EventType::kAdded, Claim("c1"));
  const k8s::PodInfo pod = Pod(json::parse(R"([{"name": "a", "resourceClaimName": "c1"}])"));
  d.TrackPod("ml/p", pod);
  TaskSpec spec;
  ASSERT_EQ(d.Resolve(pod, &spec), "");
  BindDecision b;
  b.devices = {Gpu("gpu-0")};
  std::string why;
  ASSERT_EQ(d.Assume("ml/p", pod, nullptr, b, spec, &why).size(), 1u);
  Resync r = d.Forget("ml/p");
  EXPECT_EQ(r.pods, std::vector<std::string>{"ml/p"});
  const dra::ResourceClaim& back = d.Inputs().claims->at("ml/c1");
  EXPECT_FALSE(back.allocation.has_value());
  EXPECT_TRUE(back.reserved_for.empty());
  EXPECT_FALSE(
      d.Inputs().allocated->Allocated(dra::DeviceKey("gpu.example.com", "node-1", "gpu-0")));
  ExpectAllocatedAsTheClaims(d.Inputs());
  EXPECT_EQ(d.sizes().assumed, 0u);
  // A decision without an allocation for a claim that is not allocated assumes nothing.
  b.devices = {std::nullopt};
  EXPECT_TRUE(d.Assume("ml/p", pod, nullptr, b, spec, &why).empty());
  EXPECT_NE(why, "");
  EXPECT_EQ(d.sizes().assumed, 0u);
}

// The live page's devices: under the node their slice names, with the claims holding them
// as read or assumed; a slice that several nodes reach is on no node.
TEST(DeviceClaims, DevicesByNodeNameTheClaimsThatHoldThem) {
  DeviceClaims d;
  EXPECT_TRUE(d.DevicesByNode().empty());
  d.OnResourceSlice(EventType::kAdded, Slice("node-1", 3));
  json shared = Slice("everywhere", 1);
  shared["spec"].erase("nodeName");
  shared["spec"]["allNodes"] = true;
  d.OnResourceSlice(EventType::kAdded, shared);
  d.OnResourceClaim(EventType::kAdded, Written(Claim("c0"), "gpu-0", "u-other"));
  d.OnResourceClaim(EventType::kAdded, Claim("c1"));
  const k8s::PodInfo pod = Pod(json::parse(R"([{"name": "a", "resourceClaimName": "c1"}])"));
  d.TrackPod("ml/p", pod);
  TaskSpec spec;
  ASSERT_EQ(d.Resolve(pod, &spec), "");
  BindDecision b;
  b.devices = {Gpu("gpu-2")};
  std::string why;
  ASSERT_EQ(d.Assume("ml/p", pod, nullptr, b, spec, &why).size(), 1u) << why;
  using Device = DeviceClaims::NodeDevice;
  const std::map<std::string, std::vector<Device>> expected = {
      {"node-1",
       {Device{"gpu.example.com", "node-1", "gpu-0", {"ml/c0"}},
        Device{"gpu.example.com", "node-1", "gpu-1", {}},
        Device{"gpu.example.com", "node-1", "gpu-2", {"ml/c1"}}}}};
  EXPECT_EQ(d.DevicesByNode(), expected);
  // Forgotten, the assumption no longer holds its device.
  (void)d.Forget("ml/p");
  EXPECT_TRUE(d.DevicesByNode().at("node-1")[2].claims.empty());
}

// Which claims are left for a pod's extended resources: the annotation "true" and the pod
// (by uid) as the controller owner; the deletion queued once, and sent again while the
// claim is still there a retry period later; the claim's removal resyncs the pod, which
// then has none left.
TEST(DeviceClaims, OnlyAClaimMadeForThePodsExtendedResourcesIsLeftForIt) {
  DeviceClaims d;
  const k8s::PodInfo pod = Pod(json::array());
  auto made_for = [](const std::string& name, const std::string& pod_uid, bool annotated,
                     bool controller) {
    json claim = Claim(name);
    if (annotated) {
      claim["metadata"]["annotations"] = {
          {"resource.kubernetes.io/extended-resource-claim", "true"}};
    }
    claim["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"},
                                             {"kind", "Pod"},
                                             {"name", "p"},
                                             {"uid", pod_uid},
                                             {"controller", controller}}};
    return claim;
  };
  d.OnResourceClaim(EventType::kAdded, made_for("not-annotated", "u-p", false, true));
  d.OnResourceClaim(EventType::kAdded, made_for("other-pod", "u-q", true, true));
  d.OnResourceClaim(EventType::kAdded, made_for("not-controller", "u-p", true, false));
  EXPECT_EQ(d.DeleteLeftExtendedClaim(pod), "");
  EXPECT_TRUE(d.TakeLeftClaimDeletes(0).empty());

  const json left = made_for("p-extended-resources-x7k2p", "u-p", true, true);
  Resync r = d.OnResourceClaim(EventType::kAdded, left);
  EXPECT_NE(std::find(r.pods.begin(), r.pods.end(), "ml/p"), r.pods.end());
  const std::string why = d.DeleteLeftExtendedClaim(pod);
  EXPECT_EQ(why.rfind("cannot schedule extended resource claim \"p-extended-resources-x7k2p\"", 0),
            0u)
      << why;
  const std::vector<ClaimWrite> deletes = d.TakeLeftClaimDeletes(100);
  ASSERT_EQ(deletes.size(), 1u);
  EXPECT_EQ(deletes[0].namespace_, "ml");
  EXPECT_EQ(deletes[0].name, "p-extended-resources-x7k2p");
  EXPECT_EQ(deletes[0].uid, "u-p-extended-resources-x7k2p");
  EXPECT_TRUE(deletes[0].extended);
  EXPECT_EQ(d.DeleteLeftExtendedClaim(pod), why);
  EXPECT_TRUE(d.TakeLeftClaimDeletes(100 + DeviceClaims::kLeftClaimDeleteRetryS - 1).empty());
  // Still there after the retry period: the DELETE failed or its answer was lost; sent
  // again, and again only a period later.
  const std::vector<ClaimWrite> again =
      d.TakeLeftClaimDeletes(100 + DeviceClaims::kLeftClaimDeleteRetryS);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].uid, "u-p-extended-resources-x7k2p");
  EXPECT_TRUE(d.TakeLeftClaimDeletes(100 + DeviceClaims::kLeftClaimDeleteRetryS + 1).empty());

  r = d.OnResourceClaim(EventType::kDeleted, left);
  EXPECT_NE(std::find(r.pods.begin(), r.pods.end(), "ml/p"), r.pods.end());
  EXPECT_EQ(d.DeleteLeftExtendedClaim(pod), "");
  // Gone: never sent again.
  EXPECT_TRUE(d.TakeLeftClaimDeletes(1000).empty());
}

TEST(DeviceClaims, AClaimAllocatedAlreadyIsOnlyReserved) {
  DeviceClaims d;
  d.OnResourceClaim(EventType::kAdded, Written(Claim("c1"), "gpu-0", "u-other"));
  const k8s::PodInfo pod = Pod(json::parse(R"([{"name": "a", "resourceClaimName": "c1"}])"));
  TaskSpec spec;
  ASSERT_EQ(d.Resolve(pod, &spec), "");
  BindDecision b;
  b.devices = {std::nullopt};
  std::string why;
  const std::vector<ClaimWrite> writes = d.Assume("ml/p", pod, nullptr, b, spec, &why);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_FALSE(writes[0].allocation.has_value());
  EXPECT_EQ(d.Inputs().claims->at("ml/c1").reserved_for.size(), 2u);
}

TEST(DeviceClaims, AdminAccessNamespacesComeFromTheirLabel) {
  DeviceClaims d;
  Labels admin;
  admin.Set("resource.kubernetes.io/admin-access", "true");
  Labels other;
  other.Set("team", "ml");
  d.OnNamespace("ops", &admin);
  d.OnNamespace("ml", &other);
  DeviceInputs in = d.Inputs();
  ASSERT_NE(in.admin_namespaces, nullptr);
  EXPECT_EQ(*in.admin_namespaces, (std::set<std::string, std::less<>>{"ops"}));
  d.OnNamespace("ops", nullptr);
  EXPECT_TRUE(d.Inputs().admin_namespaces->empty());
}

// Extended resources backed by DRA: a class that names nvidia.com/gpu resyncs the pods
// that ask for extended resources, and their specs say which ones a class serves; the
// session's allocation for them is assumed as a claim of its own until the watch shows
// the claim the writer made, allocated and reserved for the pod.
TEST(DeviceClaims, ExtendedResourcesAClassServesAreMarkedAndTheirClaimAssumed) {
  DeviceClaims d;
  json pod_json = {
      {"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "u-p"}}},
      {"spec",
       {{"schedulerName", "gantry"},
        {"containers",
         {{{"name", "main"},
           {"resources",
            {{"requests", {{"nvidia.com/gpu", "1"}}}, {"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}},
      {"status", json::object()}};
  const k8s::PodInfo pod = Must(k8s::ParsePod(pod_json));
  d.TrackPod("ml/p", pod);
  json cls = Class("gpu");
  cls["spec"]["extendedResourceName"] = "nvidia.com/gpu";
  const Resync resync = d.OnDeviceClass(EventType::kAdded, cls);
  EXPECT_EQ(resync.pods, std::vector<std::string>{"ml/p"});
  TaskSpec spec = pod.spec;
  EXPECT_EQ(d.Resolve(pod, &spec), "");
  ASSERT_EQ(spec.device_backed.size(), 1u);
  EXPECT_EQ(spec.device_backed[0].resource, kGpu);
  EXPECT_EQ(spec.device_backed[0].device_class, "gpu");
  EXPECT_EQ(spec.device_backed[0].count, 1);

  BindDecision decision;
  dra::Allocation engine = Gpu("gpu-1");
  engine.results[0].request = "resource-0";
  decision.extended_devices = engine;
  const std::optional<ExtendedClaimWrite> write = d.AssumeExtended("ml/p", pod, decision, spec);
  ASSERT_TRUE(write.has_value());
  ASSERT_EQ(write->resources.size(), 1u);
  EXPECT_EQ(write->resources[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(write->resources[0].device_class, "gpu");
  // The next session sees the device taken.
  DeviceInputs in = d.Inputs();
  ASSERT_EQ(in.claims->size(), 1u);
  EXPECT_EQ(in.claims->begin()->second.allocation, engine);

  // The writer's claim shows up: made, then allocated and reserved for the pod.
  json made = Claim("p-extended-resources-x2k9q");
  made["metadata"]["annotations"] = {{"resource.kubernetes.io/extended-resource-claim", "true"}};
  d.OnResourceClaim(EventType::kAdded, made);
  EXPECT_EQ(d.Inputs().claims->size(), 2u);  // not written yet: the assumption holds
  d.OnResourceClaim(EventType::kModified, Written(made, "gpu-1", "u-p"));
  in = d.Inputs();
  ASSERT_EQ(in.claims->size(), 1u);
  EXPECT_EQ(in.claims->begin()->first, "ml/p-extended-resources-x2k9q");
  EXPECT_FALSE(d.Assumed("ml/p"));
}

}  // namespace
}  // namespace gantry

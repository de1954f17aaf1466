// The daemon's cluster cache and pods' DRA claims (DeviceClaims through ClusterCache): a
// pod waits for its claim with kube-scheduler's words, is placed where a device is free,
// its bind carries the claim writes, the next session sees the device taken, and a failed
// bind gives the device back.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "daemon/cluster_cache.h"
#include "daemon/dashboard_metrics.h"
#include "engine/session.h"
#include "tests/unit/cluster_cache_dra_objects.h"
#include "tests/unit/test_util.h"
#include "tests/unit/volume_objects.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using cache_dra::Claim;
using cache_dra::ClaimPod;
using cache_dra::Class;
using cache_dra::RunWithDevices;
using k8s::EventType;
using volume_objects::Messages;
using volume_objects::NodeObject;
using volume_objects::PodObject;
using volume_objects::TaskNamed;

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

TEST(ClusterCacheDra, APodWaitsForItsClaimThenTakesAFreeDevice) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("node-1"));
  c.OnNode(EventType::kAdded, NodeObject("node-2"));
  c.OnDeviceClass(EventType::kAdded, Class());
  c.OnResourceSlice(EventType::kAdded, Slice("node-2", 1));
  c.OnPod(EventType::kAdded, ClaimPod("p1", "c1"));
  EXPECT_EQ(TaskNamed(c.state(), "ml/p1"), nullptr);
  EXPECT_TRUE(Contains(m.Of("p1"), "resourceclaim \"c1\" not found"));
  c.OnResourceClaim(EventType::kAdded, Claim("c1"));
  const Task* t = TaskNamed(c.state(), "ml/p1");
  ASSERT_NE(t, nullptr) << m.Of("p1");
  EXPECT_EQ(c.state().spec(t->spec).resource_claims, std::vector<std::string>{"ml/c1"});

  const Decisions d = RunWithDevices(c);
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(c.state().node(d.binds[0].node).name, "node-2");
  std::vector<BindRequest> binds = c.Assume(d, 0);
  ASSERT_EQ(binds.size(), 1u);
  ASSERT_EQ(binds[0].claims.size(), 1u);
  const ClaimWrite& w = binds[0].claims[0];
  EXPECT_EQ(w.namespace_, "ml");
  EXPECT_EQ(w.name, "c1");
  EXPECT_EQ(w.uid, "u-c1");
  ASSERT_TRUE(w.allocation.has_value());
  ASSERT_EQ(w.allocation->results.size(), 1u);
  EXPECT_EQ(w.allocation->results[0].driver, "gpu.example.com");
  EXPECT_EQ(w.allocation->results[0].pool, "node-2");
  EXPECT_EQ(w.allocation->results[0].device, "gpu-0");
}

// A native PodGroup's spec.resourceClaims (DRAWorkloadResourceClaims): a pod whose
// spec.resourceClaims entry equals one of the group's reserves the claim for the group, as
// resourceclaim.BindTo says; a pod of the group whose entry differs (another name for the
// same claim) reserves it for itself.
TEST(ClusterCacheDra, AClaimTheGroupSharesIsReservedForTheGroup) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("node-1"));
  c.OnDeviceClass(EventType::kAdded, Class());
  c.OnResourceSlice(EventType::kAdded, Slice("node-1", 2));
  c.OnResourceClaim(EventType::kAdded, Claim("shared"));
  c.OnResourceClaim(EventType::kAdded, Claim("own"));
  c.OnPodGroup(k8s::GroupApi::kNative, EventType::kAdded,
               {{"apiVersion", "scheduling.k8s.io/v1beta1"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", "train"}, {"namespace", "ml"}, {"uid", "u-train"}}},
                {"spec",
                 {{"schedulingPolicy", {{"basic", json::object()}}},
                  {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", "shared"}}}}}}});
  json in_group = ClaimPod("p1", "shared");
  in_group["spec"]["schedulingGroup"] = {{"podGroupName", "train"}};
  json other_name = ClaimPod("p2", "own");
  other_name["spec"]["schedulingGroup"] = {{"podGroupName", "train"}};
  c.OnPod(EventType::kAdded, in_group);
  c.OnPod(EventType::kAdded, other_name);
  const Decisions d = RunWithDevices(c);
  ASSERT_EQ(d.binds.size(), 2u);
  std::map<std::string, dra::ConsumerReference> consumer;
  for (const BindRequest& b : c.Assume(d, 0)) {
    ASSERT_EQ(b.claims.size(), 1u) << b.name;
    consumer[b.claims[0].name] = b.claims[0].consumer;
  }
  EXPECT_EQ(consumer["shared"],
            (dra::ConsumerReference{"scheduling.k8s.io", "podgroups", "train", "u-train"}));
  EXPECT_EQ(consumer["own"], (dra::ConsumerReference{"", "pods", "p2", "uid-p2"}));
}

TEST(ClusterCacheDra, AnAssumedDeviceIsTakenUntilTheBindFails) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("node-1"));
  c.OnDeviceClass(EventType::kAdded, Class());
  c.OnResourceSlice(EventType::kAdded, Slice("node-1", 1));
  c.OnResourceClaim(EventType::kAdded, Claim("c1"));
  c.OnResourceClaim(EventType::kAdded, Claim("c2"));
  c.OnPod(EventType::kAdded, ClaimPod("p1", "c1"));
  c.OnPod(EventType::kAdded, ClaimPod("p2", "c2"));
  Decisions d = RunWithDevices(c);
  ASSERT_EQ(d.binds.size(), 1u);
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(Contains(d.pending[0].reason, "cannot allocate all claims")) << d.pending[0].reason;
  std::vector<BindRequest> binds = c.Assume(d, 0);
  ASSERT_EQ(binds.size(), 1u);
  const std::string placed = binds[0].name;
  // The next session sees the device taken by the assumed allocation.
  d = RunWithDevices(c);
  EXPECT_TRUE(d.binds.empty());
  // The bind (its claim writes) failed: the device is free again, and the other pod,
  // not held back, takes it.
  c.BindFailed("ml", placed, "uid-" + placed, 0);
  d = RunWithDevices(c);
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_NE(c.state().task(d.binds[0].task).name, "ml/" + placed);
  // Everything goes with its objects.
  c.OnPod(EventType::kDeleted, ClaimPod("p1", "c1"));
  c.OnPod(EventType::kDeleted, ClaimPod("p2", "c2"));
  EXPECT_EQ(c.sizes().component_records, 0u);
}

// What DRA devices count as for queues (DaemonConfig::device_class_resources): a node's
// devices of a mapped class add to its nvidia.com/gpu, a pod's claims to what it asks, and a
// queue's capability in GPUs then holds back a second pod although a device is free.
TEST(ClusterCacheDra, MappedDevicesCountAsGpusForQueues) {
  ClusterCache c("gantry");
  dra::ClassResource gpu;
  gpu.device_class = "gpu";
  gpu.resource = kGpu;
  c.SetDeviceClassResources({gpu});
  c.OnQueue(EventType::kAdded, {{"metadata", {{"name", "default"}}},
                                {"spec", {{"capability", {{"nvidia.com/gpu", 1}}}}}});
  c.OnNode(EventType::kAdded, NodeObject("node-1"));
  c.OnDeviceClass(EventType::kAdded, Class());
  c.OnResourceClaim(EventType::kAdded, Claim("c1"));
  c.OnResourceClaim(EventType::kAdded, Claim("c2"));
  c.OnPod(EventType::kAdded, ClaimPod("p1", "c1"));
  c.OnPod(EventType::kAdded, ClaimPod("p2", "c2"));
  (void)c.DeviceInputsForSession();
  const NodeId node = c.state().FindNode("node-1");
  EXPECT_TRUE(c.state().node(node).device_capacity.empty());
  // The slice arrives: the node's two devices count as two GPUs, also after the node changes.
  c.OnResourceSlice(EventType::kAdded, Slice("node-1", 2));
  (void)c.DeviceInputsForSession();
  EXPECT_EQ(c.state().node(node).device_capacity.Get(kGpu), 2000);
  c.OnNode(EventType::kModified, NodeObject("node-1", {{"zone", "a"}}));
  EXPECT_EQ(c.state().node(node).device_capacity.Get(kGpu), 2000);
  const Task* t = TaskNamed(c.state(), "ml/p1");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(c.state().spec(t->spec).device_requests.Get(kGpu), 1000);

  const Decisions d = RunWithDevices(c);
  ASSERT_EQ(d.binds.size(), 1u);
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(Contains(d.pending[0].reason, "capability")) << d.pending[0].reason;
}

// gantry_dra_devices: the devices of each driver, allocated (an assumed allocation counts)
// or free.
TEST(ClusterCacheDra, TheMetricsCountDevicesByDriverAndState) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("node-1"));
  c.OnDeviceClass(EventType::kAdded, Class());
  c.OnResourceSlice(EventType::kAdded, Slice("node-1", 3));
  c.OnResourceClaim(EventType::kAdded, Claim("c1"));
  c.OnPod(EventType::kAdded, ClaimPod("p1", "c1"));
  using Counts = DeviceClaims::DriverDevices;
  EXPECT_EQ(c.devices().CountDevices(),
            (std::map<std::string, Counts>{{"gpu.example.com", {0, 3}}}));
  const Decisions d = RunWithDevices(c);
  ASSERT_EQ(d.binds.size(), 1u);
  (void)c.Assume(d, 0);
  EXPECT_EQ(c.devices().CountDevices(),
            (std::map<std::string, Counts>{{"gpu.example.com", {1, 2}}}));

  MetricsRegistry registry;
  DashboardMetrics metrics = Must(DashboardMetrics::Register(registry));
  metrics.PublishDra(c.devices().CountDevices());
  const std::string text = registry.Render();
  EXPECT_TRUE(
      Contains(text, "gantry_dra_devices{driver=\"gpu.example.com\",state=\"allocated\"} 1"))
      << text;
  EXPECT_TRUE(Contains(text, "gantry_dra_devices{driver=\"gpu.example.com\",state=\"free\"} 2"))
      << text;
}

// A pod asking nvidia.com/gpu on a node whose GPUs come from DRA (a class with that
// extendedResourceName) counts its GPU for its queue once bound, as a device-plugin GPU
// does, and is not said to ask for more GPUs than its node has.
TEST(ClusterCacheDra, ExtendedResourceGpusCountForQueuesOnceBound) {
  ClusterCache c("gantry");
  c.OnQueue(EventType::kAdded, {{"metadata", {{"name", "default"}}},
                                {"spec", {{"capability", {{"nvidia.com/gpu", 1}}}}}});
  c.OnNode(EventType::kAdded, NodeObject("node-1"));
  json gpu_class = Class();
  gpu_class["spec"]["extendedResourceName"] = "nvidia.com/gpu";
  c.OnDeviceClass(EventType::kAdded, gpu_class);
  c.OnResourceSlice(EventType::kAdded, Slice("node-1", 2));
  auto gpu_pod = [](const std::string& name) {
    json pod = PodObject(name, json::array());
    pod["spec"]["containers"][0]["resources"] = {{"requests", {{"nvidia.com/gpu", "1"}}},
                                                 {"limits", {{"nvidia.com/gpu", "1"}}}};
    return pod;
  };
  c.OnPod(EventType::kAdded, volume_objects::Bound(gpu_pod("running"), "node-1"));
  c.OnPod(EventType::kAdded, gpu_pod("waiting"));
  (void)c.DeviceInputsForSession();
  const Task* running = TaskNamed(c.state(), "ml/running");
  ASSERT_NE(running, nullptr);
  EXPECT_TRUE(running->gpus.empty());
  EXPECT_EQ(
      ClusterState::Accounted(c.state().spec(running->spec), 0, running->gpu_milli_each).Get(kGpu),
      kGpuMilliWhole);
  for (const ObjectEvent& e : c.TakeProblems()) ADD_FAILURE() << e.reason << ": " << e.message;

  const Decisions d = RunWithDevices(c);
  EXPECT_TRUE(d.binds.empty());
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(Contains(d.pending[0].reason, "capability")) << d.pending[0].reason;
}

// Held: `claim` allocated gpu-0 of node-1 and reserved for pod `pod`.
json HeldClaim(const std::string& claim, const std::string& pod) {
  json held = Claim(claim);
  held["status"] = {
      {"allocation",
       {{"devices",
         {{"results",
           {{{"request", "gpu"},
             {"driver", "gpu.example.com"},
             {"pool", "node-1"},
             {"device", "gpu-0"}}}}}},
        {"nodeSelector",
         {{"nodeSelectorTerms",
           {{{"matchFields",
              {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"node-1"}}}}}}}}}}}},
      {"reservedFor", {{{"resource", "pods"}, {"name", pod}, {"uid", "uid-" + pod}}}}};
  return held;
}

// A claim left for a pod's extended resources by an attempt that did not bind (the
// annotation, the pod its controller): the pod is not placed while it exists, the leader is
// handed its deletion once, and once the watch shows it gone the pod is placed anew.
TEST(ClusterCacheDra, AClaimLeftForAPodsExtendedResourcesIsDeletedBeforeItIsPlaced) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("node-1"));
  json gpu_class = Class();
  gpu_class["spec"]["extendedResourceName"] = "nvidia.com/gpu";
  c.OnDeviceClass(EventType::kAdded, gpu_class);
  c.OnResourceSlice(EventType::kAdded, Slice("node-1", 2));
  json pod = PodObject("p", json::array());
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"nvidia.com/gpu", "1"}}},
                                               {"limits", {{"nvidia.com/gpu", "1"}}}};
  const std::string pod_uid = pod["metadata"]["uid"];
  json left = HeldClaim("p-extended-resources-abcde", "p");
  left["status"]["reservedFor"][0]["uid"] = pod_uid;
  left["metadata"]["annotations"] = {{"resource.kubernetes.io/extended-resource-claim", "true"}};
  left["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"},
                                          {"kind", "Pod"},
                                          {"name", "p"},
                                          {"uid", pod_uid},
                                          {"controller", true}}};
  c.OnResourceClaim(EventType::kAdded, left);
  c.OnPod(EventType::kAdded, pod);
  EXPECT_EQ(TaskNamed(c.state(), "ml/p"), nullptr);
  EXPECT_TRUE(
      Contains(m.Of("p"), "cannot schedule extended resource claim \"p-extended-resources-abcde\""))
      << m.Of("p");
  std::vector<ClaimWrite> deletes = c.TakeLeftClaimDeletes(0);
  ASSERT_EQ(deletes.size(), 1u);
  EXPECT_EQ(deletes[0].namespace_, "ml");
  EXPECT_EQ(deletes[0].name, "p-extended-resources-abcde");
  EXPECT_EQ(deletes[0].uid, left["metadata"]["uid"]);
  // The pod seen again before the claim goes: asked once only.
  c.OnPod(EventType::kModified, pod);
  EXPECT_TRUE(c.TakeLeftClaimDeletes(1).empty());

  c.OnResourceClaim(EventType::kDeleted, left);
  const Task* t = TaskNamed(c.state(), "ml/p");
  ASSERT_NE(t, nullptr) << m.Of("p");
  const Decisions d = RunWithDevices(c);
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_TRUE(d.binds[0].extended_devices.has_value());
}

// A preemptor whose claim needs the node's one device, held by a lower-priority pod: the
// victim's claims are released in the session's future view, so preempt evicts it (before,
// a bound pod's claims were not its task's, and nothing was ever evicted for a device).
// Both kinds: a claim the victim names, and the claim of its DRA-served nvidia.com/gpu.
TEST(ClusterCacheDra, EvictingAPodFreesTheDevicesItsClaimsHold) {
  for (const bool extended : {false, true}) {
    SCOPED_TRACE(extended ? "extended-resource claim" : "named claim");
    ClusterCache c("gantry");
    c.OnNode(EventType::kAdded, NodeObject("node-1"));
    json gpu_class = Class();
    gpu_class["spec"]["extendedResourceName"] = "nvidia.com/gpu";
    c.OnDeviceClass(EventType::kAdded, gpu_class);
    c.OnResourceSlice(EventType::kAdded, Slice("node-1", 1));
    c.OnResourceClaim(EventType::kAdded, HeldClaim("held", "low"));
    c.OnResourceClaim(EventType::kAdded, Claim("wanted"));
    json low = volume_objects::Bound(
        extended ? PodObject("low", json::array()) : ClaimPod("low", "held"), "node-1");
    if (extended) {
      low["spec"]["containers"][0]["resources"] = {{"requests", {{"nvidia.com/gpu", "1"}}},
                                                   {"limits", {{"nvidia.com/gpu", "1"}}}};
      low["status"]["extendedResourceClaimStatus"] = {
          {"resourceClaimName", "held"},
          {"requestMappings",
           {{{"containerName", "c"}, {"resourceName", "nvidia.com/gpu"}, {"requestName", "gpu"}}}}};
    }
    low["status"]["phase"] = "Running";
    json high = ClaimPod("high", "wanted");
    high["spec"]["priority"] = 1000;
    c.OnPod(EventType::kAdded, low);
    c.OnPod(EventType::kAdded, high);
    const Task* victim = TaskNamed(c.state(), "ml/low");
    ASSERT_NE(victim, nullptr);
    EXPECT_EQ(c.state().spec(victim->spec).resource_claims, std::vector<std::string>{"ml/held"});

    SchedulerConfig config = SchedulerConfig::Default();
    config.actions = {"enqueue", "allocate", "preempt", "backfill"};
    const Decisions d = RunWithDevices(c, config);
    ASSERT_EQ(d.evictions.size(), 1u);
    EXPECT_EQ(c.state().task(d.evictions[0].task).name, "ml/low");
  }
}

}  // namespace
}  // namespace gantry

// Kubernetes objects as the scheduler sees them: decoded from the API's JSON into the
// few fields scheduling needs, with errors that name the object and the field.
//
// Pods (pod_object.cc), Nodes (node_object.cc) and PriorityClasses (core), Volcano's
// scheduling.volcano.sh/v1beta1 PodGroup and Queue, scheduler-plugins'
// scheduling.x-k8s.io/v1alpha1 PodGroup (objects.cc), and Kubernetes' own
// scheduling.k8s.io/v1beta1 PodGroup (native_group.cc). What every object has is in
// object_meta.h, resource lists in resource_list.h; volumes, NUMA, topology, datasets and
// workloads in their own files.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "k8s/dra_objects.h"
#include "k8s/object_meta.h"
#include "k8s/pod_rules.h"
#include "k8s/resource_list.h"
#include "model/cluster.h"
#include "model/resources.h"
#include "model/status.h"

namespace gantry::k8s {

// Annotations and labels Gantry reads and writes.
inline constexpr const char* kGroupAnnotation = "scheduling.k8s.io/group-name";
// The API group of Kubernetes' own PodGroups (a claim's reservedFor names it).
inline constexpr const char* kSchedulingGroup = "scheduling.k8s.io";
inline constexpr const char* kVolcanoGroupAnnotation = "scheduling.volcano.sh/group-name";
inline constexpr const char* kCoschedulingGroupLabel = "scheduling.x-k8s.io/pod-group";
inline constexpr const char* kQueueAnnotation = "gantry.dev/queue";
inline constexpr const char* kVolcanoQueueAnnotation = "scheduling.volcano.sh/queue-name";
// The condition kube-scheduler keeps on a native PodGroup: whether the gang was placed
// (terminal once True), and the one that says the scheduler is about to evict it.
inline constexpr const char* kInitiallyScheduledCondition = "PodGroupInitiallyScheduled";
inline constexpr const char* kCompositeInitiallyScheduledCondition =
    "CompositePodGroupInitiallyScheduled";
inline constexpr const char* kDisruptionTargetCondition = "DisruptionTarget";
// Kueue's topology-aware scheduling: the pod set stays inside one domain of the level whose
// node label the value names.
inline constexpr const char* kKueueRequiredTopologyAnnotation =
    "kueue.x-k8s.io/podset-required-topology";
inline constexpr const char* kKueuePreferredTopologyAnnotation =
    "kueue.x-k8s.io/podset-preferred-topology";
inline constexpr const char* kGpuFractionAnnotation = "gantry.dev/gpu-fraction";
inline constexpr const char* kGpuMemoryAnnotation = "gantry.dev/gpu-memory";
inline constexpr const char* kGpuDevicesAnnotation = "gantry.dev/gpu-devices";
// "true": the defragment action may move the pod (on a Queue: every pod of its jobs).
inline constexpr const char* kMovableAnnotation = "gantry.dev/movable";
// GPU feature discovery's node labels.
inline constexpr const char* kGpuProductLabel = "nvidia.com/gpu.product";
inline constexpr const char* kGpuMemoryLabel = "nvidia.com/gpu.memory";  // MiB per device

// Which API a pod's group is of: Volcano's, scheduler-plugins' (coscheduling), or
// Kubernetes' own (scheduling.k8s.io/v1beta1, named by the pod's spec.schedulingGroup).
// kComposite: Kubernetes' CompositePodGroup (scheduling.k8s.io/v1alpha3), a group of native
// PodGroups and other CompositePodGroups, read into a PodGroupInfo as well.
enum class GroupApi { kNone, kVolcano, kCoscheduling, kNative, kComposite };

// The controllers whose selectors kube-scheduler's default topology spreading reads
// (helper.DefaultSelector): v1 ReplicationController, apps/v1 ReplicaSet and StatefulSet.
enum class SpreadOwnerKind { kNone, kReplicationController, kReplicaSet, kStatefulSet };

// A pod's controller (the owner reference with controller: true), when it is one of those
// kinds; looked up by name in the pod's namespace, as kube-scheduler's listers do.
struct SpreadOwner {
  SpreadOwnerKind kind = SpreadOwnerKind::kNone;
  std::string name;
  bool operator==(const SpreadOwner&) const = default;
};

struct PodInfo {
  ObjectMeta meta;
  std::string scheduler_name;
  std::string node_name;  // empty while pending
  std::string phase;      // Pending, Running, Succeeded, Failed, Unknown
  int32_t priority = 0;
  TaskSpec spec;  // requests (with pods: 1), GPU request, selector, tolerations, affinity
  GroupApi group_api = GroupApi::kNone;
  std::string group;                 // the pod group's name (same namespace), empty when none
  std::string queue;                 // from an annotation; empty when none
  TopologyRequest topology;          // from Kueue's podset topology annotations
  std::vector<int32_t> gpu_devices;  // from gantry.dev/gpu-devices, when bound by Gantry
  // The PersistentVolumeClaims its volumes name (ClusterCache resolves them).
  std::vector<PodClaimRef> claims;
  // Its DRA claims (spec.resourceClaims) and, for those made from a template, the claims
  // kube-controller-manager made (status.resourceClaimStatuses).
  std::vector<dra::PodClaimRef> resource_claims;
  std::vector<PodClaimStatus> resource_claim_statuses;
  // The claim holding the devices of its extended resources served by DRA, once written
  // (status.extendedResourceClaimStatus.resourceClaimName).
  std::optional<std::string> extended_claim;
  // Its controller, for default topology spreading; kind kNone when it has none of those.
  SpreadOwner spread_owner;
  // spec.schedulingGates: while any is there the pod is not scheduled (SchedulingGated).
  std::vector<std::string> scheduling_gates;
  // What could not be read of its requests; empty for a pod ParsePod accepts.
  UnreadableRequests unreadable;
  // The PodScheduled=False condition's message as last written, to avoid rewriting it.
  std::string unschedulable_message;
  std::string unschedulable_reason;  // and its reason

  // ---- Defragmentation: gantry.dev/movable is "true" (a value other than "true" or
  // "false" keeps the pod from being scheduled, and says so).
  bool movable = false;

  // Finished pods hold no resources.
  bool finished() const { return phase == "Succeeded" || phase == "Failed"; }
};

struct PodGroupInfo {
  ObjectMeta meta;
  GroupApi api = GroupApi::kVolcano;
  int32_t min_member = 1;
  std::string queue;                // Volcano only; empty: "default"
  std::string priority_class_name;  // Volcano only
  ResourceVector min_resources;
  std::string phase;  // status.phase as last written
  // Volcano's spec.networkTopology: the gang stays inside one domain of tier
  // `highestTierAllowed` or below (tier 1 is the innermost level), required when mode is
  // hard, preferred when soft. Tier 0: none.
  int32_t network_topology_tier = 0;
  bool network_topology_hard = false;

  // ---- Kubernetes' own PodGroup (scheduling.k8s.io/v1beta1); min_member is
  // spec.schedulingPolicy.gang.minCount, or 1 for a basic group (placed pod by pod).
  bool gang = true;  // false: schedulingPolicy.basic
  // spec.priority as the API server's Priority admission resolved it (nil: 0), which every
  // pod of the group must share, as kube-scheduler requires.
  std::optional<int32_t> priority;
  bool preempt_never = false;  // spec.preemptionPolicy: Never
  // spec.disruptionMode.all: preemption and reclaim take every pod of the group or none.
  bool disrupt_whole = false;
  // spec.schedulingConstraints.topology[0].key: the group stays in one domain of it.
  std::string topology_key;
  // spec.resourceClaims (DRAWorkloadResourceClaims; the API server drops the field while the
  // gate is off): a pod's spec.resourceClaims entry equal to one of these uses a claim
  // reserved for the whole group, which status.reservedFor names instead of each pod.
  std::vector<dra::PodClaimRef> resource_claims;
  // status.conditions[PodGroupInitiallyScheduled].status is "True": terminal, never
  // written False again. metadata.generation, for the condition's observedGeneration.
  bool initially_scheduled = false;
  int64_t generation = 0;
  // spec.parentCompositePodGroupName, of a native PodGroup or a CompositePodGroup: the
  // CompositePodGroup it is a child of; empty for none (a root).
  std::string parent;
  // A CompositePodGroup's: min_member is schedulingPolicy.gang.minGroupCount (the
  // children that must be ready), or 1 for basic.
};

struct QueueInfo {
  ObjectMeta meta;
  int64_t weight = 1;
  ResourceVector capability;
  ResourceVector guarantee;
  ResourceVector deserved;  // spec.deserved: an explicit deserved amount per resource
  std::string parent;       // spec.parent; "" for a top-level queue
  bool reclaimable = true;  // spec.reclaimable
  // Fair share with memory for the queue's tree (on a top-level queue only): the annotation
  // gantry.dev/usage-half-life-seconds; 0 when absent.
  int64_t usage_half_life_s = 0;
  // ---- Defragmentation: the annotation gantry.dev/movable is "true".
  bool movable = false;
};
inline constexpr const char* kUsageHalfLifeAnnotation = "gantry.dev/usage-half-life-seconds";

struct PriorityClassInfo {
  ObjectMeta meta;
  int32_t value = 0;
};

// Reads what can be read of a pod, however malformed the rest of it is: an error only
// without metadata.name. Requests are read apart from the scheduling constraints, so that
// a pod bound to a node always counts there with what it asks for (what cannot be read
// is in `unreadable`). `*problem` gets the first reason gantry cannot schedule the pod
// (a message naming the pod, the field and the value), or is cleared.
Result<PodInfo> DecodePod(const nlohmann::json& object, std::string* problem);
// A pod gantry can schedule: DecodePod's problem is an error.
Result<PodInfo> ParsePod(const nlohmann::json& object);
// A node and its GPUs: nvidia.com/gpu in status.allocatable gives the device count, GPU
// feature discovery's labels give the model and memory.
Result<Node> ParseNode(const nlohmann::json& object);
// A Volcano, coscheduling or native PodGroup (native: ParseNativePodGroup).
Result<PodGroupInfo> ParsePodGroup(const nlohmann::json& object, GroupApi api);
// A scheduling.k8s.io/v1beta1 PodGroup: an error for anything the API server would refuse
// that Gantry reads.
Result<PodGroupInfo> ParseNativePodGroup(const nlohmann::json& object);
// A scheduling.k8s.io/v1alpha3 CompositePodGroup, likewise.
Result<PodGroupInfo> ParseCompositePodGroup(const nlohmann::json& object);
// A pod's spec.schedulingGroup.podGroupName: its native PodGroup; "" when none.
std::string SchedulingGroupOf(const nlohmann::json& spec);
Result<QueueInfo> ParseQueue(const nlohmann::json& object);
// The annotation gantry.dev/movable of an object's metadata.annotations: false when absent,
// "true" or "false" as said, anything else an error naming `where`, the annotation and
// the value.
Result<bool> ParseMovableAnnotation(const nlohmann::json& annotations, const std::string& where);
Result<PriorityClassInfo> ParsePriorityClass(const nlohmann::json& object);

// "0,3" <-> {0, 3}.
std::string FormatDeviceList(const std::vector<int32_t>& devices);
Result<std::vector<int32_t>> ParseDeviceList(const std::string& text);

}  // namespace gantry::k8s

// What a task asks for (TaskSpec, with its GpuRequest), and the two identities specs are
// told apart by:
//  - a TaskSpec is the same as another when every field is (operator==, TaskSpecHash):
//    tasks of one spec share the engine's per-spec caches, so every caller that gives
//    tasks of the same shape one spec (the daemon's pods, the replay's jobs) must tell
//    specs apart by all of it;
//  - a TaskShape is what a task takes from a node, its requests and GPUs and nothing of
//    where it may go: the task types of a workload profile (the fragmentation measure's
//    "typical tasks") are shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/attachable_volume.h"
#include "model/delayed_claim.h"
#include "model/labels.h"
#include "model/numa.h"
#include "model/pod_constraints.h"
#include "model/resources.h"
#include "model/volume_topology.h"

namespace gantry {

using SpecId = uint32_t;
using GpuModelId = uint32_t;

// What a task asks of GPUs: `count` whole devices, or one shared device with `milli`
// thousandths of it and/or `memory_mib` of its memory; optionally only some models.
struct GpuRequest {
  int32_t count = 0;
  int32_t milli = 0;  // 1..999 when shared
  int64_t memory_mib = 0;
  std::vector<GpuModelId> models;  // empty: any model

  bool wants_gpu() const { return count > 0 || milli > 0 || memory_mib > 0; }
  bool shared() const { return count == 0 && (milli > 0 || memory_mib > 0); }
  bool AllowsModel(GpuModelId model) const { return models.empty() || AllowsListedModel(model); }
  bool AllowsListedModel(GpuModelId model) const;
  bool operator==(const GpuRequest&) const = default;
};

// An extended resource a task asks for that a DeviceClass names (DRA's extended resources,
// engine/dra/extended_resources.h): on a node whose allocatable lacks it, the task's
// devices for it come from DRA, as a claim the scheduler makes; elsewhere the device
// plugin's allocatable serves it, as any extended resource.
struct DeviceBackedResource {
  ResourceId resource = 0;  // kGpu for nvidia.com/gpu (whose count is in `gpu`)
  std::string device_class;
  int64_t count = 0;  // whole devices: extended resources are whole numbers
  bool operator==(const DeviceBackedResource&) const = default;
};

// Whether a task may evict others to be placed (a pod's PriorityClass preemptionPolicy):
// PreemptLowerPriority (Kubernetes' default) or Never, which the preempt and reclaim
// actions honour: a Never task is placed only on room that is free or already released.
enum class PreemptionPolicy : uint8_t { kPreemptLowerPriority, kNever };

// What a group of identical tasks (one role of a job) asks for. Tasks share specs, so
// the engine's per-spec caches (static predicates, known-unschedulable) apply to all.
// Equal when every field is: lists (models, tolerations, affinity terms) in their order.
struct TaskSpec {
  std::string role;
  ResourceVector requests;  // without nvidia.com/gpu: GPUs are in `gpu`
  GpuRequest gpu;
  // The MIG profiles' resources among `requests` (nvidia.com/mig-1g.10gb), kept by
  // ClusterState (AddSpec, ReplaceSpec), so that scoring treats the task as a GPU task.
  // Derived from `requests`, so left out of equality and hashing.
  struct DerivedResources {
    std::vector<ResourceId> ids;
    bool operator==(const DerivedResources&) const { return true; }
  };
  DerivedResources mig_resources;
  int32_t priority = 0;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  NodeAffinity affinity;  // required and preferred node affinity
  // Who the task is, for other tasks' pod affinity and spread rules: its namespace and
  // labels. Tasks with different labels are different specs (a label unique to each pod,
  // such as a StatefulSet's pod name, makes a spec per pod).
  std::string namespace_;
  Labels labels;
  PodAffinity pod_affinity;
  std::vector<TopologySpreadConstraint> spread;
  // The selector of kube-scheduler's default spreading, whose constraints (the
  // podtopologyspread plugin's defaultConstraints) apply to a pod without `spread` of its
  // own: filled by the daemon from the pod's Services and owners (ReplicationControllers,
  // ReplicaSets, StatefulSets), as kube-scheduler's DefaultSelector builds it. Empty (none,
  // or a selector without requirements): no default spreading.
  std::optional<LabelSelector> default_spread_selector;
  std::vector<HostPort> host_ports;
  // Where its bound PersistentVolumes can be reached: every volume's required node
  // affinity must match the node's labels (VolumeBinding; matchFields see no node name,
  // as kube-scheduler checks volumes against labels alone), and the volumes' topology
  // labels must allow it (VolumeZone).
  std::vector<NodeAffinity> volume_node_affinity;
  std::vector<VolumeTopology> volume_zones;
  // Its claims with access mode ReadWriteOncePod (names in its namespace, sorted): no
  // two pods may use one at a time (VolumeRestrictions).
  std::vector<std::string> rwop_claims;
  // Its claims that wait for their first consumer, in the order VolumeBinding matches
  // them (by requested size): each needs a volume or provisioning on the node.
  std::vector<DelayedClaim> delayed_claims;
  // Its volumes that attach to a node and count against the node's limit for their CSI
  // driver (NodeVolumeLimits), sorted by driver and handle, each once.
  std::vector<AttachableVolume> attachable_volumes;
  // Its inline disks that no other pod on its node may use (VolumeRestrictions), sorted.
  std::vector<InlineDisk> inline_disks;
  // Its ResourceClaims (Dynamic Resource Allocation), "namespace/name" in the order of the
  // pod's spec.resourceClaims, each once: every one must be allocated on the node (or be
  // allocated already where the node can use it) before it binds. A claim made from a
  // template has a name of its own per pod, so such pods are specs of their own.
  std::vector<std::string> resource_claims;
  // What its claims' devices count against its queue, by the configured map from
  // DeviceClass to resource name (a gpu.nvidia.com device as 1000 milli of nvidia.com/gpu,
  // so that queue weights, guarantees and capabilities written in GPUs apply). Counted with
  // `requests` by queues and jobs (ClusterState::Accounted), never checked against a
  // node's allocatable: DeviceReservations checks the devices themselves.
  ResourceVector device_requests;
  // Its extended resources that a DeviceClass names, sorted by resource name, each once
  // (empty where no class does, or the cluster has no DRA).
  std::vector<DeviceBackedResource> device_backed;
  // What the kubelet's topology manager aligns on a node that has NUMA nodes (model/numa.h):
  // its QoS class and, when it has several, its containers.
  NumaDemand numa;
  // ---- Dataset locality (issue 13, model/datasets.h): the datasets it reads,
  // "namespace/name", sorted, each once (a pod's gantry.dev/datasets annotation and its
  // claims of Fluid datasets; a scenario task's datasets). A scorer reads it; no
  // predicate does, so it reads no node label through LabelKeysOf.
  std::vector<std::string> datasets;
  // The node features it needs (NodeDeclaredFeatures: what its spec uses that only a
  // kubelet declaring the feature runs), sorted, each once; a node must declare them all.
  std::vector<std::string> required_features;
  bool operator==(const TaskSpec&) const = default;

  // Whether default spread constraints apply to it (see default_spread_selector).
  bool default_spreading() const;
  // Whether placing it depends on the other tasks on the nodes, beyond their resources.
  bool has_pod_constraints() const {
    return !pod_affinity.empty() || !spread.empty() || default_spreading() || !host_ports.empty();
  }
  // Whether placing other tasks can make a node feasible for it that was not (a pod its
  // required affinity wants arrives; a domain its spread constraint counts fills up).
  // Default spreading is not counted here: whether its constraints filter is the plugin's
  // to say (NodePredicate::PlacementsCanUnblock).
  // Otherwise placements only take room, and "fits nowhere" stays true in a session.
  bool placements_can_unblock() const;
};

struct TaskSpecHash {
  size_t operator()(const TaskSpec& spec) const;
};

// The node label keys a spec reads (its node selector's and its node affinity's,
// required and preferred, with kNodeNameField for matchFields; its volumes' node
// affinity and, with volume topology labels, all four topology keys), each once, sorted.
// Static predicates and scores see a node's labels only through these.
std::vector<std::string> LabelKeysOf(const TaskSpec& spec);

// What a task takes from a node: its requests and GPUs, not where it may run.
struct TaskShape {
  ResourceVector requests;
  GpuRequest gpu;
  // A task whose GPUs are DRA claims (no GPU request, TaskSpec::device_requests counting
  // nvidia.com/gpu) has them in its shape as a GPU request: whole GPUs when they count as
  // whole ones, else a share of one (rounded up to a whole GPU above one), so that the
  // workload profile that fgd measures fragmentation against sees it as the GPU task it is.
  static TaskShape Of(const TaskSpec& spec);
  bool operator==(const TaskShape&) const = default;
};

struct TaskShapeHash {
  size_t operator()(const TaskShape& shape) const;
};

}  // namespace gantry

// What the daemon asks of the API server, as values that the cache and its components hand
// to the scheduler loop and the ApiWriter sends: binds, evictions, nominated nodes, volume
// writes, status (pod conditions, PodGroup statuses) and events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/extended_claims.h"
#include "engine/decisions.h"
#include "k8s/workloads.h"
#include "model/dra.h"

namespace gantry {

// Messages the daemon keeps and writes are bounded, whatever the text they quote.
inline constexpr size_t kMaxMessage = 1024;
inline std::string Bounded(std::string text, size_t limit) {
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  return text;
}

// The API version of a PodGroup of `api`, for events about it.
inline const char* GroupApiVersion(k8s::GroupApi api) {
  return api == k8s::GroupApi::kCoscheduling ? "scheduling.x-k8s.io/v1alpha1"
         : api == k8s::GroupApi::kNative     ? "scheduling.k8s.io/v1beta1"
         : api == k8s::GroupApi::kComposite  ? "scheduling.k8s.io/v1alpha3"
                                             : "scheduling.volcano.sh/v1beta1";
}
// Its kind and REST resource.
inline const char* GroupKind(k8s::GroupApi api) {
  return api == k8s::GroupApi::kComposite ? "CompositePodGroup" : "PodGroup";
}
inline const char* GroupResource(k8s::GroupApi api) {
  return api == k8s::GroupApi::kComposite ? "compositepodgroups" : "podgroups";
}

// One of a pod's ResourceClaims to write before its bind, as kube-scheduler's
// DynamicResources PreBind does: the delete-protection finalizer, the allocation a session
// made (none when the claim was allocated already) and the pod in status.reservedFor.
struct ClaimWrite {
  std::string namespace_;  // the claim's (the pod's)
  std::string name;
  std::string uid;  // the claim's as the session saw it: a claim made again is not written
  std::optional<dra::Allocation> allocation;
  // Whom status.reservedFor gets: the pod, or its native PodGroup for a claim the group
  // shares (DRAWorkloadResourceClaims).
  dra::ConsumerReference consumer;
  // The claim as the cache last read it, when it lacked the delete-protection finalizer: its
  // resourceVersion (0: unknown, or it had the finalizer) and whether it had any finalizer. With
  // them the finalizer goes on in one patch conditional on that version, without reading the claim
  // first, as kube-scheduler writes from its informer's copy; a claim changed since is read and
  // written as usual.
  int64_t seen_version = 0;
  bool seen_any_finalizer = false;
  // The claim of the pod's extended resources, made by the bind that wrote it: taken back
  // by deleting it, not by undoing its writes.
  bool extended = false;
};

// The claim of a pod's extended resources that DRA serves on its node (engine/dra/
// extended_resources.h): made before the bind, shaped as kube-scheduler makes it from the
// pod's containers (daemon/extended_claims.h), with the session's allocation.
struct ExtendedClaimWrite {
  std::vector<ExtendedResourceClass> resources;  // by index k of the requests "resource-<k>"
  dra::Allocation allocation;                    // the engine's, requests "resource-<k>"
};

// A bind to send: the pod, where, and the GPU devices to write on it first (shared GPUs).
struct BindRequest {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string node;
  std::vector<int32_t> gpus;
  // A share of a GPU: `gpus` go on the pod as gantry.dev/gpu-devices, carried by the Binding.
  bool write_devices = false;
  std::string job;  // its job's key, for messages
  // Its DRA claims, all written before the bind; none written, no bind.
  std::vector<ClaimWrite> claims;
  // Its extended resources' claim, made and written after `claims`, before the bind.
  std::optional<ExtendedClaimWrite> extended_claim;
  // An allocated device has binding conditions (DRADeviceBindingConditions): the claims
  // are written, then the bind waits for the driver (ApiWriter answers `waiting`).
  bool wait_for_binding_conditions = false;
  // The claims were written by an earlier request (the one that waited): the bind goes
  // out alone, and a failure takes back the reservations and allocations.
  bool claims_written = false;
  // Of a job of minMember > 1: its binding carries the annotations that keep autoscalers from
  // taking its node while the gang runs (ApiWriter's `gang_annotations`).
  bool gang_member = false;
};

// An eviction to ask for (policy/v1 Eviction, which PodDisruptionBudgets may refuse).
struct EvictRequest {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string reason;  // the engine's: names the preemptor
  // ---- Why: the eviction metric's cause label and the pod event's reason.
  EvictionCause cause = EvictionCause::kPreempt;
  // The pod's native PodGroup (same namespace), on the first of a session's evictions of its
  // pods: it is told first (DisruptionTarget), as kube-scheduler tells it. "" else.
  std::string native_group;
};

// A pod's status.nominatedNodeName to write: the node whose room being released it waits
// for (empty: clear it).
struct NominatedNode {
  std::string namespace_;
  std::string name;
  std::string node;
};

// What to write so that a pod's delayed claims bind where the session placed it, in order
// (kube-scheduler's bindAPIUpdate): a volume's spec.claimRef, a claim's selected-node
// annotation. Each is a merge patch conditional on the resourceVersion it was chosen on.
struct VolumeWrite {
  std::string path;        // the object's API path
  std::string patch;       // JSON merge patch
  std::string what;        // `persistentvolume "pv-1"`, for messages
  std::string object_key;  // "pv/NAME" or "pvc/NAMESPACE/NAME"
};
struct VolumeWrites {
  std::string namespace_;  // the pod's
  std::string name;
  std::string uid;
  std::vector<VolumeWrite> writes;
};
struct VolumeWriteResult {
  std::string namespace_;  // the pod's
  std::string name;
  std::string uid;
  bool ok = false;
  std::string error;
  // Per object written (VolumeWrite::object_key), its resourceVersion after the write:
  // until the watch shows that version, the object is not judged.
  std::vector<std::pair<std::string, std::string>> versions;
};

// Something to tell users: a Kubernetes Event on an object.
struct ObjectEvent {
  std::string api_version;  // of the object: "v1", "scheduling.volcano.sh/v1beta1", ...
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string type;  // Normal or Warning
  std::string reason;
  std::string message;
};

// A PodScheduled=False condition to write for a pending pod.
// A pending pod's PodScheduled=False reason. Unschedulable tells autoscalers (Cluster
// Autoscaler, Karpenter: FailedToSchedule) that a node would help; the others say that no
// node would: the pod is gated, its queue's limit holds it, or its PodGroup is not ready to
// be placed (missing, invalid, fewer pods than its minimum).
inline constexpr const char* kUnschedulableReason = "Unschedulable";
inline constexpr const char* kSchedulingGatedReason = "SchedulingGated";
inline constexpr const char* kQueueLimitReason = "QueueLimit";
inline constexpr const char* kPodGroupNotReadyReason = "PodGroupNotReady";

struct PodCondition {
  std::string namespace_;
  std::string name;
  std::string message;
  std::string reason = kUnschedulableReason;  // or another of the reasons below
};

// kube-scheduler's words for a pod held back by its scheduling gates.
inline constexpr const char* kSchedulingGatedMessage =
    "Scheduling is blocked due to non-empty scheduling gates";

// A PodGroup's status.
struct GroupStatus {
  k8s::GroupApi api = k8s::GroupApi::kVolcano;
  std::string namespace_;
  std::string name;
  std::string phase;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t placed = 0;                 // pods placed: bound (running or since finished), or assumed
  std::string unschedulable_message;  // empty: schedulable
  // A native PodGroup's PodGroupInitiallyScheduled condition, as kube-scheduler writes it:
  // status True (reason Scheduled) or False (reason Unschedulable, or SchedulerError for
  // what it refuses to try); lastTransitionTime only when the status changes.
  // A CompositePodGroup's CompositePodGroupInitiallyScheduled, likewise.
  bool scheduled = false;
  bool scheduler_error = false;
  bool transition = false;
  int64_t generation = 0;
  // A CompositePodGroup: whether its tree is ready with the pods placed (the cache knows
  // its tree; `placed` against the group's minimum says nothing of it).
  bool tree_ready = false;
};

}  // namespace gantry

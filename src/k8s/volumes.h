// PersistentVolumeClaims, PersistentVolumes and StorageClasses as kube-scheduler's volume
// plugins read them (VolumeRestrictions, VolumeBinding, VolumeZone): decoded from the API's
// JSON into the few fields those rules need, with errors that name the object and the
// field. What the rules make of them for a pod is the daemon's (VolumeBinder).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "model/attachable_volume.h"
#include "model/labels.h"
#include "model/pod_constraints.h"
#include "model/quantity.h"
#include "model/status.h"
#include "model/volume_topology.h"

namespace gantry::k8s {

// Set by the PV controller once it has bound a claim to its volume; until then a claim
// that names a volume is only pre-bound (kube-scheduler: not "fully bound").
inline constexpr const char* kBindCompletedAnnotation = "pv.kubernetes.io/bind-completed";
// The storage class as it was named before spec.storageClassName; it wins over the field.
inline constexpr const char* kBetaStorageClassAnnotation =
    "volume.beta.kubernetes.io/storage-class";
// Written on a delayed claim by the scheduler that chose the node to provision it on.
inline constexpr const char* kSelectedNodeAnnotation = "volume.kubernetes.io/selected-node";
// Written on a volume bound to its claim by a controller (or a scheduler), not a user.
inline constexpr const char* kBoundByControllerAnnotation = "pv.kubernetes.io/bound-by-controller";
// A class's provisioner that provisions nothing (local volumes are made by hand).
inline constexpr const char* kNoProvisioner = "kubernetes.io/no-provisioner";

// spec.claimRef of a volume: the claim it is bound (or pre-bound) to.
struct ClaimRef {
  std::string namespace_;
  std::string name;
  std::string uid;  // "" when a user pre-bound it by name only
  bool operator==(const ClaimRef&) const = default;
};

struct ClaimInfo {
  ObjectMeta meta;
  std::string volume_name;           // spec.volumeName: the PersistentVolume it is bound to
  bool bind_completed = false;       // has kBindCompletedAnnotation
  std::string storage_class;         // the beta annotation, else spec.storageClassName; "": none
  bool read_write_once_pod = false;  // spec.accessModes has ReadWriteOncePod
  bool lost = false;                 // status.phase Lost: its volume is gone
  std::string controller_uid;        // the uid of its controller owner reference; "": none
  // For delayed binding (matching a static volume, or provisioning).
  Milli storage_request = 0;                 // spec.resources.requests.storage; 0 when absent
  bool has_storage_request = false;          // that request is there
  std::vector<std::string> access_modes;     // spec.accessModes
  std::string volume_mode = "Filesystem";    // spec.volumeMode (the API server's default)
  std::optional<LabelSelector> selector;     // spec.selector; none: any volume
  std::optional<std::string> selected_node;  // kSelectedNodeAnnotation, when present

  // kube-scheduler's isPVCFullyBound.
  bool fully_bound() const { return !volume_name.empty() && bind_completed; }
};

struct PersistentVolumeInfo {
  ObjectMeta meta;
  // spec.nodeAffinity.required, when set: the nodes the volume can be reached from.
  std::optional<NodeAffinity> node_affinity;
  // Its topology labels (kVolumeTopologyKeys) whose values parse; VolumeZone ignores
  // those that do not.
  std::vector<VolumeTopology> zones;
  // What it attaches to a node as, when it counts against the node's volume limits
  // (NodeVolumeLimits; k8s/csi_translation.h): a CSI volume, or an in-tree one CSI
  // migration translates. None for the others (local, hostPath, nfs, ...).
  std::optional<AttachableVolume> attachable;
  bool csi_source = false;  // spec.csi is set (a VolumeAttachment of it counts)
  // For delayed binding.
  std::string storage_class;  // the beta annotation, else spec.storageClassName; "": none
  Milli capacity = 0;         // spec.capacity.storage
  std::vector<std::string> access_modes;
  std::string volume_mode = "Filesystem";
  std::optional<ClaimRef> claim_ref;  // spec.claimRef
  bool available = false;             // status.phase Available
  Labels labels;
  // ---- Dataset locality (issue 13, k8s/datasets.h): the Fluid dataset ("namespace/name")
  // it is a volume of, or "".
  std::string fluid_dataset;
};

enum class VolumeBindingMode { kUnset, kImmediate, kWaitForFirstConsumer };

struct StorageClassInfo {
  ObjectMeta meta;
  // The API server defaults it to Immediate; kUnset only for objects it did not admit.
  VolumeBindingMode binding_mode = VolumeBindingMode::kUnset;
  std::string provisioner;
  // allowedTopologies: terms of In requirements on node labels; no terms: any node.
  NodeAffinity allowed_topologies;
};

// storage.k8s.io/v1 CSINode: the CSI drivers installed on the node it is named after,
// and how many volumes each may attach there.
struct CsiNodeInfo {
  ObjectMeta meta;
  std::vector<NodeCsiDriver> drivers;  // sorted by name, each once
};

// storage.k8s.io/v1 VolumeAttachment: a volume attached (or being attached) to a node.
struct VolumeAttachmentInfo {
  ObjectMeta meta;
  std::string attacher;           // spec.attacher: the CSI driver
  std::string node_name;          // spec.nodeName
  std::string persistent_volume;  // spec.source.persistentVolumeName; "" for inline sources
};

// storage.k8s.io/v1 CSIDriver: what kube-scheduler reads of it.
struct CsiDriverInfo {
  ObjectMeta meta;
  bool storage_capacity = false;  // spec.storageCapacity
  bool required_on_node = false;  // spec.preventPodSchedulingIfMissing
};

// storage.k8s.io/v1 CSIStorageCapacity: room for new volumes of a class, on the nodes
// its topology selects.
struct StorageCapacityInfo {
  ObjectMeta meta;
  std::string storage_class;                   // storageClassName
  std::optional<LabelSelector> node_topology;  // none: no node has access
  // maximumVolumeSize when set, else capacity: the largest volume it can make; none
  // when neither is set (it offers room for none).
  std::optional<Milli> volume_limit;
};

Result<ClaimInfo> ParseClaim(const nlohmann::json& object);
Result<PersistentVolumeInfo> ParsePersistentVolume(const nlohmann::json& object);
Result<StorageClassInfo> ParseStorageClass(const nlohmann::json& object);
Result<CsiNodeInfo> ParseCsiNode(const nlohmann::json& object);
Result<VolumeAttachmentInfo> ParseVolumeAttachment(const nlohmann::json& object);
Result<CsiDriverInfo> ParseCsiDriver(const nlohmann::json& object);
Result<StorageCapacityInfo> ParseStorageCapacity(const nlohmann::json& object);

}  // namespace gantry::k8s

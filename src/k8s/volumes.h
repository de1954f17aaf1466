// PersistentVolumeClaims, PersistentVolumes and StorageClasses as kube-scheduler's volume
// plugins read them (VolumeRestrictions, VolumeBinding, VolumeZone): decoded from the API's
// JSON into the few fields those rules need, with errors that name the object and the
// field. What the rules make of them for a pod is the daemon's (ClusterCache).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "model/labels.h"
#include "model/status.h"
#include "model/volume_topology.h"

namespace gantry::k8s {

// Set by the PV controller once it has bound a claim to its volume; until then a claim
// that names a volume is only pre-bound (kube-scheduler: not "fully bound").
inline constexpr const char* kBindCompletedAnnotation = "pv.kubernetes.io/bind-completed";
// The storage class as it was named before spec.storageClassName; it wins over the field.
inline constexpr const char* kBetaStorageClassAnnotation =
    "volume.beta.kubernetes.io/storage-class";

struct ClaimInfo {
  ObjectMeta meta;
  std::string volume_name;           // spec.volumeName: the PersistentVolume it is bound to
  bool bind_completed = false;       // has kBindCompletedAnnotation
  std::string storage_class;         // the beta annotation, else spec.storageClassName; "": none
  bool read_write_once_pod = false;  // spec.accessModes has ReadWriteOncePod
  bool lost = false;                 // status.phase Lost: its volume is gone
  std::string controller_uid;        // the uid of its controller owner reference; "": none

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
  // The source, when it is one that attaches to a node and counts against the node's
  // volume limits (NodeVolumeLimits): "csi" or an in-tree kind that migrates to CSI. ""
  // for the others (local, hostPath, nfs, ...).
  std::string attaching_kind;
  std::string csi_driver;  // spec.csi.driver
};

enum class VolumeBindingMode { kUnset, kImmediate, kWaitForFirstConsumer };

struct StorageClassInfo {
  ObjectMeta meta;
  // The API server defaults it to Immediate; kUnset only for objects it did not admit.
  VolumeBindingMode binding_mode = VolumeBindingMode::kUnset;
};

Result<ClaimInfo> ParseClaim(const nlohmann::json& object);
Result<PersistentVolumeInfo> ParsePersistentVolume(const nlohmann::json& object);
Result<StorageClassInfo> ParseStorageClass(const nlohmann::json& object);

}  // namespace gantry::k8s

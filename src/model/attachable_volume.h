// Volumes that attach to a node, as kube-scheduler's NodeVolumeLimits counts them: per
// CSI driver, the distinct volumes of the pods on a node (and those its VolumeAttachments
// name) against the count the node's CSINode object allows for that driver; and inline
// disks, which VolumeRestrictions keeps apart.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace gantry {

struct AttachableVolume {
  std::string driver;  // the CSI driver it attaches with
  std::string handle;  // its handle for that driver: (driver, handle) names it
  // Translated from an in-tree source (CSI migration): counted only on a node that has a
  // CSINode object, as isCSIMigrationOn decides.
  bool migrated = false;
  // Its driver's CSIDriver object sets preventPodSchedulingIfMissing: a node whose CSINode
  // does not list the driver refuses the pod (VolumeLimitScaling, on by default in v1.37).
  bool driver_required = false;
  bool operator==(const AttachableVolume&) const = default;

  // The order and identity that counting goes by: driver and handle.
  bool SameVolume(const AttachableVolume& other) const {
    return driver == other.driver && handle == other.handle;
  }
  bool VolumeBefore(const AttachableVolume& other) const {
    return std::tie(driver, handle) < std::tie(other.driver, other.handle);
  }
};

// Sorts volumes by driver and handle and keeps each once (the first of equals). Returns
// how many were dropped.
inline size_t SortVolumesOnce(std::vector<AttachableVolume>* volumes) {
  std::stable_sort(
      volumes->begin(), volumes->end(),
      [](const AttachableVolume& a, const AttachableVolume& b) { return a.VolumeBefore(b); });
  const auto end = std::unique(
      volumes->begin(), volumes->end(),
      [](const AttachableVolume& a, const AttachableVolume& b) { return a.SameVolume(b); });
  const auto dropped = static_cast<size_t>(volumes->end() - end);
  volumes->erase(end, volumes->end());
  return dropped;
}

// An inline disk that kube-scheduler's VolumeRestrictions keeps from being used by two pods
// on one node: a GCE PD by name, an AWS EBS volume by ID, an iSCSI disk by IQN, an RBD
// image by pool, image and monitor (one entry per monitor, as any shared monitor makes
// two the same image). Two uses conflict unless both only read it; an EBS volume always.
struct InlineDisk {
  std::string key;  // "gce-pd/NAME", "aws-ebs/ID", "iscsi/IQN", "rbd/POOL/IMAGE/MONITOR"
  bool read_only = false;
  bool operator==(const InlineDisk&) const = default;
  bool ConflictsWith(const InlineDisk& other) const {
    return key == other.key && !(read_only && other.read_only);
  }
};

// A CSI driver installed on a node (its CSINode's spec.drivers[]).
struct NodeCsiDriver {
  std::string name;
  std::optional<int32_t> limit;  // allocatable.count: none means no limit
  bool operator==(const NodeCsiDriver&) const = default;
};

// What a node's CSINode object and the VolumeAttachments naming it say.
struct NodeCsi {
  bool has_csi_node = false;
  std::vector<NodeCsiDriver> drivers;  // sorted by name, each once
  // Volumes attached to it by VolumeAttachments (attacher, and the handle of the CSI
  // PersistentVolume they name), whether or not a pod on it uses them; sorted, each once.
  std::vector<AttachableVolume> attached;
  bool operator==(const NodeCsi&) const = default;

  const NodeCsiDriver* FindDriver(std::string_view name) const {
    for (const NodeCsiDriver& d : drivers) {
      if (d.name == name) return &d;
    }
    return nullptr;
  }
  bool has_limits() const {
    for (const NodeCsiDriver& d : drivers) {
      if (d.limit) return true;
    }
    return false;
  }
};

}  // namespace gantry

// Which volumes attach to a node and count against its limit for a CSI driver, as
// kube-scheduler's NodeVolumeLimits finds them: CSI persistent volumes by their driver and
// handle, and the in-tree sources that CSI migration translates (csi-translation-lib),
// with the handle the translation gives. Only the in-tree kinds that isCSIMigrationOn
// reports migrated count (AWS EBS, GCE PD, Azure Disk, Cinder, Portworx); Azure File and
// vSphere volumes, like every other source, count against no limit.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "model/attachable_volume.h"
#include "model/labels.h"

namespace gantry::k8s {

// The CSI driver an in-tree plugin ("kubernetes.io/aws-ebs", ...) migrates to when its
// volumes count (see above), or "".
std::string MigratedDriverOf(const std::string& in_tree_plugin);

// A PersistentVolume's spec (and its labels, which GCE PD's handle reads the zone from):
// what it attaches as, or nothing (not an attaching source, or a translation that fails,
// which CSILimits does not count either).
std::optional<AttachableVolume> AttachableOfVolumeSpec(const nlohmann::json& spec,
                                                       const Labels& labels);

// A pod's inline volume (spec.volumes[i]): what it attaches as, or nothing (inline CSI
// volumes count against no limit). An in-tree source whose translation fails gives
// nothing too: the caller keeps such a pod pending (CSILimits fails it on every node).
std::optional<AttachableVolume> AttachableOfInlineVolume(const nlohmann::json& volume);

// What an unbound claim of class provisioner `provisioner` attaches as once provisioned
// (CSILimits' getCSIDriverInfoFromSC): the provisioner (or the driver an in-tree one
// migrates to) and a handle unique to the claim.
// Nothing for a provisioner whose volumes count nowhere.
std::optional<AttachableVolume> AttachableOfUnboundClaim(const std::string& provisioner,
                                                         const std::string& namespace_,
                                                         const std::string& claim);

}  // namespace gantry::k8s

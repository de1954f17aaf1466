// A PersistentVolumeClaim that waits for its first consumer (its StorageClass has
// volumeBindingMode WaitForFirstConsumer and it is not bound yet): what kube-scheduler's
// VolumeBinding may do with it on a node, as the daemon found it (the static volumes that
// match it, and whether and where its class provisions). Which node works, and which
// volume it then gets, is decided per node in the session (engine/volume_binding.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/labels.h"
#include "model/pod_constraints.h"
#include "model/quantity.h"

namespace gantry {

// A PersistentVolume a claim may be bound to.
struct CandidateVolume {
  std::string name;
  Milli capacity = 0;  // spec.capacity.storage, in thousandths of a byte
  // spec.nodeAffinity.required: the nodes it can be reached from; none: every node.
  // Compared with node labels only, as VolumeBinding does.
  std::optional<NodeAffinity> node_affinity;
  bool operator==(const CandidateVolume&) const = default;

  bool ReachableFrom(const Labels& node_labels) const {
    return !node_affinity || node_affinity->Matches(node_labels);
  }
};

struct DelayedClaim {
  std::string claim;  // its name, in the task's namespace
  // Its volume.kubernetes.io/selected-node annotation, when set: only that node, with the
  // claim provisioned (a node chosen before, by this scheduler or another).
  std::optional<std::string> selected_node;
  // A volume whose spec.claimRef names this claim (pre-bound by a user, or by an earlier
  // try): FindMatchingVolume takes it, or nothing when its node affinity refuses the node.
  std::optional<CandidateVolume> prebound;
  // Otherwise the available volumes of its class that fit it (capacity, access modes,
  // volume mode, its selector, bound to no claim), smallest first, then by name: the
  // first one reachable from the node and not taken by another claim is chosen.
  std::vector<CandidateVolume> volumes;
  // With no volume: whether its class provisions (a provisioner other than
  // kubernetes.io/no-provisioner), and on which nodes (allowedTopologies as required
  // node affinity terms of In requirements; no terms: any node).
  bool provisionable = false;
  NodeAffinity allowed_topologies;
  // Storage capacity tracking, when its class's provisioner has a CSIDriver with
  // storageCapacity: true and the claim requests a size: provisioning on a node also needs
  // one of these to match the node's labels, the nodeTopology of each CSIStorageCapacity of
  // its class with room for the request (maximumVolumeSize, else capacity).
  bool capacity_tracked = false;
  std::vector<LabelSelector> capacity_topologies;
  bool operator==(const DelayedClaim&) const = default;
};

}  // namespace gantry

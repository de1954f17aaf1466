// Where a pod's bound PersistentVolumes can be reached, as kube-scheduler's VolumeZone
// plugin reads a volume's topology labels. (A volume's spec.nodeAffinity is a plain
// NodeAffinity, checked as VolumeBinding does: see TaskSpec::volume_node_affinity.)
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "model/labels.h"

namespace gantry {

// The labels VolumeZone compares between a volume and a node: the legacy beta keys and
// the GA ones.
inline constexpr std::string_view kBetaZoneLabel = "failure-domain.beta.kubernetes.io/zone";
inline constexpr std::string_view kBetaRegionLabel = "failure-domain.beta.kubernetes.io/region";
inline constexpr std::string_view kZoneLabel = "topology.kubernetes.io/zone";
inline constexpr std::string_view kRegionLabel = "topology.kubernetes.io/region";
inline constexpr std::array<std::string_view, 4> kVolumeTopologyKeys = {
    kBetaZoneLabel, kBetaRegionLabel, kZoneLabel, kRegionLabel};

// One topology label of a volume: the zones (or regions) it can be reached from.
struct VolumeTopology {
  std::string key;                  // one of kVolumeTopologyKeys
  std::vector<std::string> values;  // sorted, each once; never empty
  bool operator==(const VolumeTopology&) const = default;
};

// A label value of a volume, "a__b" for several zones, as a set (cloud-provider's
// LabelZonesToSet: each part trimmed of spaces). False when a part is empty: VolumeZone
// then ignores the label.
bool ParseVolumeZones(std::string_view value, std::vector<std::string>* out);

// Whether a node may run a pod whose volumes have these labels: a node with none of the
// four topology labels may (a cluster without zones); otherwise each label's value on
// the node must be one of the volume's, where a beta key absent from the node is looked
// up under its GA key (the other way round is not: a GA key needs the GA label).
bool VolumeZonesAllow(const std::vector<VolumeTopology>& zones, const Labels& node_labels);

}  // namespace gantry

// A scenario task's PersistentVolumeClaims, each with the PersistentVolume bound to it:
//   volumes:
//     - claim: data                       # the claim's name, in the task's namespace
//       accessModes: [ReadWriteOncePod]   # the claim's; ReadWriteOncePod: one pod at a time
//       nodeAffinity: [{matchExpressions: [...]}]
//                                         # the volume's spec.nodeAffinity.required
//                                         # nodeSelectorTerms (a local volume: its node)
//       labels: {topology.kubernetes.io/zone: "a__b"}
//                                         # the volume's labels; VolumeZone reads the zone
//                                         # and region ones
// The engine then checks them as kube-scheduler's VolumeBinding (node affinity),
// VolumeZone and VolumeRestrictions (ReadWriteOncePod) do for bound claims.
#pragma once

#include <string>

#include "model/task_spec.h"
#include "sim/pod_spec_reader.h"
#include "sim/yaml_reader.h"

namespace gantry {

// Reads `volumes:` into spec's volume_node_affinity, volume_zones and rwop_claims.
// REQUIRES: spec->namespace_ is read (claims are the namespace's).
Status ReadScenarioVolumes(const YamlReader& r, const PodSpecReader& pod, const YAML::Node& node,
                           const std::string& field, TaskSpec* spec);

}  // namespace gantry

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
//       waitForFirstConsumer:             # instead of the two above: the claim is unbound
//         request: 10Gi                   # and its class binds on the first consumer
//         volumes: [{name: pv-a, capacity: 20Gi, nodeAffinity: [terms]}]
//                                         # the available volumes that match it
//         provisionable: true             # its class provisions (not no-provisioner) ...
//         allowedTopologies: [terms]      # ... on these nodes (none: any)
//         selectedNode: n1                # its volume.kubernetes.io/selected-node
//         storageCapacity:                # its driver tracks capacity: the class's
//           - {nodeTopology: {matchLabels: {zone: a}}, capacity: 100Gi,
//              maximumVolumeSize: 50Gi}    # CSIStorageCapacity objects
//       csi: {driver: ebs.csi.aws.com, handle: vol-1, requiredOnNode: true}
//                                         # the volume attaches with this CSI driver and
//                                         # counts against the node's limit for it (the
//                                         # handle defaults to namespace/claim)
// The engine then checks them as kube-scheduler's VolumeBinding (node affinity; for
// unbound claims the volume or the provisioning it would choose per node), VolumeZone and
// VolumeRestrictions (ReadWriteOncePod) do, and NodeVolumeLimits against the nodes'
// `csi:` (see scenario_nodes.h).
#pragma once

#include <string>

#include "model/task_spec.h"
#include "sim/pod_spec_reader.h"
#include "sim/yaml_reader.h"

namespace gantry {

// Reads `volumes:` into spec's volume_node_affinity, volume_zones, rwop_claims,
// delayed_claims and attachable_volumes.
// REQUIRES: spec->namespace_ is read (claims are the namespace's).
Status ReadScenarioVolumes(const YamlReader& r, const PodSpecReader& pod, const YAML::Node& node,
                           const std::string& field, TaskSpec* spec);

// Reads `inlineDisks:` (inline volumes that VolumeRestrictions keeps from two pods on one
// node, in a pod's spec.volumes[] shapes):
//   inlineDisks:
//     - gcePersistentDisk: {pdName: pd-1, readOnly: true}
//     - awsElasticBlockStore: {volumeID: vol-1}
//     - iscsi: {iqn: iqn.2001-04.com.example:disk, readOnly: false}
//     - rbd: {monitors: [10.0.0.1:6789], pool: rbd, image: img}
// into spec->inline_disks.
Status ReadScenarioInlineDisks(const YamlReader& r, const YAML::Node& node,
                               const std::string& field, TaskSpec* spec);

}  // namespace gantry

// A scenario's topology: the levels, and the jobs that stay inside one domain of one.
//   topologyKeys: [block, spine, leaf]      # node label keys, outermost first (default:
//                                           # zone, spine, rack; see ClusterState)
//   jobs:
//     - name: train
//       topology: {required: leaf}          # the whole gang inside one leaf, or not at all
//       topology: {preferred: spine}        # the tightest of spine and the levels above
// A level must be one of topologyKeys and be the label of some node.
//   hyperNodes:                             # Volcano's HyperNodes (model/hypernodes.h):
//     - {name: s0, tier: 2, members: [{type: HyperNode, exactMatch: l0},
//                                     {type: HyperNode, regexMatch: "^l[12]$"}]}
//     - {name: l0, tier: 1, members: [{type: Node, regexMatch: "^gpu-[0-3]$"},
//                                     {type: Node, labelMatch: {rack: r0}}]}
// Each node gets the label topology.gantry.dev/hypernode-tier-T = the HyperNode of tier T
// that holds it; without topologyKeys those labels, highest tier first, are the levels.
// A HyperNode the tree cannot use (a cycle, a member of a tier not below its own, a bad
// pattern) is an error naming it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "model/cluster.h"
#include "model/status.h"
#include "sim/yaml_reader.h"

namespace gantry {

// topologyKeys: a list of distinct label keys.
// REQUIRES: no node added to `cluster` yet.
Status ParseTopologyKeys(const YamlReader& r, const YAML::Node& keys, ClusterState* cluster);

// A job's `topology:` against the cluster's levels and nodes.
Status ParseJobTopology(const YamlReader& r, const YAML::Node& topology, const std::string& field,
                        const ClusterState& cluster, TopologyRequest* out);

// hyperNodes: labels the cluster's nodes, and sets the levels when `keys_given` is false.
Status ParseHyperNodes(const YamlReader& r, const YAML::Node& hypernodes, bool keys_given,
                       ClusterState* cluster);

}  // namespace gantry

// A scenario's topology: the levels, and the jobs that stay inside one domain of one.
//   topologyKeys: [block, spine, leaf]      # node label keys, outermost first (default:
//                                           # zone, spine, rack; see ClusterState)
//   jobs:
//     - name: train
//       topology: {required: leaf}          # the whole gang inside one leaf, or not at all
//       topology: {preferred: spine}        # the tightest of spine and the levels above
// A level must be one of topologyKeys and be the label of some node.
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

}  // namespace gantry

// Reading a cluster for the simulator: an openb node-list CSV or the nodes of a scenario.
#pragma once

#include <string>

#include "model/cluster.h"

namespace gantry {

// A ClusterState with the file's nodes only. CSV when the first line is the openb node
// header (sn,cpu_milli,...), else a scenario YAML (its other sections are ignored).
Result<ClusterState> LoadClusterFile(const std::string& path);

}  // namespace gantry

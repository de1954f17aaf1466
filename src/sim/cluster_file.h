// Reading a cluster for the simulator: an openb node-list CSV or the nodes of a scenario.
#pragma once

#include <string>

#include "model/cluster.h"

namespace gantry {

// A ClusterState with the file's nodes only: an openb node list when the file reads as
// CSV (LooksLikeCsv: its first line has a comma and no ':'; then it must have the header
// sn,cpu_milli,memory_mib,gpu,model), else a scenario YAML (its other sections are
// ignored). Files above kMaxInputFileBytes are refused.
Result<ClusterState> LoadClusterFile(const std::string& path);

}  // namespace gantry

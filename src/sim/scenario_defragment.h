// The scenario format's part in defragmentation: the defragment action's memory of its
// recent evictions, which its budget counts (`recentDefragmentEvictions`). Which tasks are
// movable is read with the jobs and queues (`movable: true`, scenario_reader.cc).
#pragma once

#include "model/cluster.h"
#include "sim/yaml_reader.h"

namespace gantry {

// recentDefragmentEvictions: [600, 1800]: evictions the action made that many seconds
// before the session (at time 0), each 0 to kMaxConfiguredSeconds; at most
// kMaxDefragmentEvictionsPerHour of them.
Status ParseRecentDefragmentEvictions(const YamlReader& r, const YAML::Node& list,
                                      ClusterState* cluster);

}  // namespace gantry

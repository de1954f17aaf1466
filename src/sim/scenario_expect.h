// A scenario's `expect:` section, read from the file; CheckExpectations (sim/scenario.h)
// holds a session's decisions against it.
#pragma once

#include <yaml-cpp/yaml.h>

#include "model/cluster.h"
#include "model/status.h"
#include "sim/scenario.h"
#include "sim/yaml_reader.h"

namespace gantry {

// Reads `expect:`; every job, node, task and queue it names must be in `cluster`.
Status ParseExpectations(const YamlReader& r, const YAML::Node& expect, const ClusterState& cluster,
                         ScenarioExpectations* out);

}  // namespace gantry

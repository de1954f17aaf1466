// A scenario's `nodes:` list (the scenario format, README.md): each node by name, or
// `count` of them named namePrefix0, namePrefix1, ...; its allocatable, GPUs (count, model,
// memory, NVLink domains, MIG), labels, taints, CSI drivers and attachments, NUMA zones and
// cached datasets. Read by sim/scenario_reader.cc.
#pragma once

#include <yaml-cpp/yaml.h>

#include "model/cluster.h"
#include "model/status.h"
#include "sim/yaml_reader.h"

namespace gantry {

// Adds the list's nodes to `cluster`, after checking that they are at most kMaxNodes in
// all (namePrefix's counts included) before any is built.
Status ParseNodes(const YamlReader& r, const YAML::Node& nodes, ClusterState* cluster);

}  // namespace gantry

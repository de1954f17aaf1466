// A scenario node's MIG layout, under its gpus:
//   gpus: {count: 8, model: A100-SXM4-80GB, memoryMiB: 81920,
//          mig: {strategy: mixed, perGpu: {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}, gpus: 4}}
// strategy: mixed (default): `gpus` of the node's GPUs (default all) are cut, each into
// the devices of perGpu, advertised as nvidia.com/mig-<profile>; the rest stay whole.
// strategy: single: every GPU is cut into perGpu's one profile and nvidia.com/gpu counts
// the devices (their model is "<model>-MIG-<profile>"). `state` sets
// nvidia.com/mig.config.state (default success). The node gets the labels GPU feature
// discovery writes (nvidia.com/mig.strategy, nvidia.com/gpu.product), so that it reads as
// a node from the API server does.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "model/cluster.h"
#include "model/status.h"
#include "sim/yaml_reader.h"

namespace gantry {

// REQUIRES: node->gpus holds the node's `gpus.count` whole devices, of one model.
Status ParseNodeMig(const YamlReader& r, const YAML::Node& mig, const std::string& field,
                    Node* node);

}  // namespace gantry

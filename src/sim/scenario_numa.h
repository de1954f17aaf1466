// NUMA in the scenario format (model/numa.h).
// A node's NUMA nodes and its topology manager's policy, as its NodeResourceTopology says:
//   numa: {policy: single-numa-node, scope: pod,
//          zones: [{cpu: "32", memory: 256Gi, nvidia.com/gpu: 4},
//                  {cpu: "32", memory: 256Gi, nvidia.com/gpu: 4}]}
// Zones are NUMA nodes 0, 1, ... in order; each lists what it can hold (nvidia.com/gpu
// counts the node's GPUs on it, in device order). policy: none, best-effort, restricted or
// single-numa-node (default single-numa-node); scope: container (default) or pod.
// A task's QoS class:
//   guaranteed: true                      the pod is in the Guaranteed QoS class
// and its containers (sim/scenario_pod_requests.h), each aligned on its own under the
// container scope.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "model/cluster.h"
#include "model/status.h"
#include "sim/yaml_reader.h"

namespace gantry {

// REQUIRES: node->gpus holds the node's devices.
Status ParseNodeNuma(const YamlReader& r, const YAML::Node& numa, const std::string& field,
                     Node* node);

// Reads the task's `guaranteed` key, when present, into spec->numa. REQUIRES: `t` is the
// task's mapping.
Status ParseTaskNuma(const YamlReader& r, const YAML::Node& t, const std::string& field,
                     TaskSpec* spec);

}  // namespace gantry

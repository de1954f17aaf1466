// A scenario's datasets (issue 13, dataset locality; model/datasets.h):
//   datasets:                                # what is known of them (all optional)
//     - {name: ml/imagenet, size: 150Gi, warmupSeconds: 600}
//   nodes:
//     - {name: gpu-0, ..., cachedDatasets: [ml/imagenet]}   # or Fluid's label:
//     - {name: gpu-1, ..., labels: {fluid.io/s-ml-imagenet: "true"}}
//   jobs:
//     - tasks: [{..., datasets: [ml/imagenet, coco]}]       # bare: the task's namespace
// size is a quantity of bytes (200Gi, 1.5T, 52.18GiB); warmupSeconds is the simulator's
// time to fill a node's cache with it (else size / the simulator's bandwidth); uid is a
// Fluid Dataset's metadata.uid, for the label of a name too long for fluid.io/s-<ns>-<name>.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/status.h"
#include "sim/yaml_reader.h"

namespace gantry {

// datasets: the cluster's table of what is known of them (ClusterState::SetDatasets).
Status ParseDatasets(const YamlReader& r, const YAML::Node& datasets, ClusterState* cluster);

// A list of dataset names (a task's datasets, a node's cachedDatasets): each checked where
// it is written; bare names are in `default_namespace` ("" refuses them). Sorted, each
// once, at most `max`.
Status ParseDatasetNames(const YamlReader& r, const YAML::Node& names, const std::string& field,
                         const std::string& default_namespace, size_t max,
                         std::vector<std::string>* out);

}  // namespace gantry

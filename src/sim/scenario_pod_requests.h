// What a scenario's task asks of a node, counted by the same function as the daemon
// counts a pod (model/pod_requests.h). In Kubernetes' names:
//   requests: {cpu: "4", memory: 8Gi, nvidia.com/gpu: 1}      one container's requests, or
//   containers: [{cpu: "4", memory: 8Gi}, {cpu: "1"}]         each container's (NUMA aligns
//                                                             each under the container scope);
//   initContainers: [{requests: {cpu: "2"}, restartPolicy: Always}, {requests: {cpu: "8"}}]
//                                                             sidecars (restartPolicy Always)
//                                                             run beside the containers; an
//                                                             init container runs alone
//                                                             beside the sidecars before it;
//   podResources: {cpu: "6", memory: 16Gi}                    pod-level spec.resources
//                                                             requests: cpu, memory,
//                                                             hugepages-* only;
//   overhead: {cpu: 250m, memory: 120Mi}                      the RuntimeClass's overhead.
// `requests` and `containers` exclude each other; the rest go with either.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "model/status.h"
#include "model/task_spec.h"
#include "sim/yaml_reader.h"

namespace gantry {

// Reads those keys of the task into spec->requests (and, with several containers,
// spec->numa.containers). REQUIRES: `t` is the task's mapping.
Status ParseTaskRequests(const YamlReader& r, const YAML::Node& t, const std::string& field,
                         TaskSpec* spec);

}  // namespace gantry

// A scenario job whose tasks form a tree of groups (Kubernetes' CompositePodGroup; see
// model/group_tree.h):
//   jobs:
//     - name: serve
//       groups:                                   # the root first, parents before children
//         - {name: all, minGroups: 2}             # an inner group: 2 of its children ready
//         - {name: replica-0, parent: all, minMember: 2}   # a leaf: 2 of its tasks placed
//         - {name: replica-1, parent: all, minMember: 2}
//       tasks:
//         - {role: r0, replicas: 2, group: replica-0, requests: {nvidia.com/gpu: 1}}
// Every task of such a job names a leaf (`group`); its minMember is the fewest tasks that
// make the root ready, and may not be given.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "model/group_tree.h"
#include "model/status.h"
#include "sim/yaml_reader.h"

namespace gantry {

// A job's `groups:`, as a valid tree.
Status ParseJobGroups(const YamlReader& r, const YAML::Node& groups, const std::string& field,
                      std::vector<TaskGroup>* out);

// A task entry's `group:` (`task` is the entry, `field` its place): the index of that leaf
// of `groups`. An error when the job has groups and the entry names none, or names one
// that is not a leaf, or the job has none and it names one.
Status ParseTaskGroup(const YamlReader& r, const YAML::Node& task, const std::string& field,
                      const std::vector<TaskGroup>& groups, int32_t* out);

}  // namespace gantry

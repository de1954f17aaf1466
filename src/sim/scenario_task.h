// A scenario task's keys (role, replicas, requests, GPUs, priority, selectors, pod spec
// fields): shared by jobs' tasks and snapshots' arrivals and profile.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

#include "model/task_spec.h"
#include "sim/yaml_reader.h"

namespace gantry {

// Reads one task mapping into `spec` and its replica count. The job's priority and
// preemption policy are the defaults its own keys override.
Status ParseTaskSpec(const YamlReader& r, const YAML::Node& t, const std::string& f,
                     int32_t job_priority, PreemptionPolicy job_policy, TaskSpec* spec,
                     int64_t* replicas);

// preemptionPolicy: PreemptLowerPriority (the default) or Never, as a PriorityClass says
// (a job's, or one task's).
Status ParsePreemptionPolicy(const YamlReader& r, const YAML::Node& n, const std::string& f,
                             PreemptionPolicy* out);

}  // namespace gantry

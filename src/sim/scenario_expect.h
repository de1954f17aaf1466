// A scenario's `expect:` section: read from the file (ParseExpectations, for
// sim/scenario_reader.cc), and a session's decisions held against it (CheckExpectations).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "engine/decisions.h"
#include "model/cluster.h"
#include "model/status.h"
#include "sim/scenario.h"
#include "sim/yaml_reader.h"

namespace gantry {

// Reads `expect:`; every job, node, task and queue it names must be in `cluster`.
Status ParseExpectations(const YamlReader& r, const YAML::Node& expect, const ClusterState& cluster,
                         ScenarioExpectations* out);

struct PendingExplanation;  // engine/explain.h

// Checks decisions against the scenario's expectations. Returns one line per unmet
// expectation ("job train-1: expected 4 placed, got 0"); empty when all are met.
// `explanations`: the session's (engine/explain.h), for expect.explain; null: none.
std::vector<std::string> CheckExpectations(
    const Scenario& scenario, const Decisions& decisions,
    const std::vector<PendingExplanation>* explanations = nullptr);

}  // namespace gantry

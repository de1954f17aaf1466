// A session's decisions as JSON (`gantry schedule --format json`), by name: binds,
// evictions, pipelined tasks and pending jobs, each an array (empty when there are none).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/decisions.h"
#include "model/cluster.h"

namespace gantry {

// `decisions` came from a session on `cluster`: its ids are the cluster's.
nlohmann::ordered_json DecisionsJson(const ClusterState& cluster, const Decisions& decisions);

}  // namespace gantry

// The report's fairness section for replays with queues: per run, each queue's share of the
// GPUs against its deserved share over time, Jain's index over time, and per queue its
// waits, completion times and evictions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gantry {

// HTML for the runs of `summary` that have two queues or more (summary.json's "queues" and
// "queue_series"); "" when none has. Values of the wrong type are skipped.
std::string RenderFairnessHtml(const nlohmann::ordered_json& summary);

}  // namespace gantry

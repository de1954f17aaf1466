// The simulator's report: one self-contained HTML5 page (inline CSS, inline SVG charts, no
// scripts, no network) from the JSON that `gantry sim` writes. It reads what is there and
// leaves out what is not: a table or chart appears only when the input has data for it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

// The chart helper and HtmlEscape live there; included so that users of this header keep
// seeing them.
#include "sim/svg_chart.h"

namespace gantry {

// `summary`: {"title", "cluster", "workload", "protocol", "runs": [...], "by_policy": {...},
// "published": {...}}; `timeseries`: rows {"policy", "seed", "t", "gpu_alloc_pct",
// "gpu_util_pct", "queue_len", "running_tasks"}, empty for protocol runs. Every key is
// optional; values of the wrong type are ignored rather than thrown on.
std::string RenderHtmlReport(const nlohmann::ordered_json& summary,
                             const nlohmann::ordered_json& timeseries);

}  // namespace gantry

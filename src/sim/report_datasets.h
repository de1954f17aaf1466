// What `gantry sim` reports of dataset locality (issue 13): per replay run, the reads of
// datasets, how many found their data cached, and the warm-up paid; and, where the run was
// repeated without the datalocality plugin, that run's warm-up and what locality saved.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/replay.h"

namespace gantry {

// summary.json's "datasets" of a run; null when its jobs read none.
nlohmann::ordered_json DatasetsJson(const ReplayResult& r);
// The terminal's line for a run; "" when its jobs read none.
std::string DatasetsLine(const std::string& policy, uint64_t seed, const ReplayResult& r);
// The report's section over the runs of `summary` that read datasets; "" when none did.
// Values of the wrong type are skipped.
std::string RenderDatasetsHtml(const nlohmann::ordered_json& summary);

}  // namespace gantry

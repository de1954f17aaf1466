// The report's topology section: per run, the domains of each topology level that gangs
// spanned as they started (summary.json's "gang_spans").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gantry {

// HTML for the runs of `summary` whose gangs were counted; "" when none was. Values of the
// wrong type are skipped.
std::string RenderTopologyHtml(const nlohmann::ordered_json& summary);

}  // namespace gantry

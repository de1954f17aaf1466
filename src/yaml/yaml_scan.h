// The first check of YAML text (yaml/yaml_load.h), before yaml-cpp sees it: yaml-cpp's
// scanner keeps every token of an open bracket (10 MB of "[" took 2.4 GB and 7 s before it
// said "bad file"), so nesting and size are bounded by a linear scan of the text first,
// with memory in proportion to the nesting.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/status.h"

namespace gantry {

// An error "SOURCE:LINE:COL: ..." where the text nests deeper than kMaxYamlDepth or holds
// more than kMaxYamlNodes values. It follows YAML's structure closely enough not to count
// brackets in quotes, comments or block scalars; it may count fewer levels than there are
// (the exact count on yaml-cpp's events comes after), never more for valid YAML but for a
// plain scalar continued over lines of a flow collection, each of which counts as a value.
Status ScanYamlText(std::string_view text, const std::string& source);

// The messages of the limits, shared with the exact check.
std::string YamlDepthMessage();
std::string YamlNodesMessage();
std::string YamlAliasesMessage(int64_t aliased, int64_t nodes);

// Of a file of `nodes` nodes, how many thousandths may be reached through aliases
// (kYamlAliasRatioLowNodes in model/limits.h).
int64_t AllowedAliasPermille(int64_t nodes);

}  // namespace gantry

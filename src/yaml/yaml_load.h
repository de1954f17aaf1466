// The one way Gantry loads YAML (scenarios, configurations, manifests, kubeconfigs), so
// that no YAML text, however large or hostile, takes unbounded memory, time or stack in
// yaml-cpp or in the recursive walks of its tree, and so that what YAML leaves loose is
// an error. Before yaml-cpp builds a tree, the text is checked for:
//   - its size: at most kMaxInputFileBytes;
//   - nesting: at most kMaxYamlDepth levels of lists and mappings (aliases expanded),
//     first by a linear scan of the text (yaml-cpp's scanner keeps every token of an
//     open bracket: 10 MB of "[" took 2.4 GB), then exactly;
//   - size with aliases expanded: at most kMaxYamlNodes nodes;
//   - keys: none twice in one mapping, and each a single value (not a list or mapping);
//   - aliases: none inside the node it names (a cycle).
// A UTF-8 byte-order mark is skipped. Errors read "SOURCE:LINE:COL: what".
// Text only: callers read files (bounded by CheckInputSize). The engine never includes this
// (it receives parsed configurations: yaml/scheduler_config_yaml.h reads its own).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/input_file.h"
#include "model/quote.h"  // QuoteForMessage: every YAML reader's messages quote alike
#include "model/status.h"

namespace gantry {

// Every non-empty document of `text` (a document of nothing, or only comments, is left
// out); each root's Mark() is where its document starts.
Result<std::vector<YAML::Node>> ParseYamlNodes(std::string_view text, const std::string& source);

// The one document of a file that holds one (a scenario, a configuration, a kubeconfig):
// a null node when the text has none, an error naming the line when it has a second.
Result<YAML::Node> ParseYamlNode(std::string_view text, const std::string& source);

// "SOURCE:LINE:COL: field" for messages about a node (just "SOURCE: field" when the node
// has no position, e.g. one that is missing).
std::string YamlWhere(const std::string& source, const YAML::Node& node, const std::string& field);
// Status::Invalid("SOURCE:LINE:COL: field: what").
Status YamlError(const std::string& source, const YAML::Node& node, const std::string& field,
                 const std::string& what);

// Where the schema wants an integer: a plain (unquoted) decimal integer, [-+]?[0-9]+,
// between min and max. " 3", "3.0", "0x3" and the quoted "3" are errors that say so.
Status ReadYamlInt(const YAML::Node& node, const std::string& source, const std::string& field,
                   int64_t min, int64_t max, int64_t* out);
// Where the schema wants a boolean: a plain true or false (not "true", quoted).
Status ReadYamlBool(const YAML::Node& node, const std::string& source, const std::string& field,
                    bool* out);

// YAML 1.2 core schema's plain numbers, matched by hand (linear time, no recursion, unlike
// std::regex, which overflowed the stack on 100,000 digits).
bool IsYamlDecimalInt(std::string_view text);  // [-+]?[0-9]+
bool IsYamlOctalInt(std::string_view text);    // 0o[0-7]+
bool IsYamlHexInt(std::string_view text);      // 0x[0-9a-fA-F]+
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsYamlFloat(std::string_view text);

// Whether a scalar was written in quotes (or as a block scalar): a string, whatever it
// looks like.
bool IsQuotedScalar(const YAML::Node& node);

}  // namespace gantry

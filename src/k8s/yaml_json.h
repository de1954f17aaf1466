// Kubernetes manifests are YAML; the API speaks JSON. Converts one to the other with
// YAML 1.2's core schema for plain scalars (quoted scalars stay strings).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "model/status.h"

namespace YAML {
class Node;
}

namespace gantry::k8s {

nlohmann::json YamlToJson(const YAML::Node& node);

// One YAML document of a file, as JSON, with the line it starts on.
struct YamlDocument {
  int line = 0;
  nlohmann::json object;
};

// Every non-empty document of a file. Errors name the file, line and column.
Result<std::vector<YamlDocument>> LoadYamlDocuments(const std::string& path);
// The same from text; `source` names it in errors.
Result<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text,
                                                     const std::string& source);

}  // namespace gantry::k8s

// Kubernetes manifests are YAML; the API speaks JSON. Converts one to the other with
// YAML 1.2's core schema for plain scalars (quoted scalars stay strings).
#pragma once

#include <map>
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
  // The lines of the values of the top-level keys and of their keys, by JSON pointer
  // ("/kind", "/metadata/name"), for messages about them.
  std::map<std::string, int> lines;

  // The line of the value at `pointer`, or the document's when it has none.
  int LineOf(const std::string& pointer) const;
};

// Every non-empty document of a text, loaded with ParseYamlNodes (yaml/yaml_load.h: its
// limits, no duplicate keys). Errors name `source`, the line and the column.
Result<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text,
                                                     const std::string& source);
// The same from a file.
Result<std::vector<YamlDocument>> LoadYamlDocuments(const std::string& path);

}  // namespace gantry::k8s

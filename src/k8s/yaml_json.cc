#include "k8s/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

json ScalarToJson(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted: a string whatever it looks like
  if (text == "null" || text == "Null" || text == "NULL" || text == "~" || text.empty())
    return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(text, kInt)) {
    try {
      return std::stoll(text);
    } catch (const std::out_of_range&) {
      return text;
    }
  }
  // The core schema's other integers: 0o17 (octal) and 0x1F (hexadecimal).
  static const std::regex kOct("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  const bool oct = std::regex_match(text, kOct);
  if (oct || std::regex_match(text, kHex)) {
    try {
      return std::stoll(text.substr(2), nullptr, oct ? 8 : 16);
    } catch (const std::out_of_range&) {
      return text;
    }
  }
  if (std::regex_match(text, kFloat)) {
    try {
      return std::stod(text);
    } catch (const std::out_of_range&) {
      return text;  // 1e400 has no JSON number; keep the text, as for huge integers
    }
  }
  return text;
}

}  // namespace

json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const YAML::Node& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) out[kv.first.Scalar()] = YamlToJson(kv.second);
      return out;
    }
    default:
      return nullptr;
  }
}

Result<std::vector<YamlDocument>> LoadYamlDocuments(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot read it");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseYamlDocuments(buffer.str(), path);
}

Result<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text,
                                                     const std::string& source) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::Invalid(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  std::vector<YamlDocument> out;
  for (const YAML::Node& doc : docs) {
    if (!doc || doc.IsNull()) continue;
    out.push_back({doc.Mark().line + 1, YamlToJson(doc)});
  }
  return out;
}

}  // namespace gantry::k8s

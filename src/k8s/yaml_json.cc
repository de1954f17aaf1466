#include "k8s/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include "model/limits.h"
#include "yaml/yaml_load.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// An integer of the core schema in `base` (digits from `first`), or the text when it does
// not fit int64 (JSON has no such number).
json IntegerOrText(const std::string& text, size_t first, int base) {
  if (first < text.size() && text[first] == '+') ++first;
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data() + first, end, value, base);
  if (error != std::errc() || stop != end) return text;
  return value;
}

json ScalarToJson(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (IsQuotedScalar(node)) return text;  // quoted: a string whatever it looks like
  if (text == "null" || text == "Null" || text == "NULL" || text == "~" || text.empty())
    return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (IsYamlDecimalInt(text)) return IntegerOrText(text, 0, 10);
  // The core schema's other integers: 0o17 (octal) and 0x1F (hexadecimal).
  if (IsYamlOctalInt(text)) return IntegerOrText(text, 2, 8);
  if (IsYamlHexInt(text)) return IntegerOrText(text, 2, 16);
  if (IsYamlFloat(text)) {
    errno = 0;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    // 1e400 has no JSON number (nor has 1e-400 one that is not 0); keep the text, as for
    // huge integers.
    if (errno == ERANGE || end != text.c_str() + text.size()) return text;
    return value;
  }
  return text;
}

std::string PointerToken(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// The lines of the top-level values and of theirs (two levels), by JSON pointer.
void CollectLines(const YAML::Node& node, const std::string& prefix, int levels,
                  std::map<std::string, int>* out) {
  if (levels == 0 || !node.IsMap()) return;
  for (const auto& kv : node) {
    const std::string pointer = prefix + "/" + PointerToken(kv.first.Scalar());
    (*out)[pointer] = kv.second.Mark().line + 1;
    CollectLines(kv.second, pointer, levels - 1, out);
  }
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

int YamlDocument::LineOf(const std::string& pointer) const {
  auto it = lines.find(pointer);
  return it == lines.end() || it->second <= 0 ? line : it->second;
}

Result<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text,
                                                     const std::string& source) {
  auto nodes = ParseYamlNodes(text, source);
  if (!nodes.ok()) return nodes.status();
  std::vector<YamlDocument> out;
  out.reserve(nodes->size());
  for (const YAML::Node& doc : *nodes) {
    YamlDocument d;
    d.line = doc.Mark().line + 1;
    d.object = YamlToJson(doc);
    CollectLines(doc, "", 2, &d.lines);
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<YamlDocument>> LoadYamlDocuments(const std::string& path) {
  auto text = ReadInputFile(path);
  if (!text.ok()) return text.status();
  return ParseYamlDocuments(*text, path);
}

}  // namespace gantry::k8s

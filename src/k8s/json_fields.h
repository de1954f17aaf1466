// Reading fields of the API's JSON leniently: a missing or mistyped field reads as null
// or empty, and the readers say what they expected where it matters.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/labels.h"

namespace gantry::k8s {

// object[key], or null when object is not an object or has no such key.
inline const nlohmann::json& Field(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;  // immutable: a shared null, not state
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// object[key] when it is a string, else "".
inline std::string String(const nlohmann::json& object, const char* key) {
  const nlohmann::json& v = Field(object, key);
  return v.is_string() ? v.get<std::string>() : "";
}

// A key or value as messages quote it: printable, and at most 100 bytes of it.
inline std::string KeyText(const std::string& text) {
  constexpr size_t kMax = 100;
  std::string out;
  for (char c : text.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > kMax ? out + "..." : out;
}

// A map of strings as labels (other values are skipped: the API server allows none).
inline Labels LabelsOf(const nlohmann::json& map) {
  Labels labels;
  if (!map.is_object()) return labels;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it.value().is_string()) labels.Set(it.key(), it.value().get<std::string>());
  }
  return labels;
}

}  // namespace gantry::k8s

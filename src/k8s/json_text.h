// JSON as text, whatever its strings hold. nlohmann::json's dump() throws on a string
// that is not UTF-8 (a name cut in the middle of a character, bytes from a file); every
// dump of data that came from outside goes through here, which writes U+FFFD instead.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace gantry::k8s {

template <typename Json>
std::string JsonText(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The first `max_bytes` bytes of JsonText(value), written without writing the rest: what an
// error message quotes of an object that may be as large as the input (a list of a million
// items costs a million items to write out, for 120 bytes of message).
template <typename Json>
void AppendJsonPrefix(const Json& value, size_t max_bytes, std::string* out) {
  if (out->size() >= max_bytes) return;
  if (value.is_object()) {
    out->push_back('{');
    bool first = true;
    for (auto it = value.begin(); it != value.end() && out->size() < max_bytes; ++it) {
      if (!first) out->push_back(',');
      first = false;
      *out += JsonText(Json(it.key()));
      out->push_back(':');
      AppendJsonPrefix(it.value(), max_bytes, out);
    }
    out->push_back('}');
  } else if (value.is_array()) {
    out->push_back('[');
    bool first = true;
    for (auto it = value.begin(); it != value.end() && out->size() < max_bytes; ++it) {
      if (!first) out->push_back(',');
      first = false;
      AppendJsonPrefix(*it, max_bytes, out);
    }
    out->push_back(']');
  } else {
    *out += JsonText(value);
  }
}

template <typename Json>
std::string JsonPrefix(const Json& value, size_t max_bytes) {
  std::string out;
  AppendJsonPrefix(value, max_bytes, &out);
  if (out.size() > max_bytes) out.resize(max_bytes);
  return out;
}

}  // namespace gantry::k8s

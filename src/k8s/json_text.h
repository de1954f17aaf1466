// JSON as text, whatever its strings hold. nlohmann::json's dump() throws on a string
// that is not UTF-8 (a name cut in the middle of a character, bytes from a file); every
// dump of data that came from outside goes through here, which writes U+FFFD instead.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gantry::k8s {

template <typename Json>
std::string JsonText(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gantry::k8s

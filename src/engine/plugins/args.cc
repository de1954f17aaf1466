#include "engine/plugins/args.h"

#include <charconv>

namespace gantry {

Status PluginArgs::Int(const std::string& key, int64_t* out) {
  taken_.insert(key);
  auto it = config_.arguments.find(key);
  if (it == config_.arguments.end()) return Status::Ok();
  const std::string& text = it->second.scalar();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!it->second.is_scalar() || ec != std::errc() || end != text.data() + text.size() ||
      value < 0) {
    return Status::Invalid("plugin " + config_.name + ": argument " + key +
                           " must be a non-negative integer, got \"" + it->second.Text() + "\"");
  }
  *out = value;
  return Status::Ok();
}

std::vector<std::string> PluginArgs::Rest() const {
  std::vector<std::string> rest;
  for (const auto& [k, v] : config_.arguments) {
    if (!taken_.count(k)) rest.push_back(k);
  }
  return rest;
}

Status PluginArgs::CheckAllTaken() const {
  for (const auto& [k, v] : config_.arguments) {
    if (!taken_.count(k)) {
      std::string known;
      for (const std::string& t : taken_) known += (known.empty() ? "" : ", ") + t;
      return Status::Invalid("plugin " + config_.name + ": unknown argument \"" + k + "\"" +
                             (known.empty() ? " (it takes none)" : " (known: " + known + ")"));
    }
  }
  return Status::Ok();
}

}  // namespace gantry

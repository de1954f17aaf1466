#include "model/volume_topology.h"

#include <algorithm>

namespace gantry {
namespace {

constexpr std::string_view kDelimiter = "__";

std::string_view Trimmed(std::string_view s) {
  const auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view GaKeyOf(std::string_view key) {
  if (key == kBetaZoneLabel) return kZoneLabel;
  if (key == kBetaRegionLabel) return kRegionLabel;
  return key;
}

}  // namespace

bool ParseVolumeZones(std::string_view value, std::vector<std::string>* out) {
  out->clear();
  for (;;) {
    const size_t at = value.find(kDelimiter);
    const std::string_view part = Trimmed(value.substr(0, at));
    if (part.empty()) {
      out->clear();
      return false;
    }
    out->emplace_back(part);
    if (at == std::string_view::npos) break;
    value.remove_prefix(at + kDelimiter.size());
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return true;
}

bool VolumeZonesAllow(const std::vector<VolumeTopology>& zones, const Labels& node_labels) {
  if (zones.empty()) return true;
  const bool node_has_topology =
      std::any_of(kVolumeTopologyKeys.begin(), kVolumeTopologyKeys.end(),
                  [&](std::string_view key) { return node_labels.Find(key) != nullptr; });
  if (!node_has_topology) return true;
  for (const VolumeTopology& zone : zones) {
    const std::string* value = node_labels.Find(zone.key);
    if (value == nullptr) value = node_labels.Find(GaKeyOf(zone.key));
    if (value == nullptr || !std::binary_search(zone.values.begin(), zone.values.end(), *value)) {
      return false;
    }
  }
  return true;
}

}  // namespace gantry

#include "sim/scenario_topology.h"

#include <algorithm>
#include <vector>

#include "engine/yaml_load.h"
#include "model/limits.h"

namespace gantry {

Status ParseTopologyKeys(const YamlReader& r, const YAML::Node& keys, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(keys, "topologyKeys"));
  std::vector<std::string> out;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string field = "topologyKeys[" + std::to_string(i) + "]";
    std::string key;
    GANTRY_RETURN_IF_ERROR(r.LabelKey(keys[i], field, &key));
    if (std::find(out.begin(), out.end(), key) != out.end()) {
      return r.Error(keys[i], field, "duplicate topology level " + QuoteForMessage(key));
    }
    out.push_back(std::move(key));
  }
  if (out.size() > static_cast<size_t>(kMaxTopologyLevels)) {
    return r.Error(keys, "topologyKeys",
                   std::to_string(out.size()) + " levels, more than the " +
                       std::to_string(kMaxTopologyLevels) + " a cluster may have");
  }
  cluster->SetTopologyKeys(std::move(out));
  return Status::Ok();
}

Status ParseJobTopology(const YamlReader& r, const YAML::Node& topology, const std::string& field,
                        const ClusterState& cluster, TopologyRequest* out) {
  GANTRY_RETURN_IF_ERROR(r.Map(topology, field, {"required", "preferred"}));
  if (topology["required"] && topology["preferred"]) {
    return r.Error(topology, field, "either required or preferred, not both");
  }
  const bool required = static_cast<bool>(topology["required"]);
  const YAML::Node& value = required ? topology["required"] : topology["preferred"];
  const std::string value_field = field + (required ? ".required" : ".preferred");
  if (!value) return r.Error(topology, field, "required or preferred: a topology level");
  std::string level;
  GANTRY_RETURN_IF_ERROR(r.LabelKey(value, value_field, &level));
  const std::vector<std::string>& keys = cluster.topology_keys();
  const auto at = std::find(keys.begin(), keys.end(), level);
  if (at == keys.end()) {
    std::string known;
    for (const std::string& k : keys) known += (known.empty() ? "" : ", ") + k;
    return r.Error(value, value_field,
                   "unknown topology level " + QuoteForMessage(level) +
                       " (topologyKeys: " + (known.empty() ? "none" : known) + ")");
  }
  const size_t index = static_cast<size_t>(at - keys.begin());
  const bool some_node = std::any_of(
      cluster.nodes().begin(), cluster.nodes().end(),
      [&](const Node& n) { return index < n.topology.size() && !n.topology[index].empty(); });
  if (!some_node) {
    return r.Error(value, value_field,
                   "no node has the label " + QuoteForMessage(level) + " of this topology level");
  }
  out->level = std::move(level);
  out->required = required;
  return Status::Ok();
}

}  // namespace gantry

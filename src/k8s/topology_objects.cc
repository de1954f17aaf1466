#include "k8s/topology_objects.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "model/limits.h"

namespace gantry::k8s {

Result<KueueTopologyInfo> ParseKueueTopology(const nlohmann::json& object) {
  auto meta = NamedMeta(object, "topology");
  if (!meta.ok()) return meta.status();
  KueueTopologyInfo topology;
  topology.meta = std::move(meta).value();
  const std::string where = "topology " + topology.meta.name + ": spec.levels";
  const nlohmann::json& levels = Field(Field(object, "spec"), "levels");
  if (!levels.is_array() || levels.empty() ||
      levels.size() > static_cast<size_t>(kMaxTopologyLevels)) {
    return Status::Invalid(where + ": expected a list of 1 to " +
                           std::to_string(kMaxTopologyLevels) + " levels");
  }
  for (size_t i = 0; i < levels.size(); ++i) {
    const std::string field = where + "[" + std::to_string(i) + "].nodeLabel";
    const nlohmann::json& label = Field(levels[i], "nodeLabel");
    if (!label.is_string() || label.get<std::string>().empty()) {
      return Status::Invalid(field + ": expected a node label key");
    }
    std::string key = label.get<std::string>();
    if (std::find(topology.levels.begin(), topology.levels.end(), key) != topology.levels.end()) {
      return Status::Invalid(field + ": \"" + key.substr(0, 64) + "\" is given twice");
    }
    topology.levels.push_back(std::move(key));
  }
  return topology;
}

}  // namespace gantry::k8s

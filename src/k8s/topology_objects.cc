#include "k8s/topology_objects.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/pod_rules.h"
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

Result<HyperNodeInfo> ParseHyperNode(const nlohmann::json& object) {
  auto meta = NamedMeta(object, "hypernode");
  if (!meta.ok()) return meta.status();
  HyperNodeInfo info;
  info.meta = std::move(meta).value();
  info.hypernode.name = info.meta.name;
  const std::string where = "hypernode " + info.meta.name + ": spec";
  const nlohmann::json& spec = Field(object, "spec");
  const nlohmann::json& tier = Field(spec, "tier");
  if (!tier.is_number_integer() || tier.get<int64_t>() < 1 ||
      tier.get<int64_t>() > kMaxTopologyLevels) {
    return Status::Invalid(where + ".tier: expected an integer from 1 to " +
                           std::to_string(kMaxTopologyLevels));
  }
  info.hypernode.tier = static_cast<int32_t>(tier.get<int64_t>());
  const nlohmann::json& members = Field(spec, "members");
  if (members.is_null()) return info;
  if (!members.is_array() || members.size() > kMaxHyperNodeMembers) {
    return Status::Invalid(where + ".members: expected a list of at most " +
                           std::to_string(kMaxHyperNodeMembers) + " members");
  }
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string at = where + ".members[" + std::to_string(i) + "]";
    HyperNodeMember m;
    const std::string type = String(members[i], "type");
    if (type != "Node" && type != "HyperNode") {
      return Status::Invalid(at + ".type: \"" + type.substr(0, 64) + "\" is not Node or HyperNode");
    }
    m.hypernode = type == "HyperNode";
    const nlohmann::json& selector = Field(members[i], "selector");
    const int given = selector.contains("exactMatch") + selector.contains("regexMatch") +
                      selector.contains("labelMatch");
    if (!selector.is_object() || given != 1) {
      return Status::Invalid(at + ".selector: expected one of exactMatch, regexMatch, labelMatch");
    }
    if (selector.contains("exactMatch")) {
      m.exact = String(Field(selector, "exactMatch"), "name");
      if (m.exact.empty()) return Status::Invalid(at + ".selector.exactMatch.name: required");
    } else if (selector.contains("regexMatch")) {
      m.pattern = String(Field(selector, "regexMatch"), "pattern");
      if (m.pattern.empty() || m.pattern.size() > 1024) {
        return Status::Invalid(at + ".selector.regexMatch.pattern: expected 1 to 1024 bytes");
      }
    } else {
      GANTRY_RETURN_IF_ERROR(
          ParseLabelSelector(selector, "labelMatch", at + ".selector", &m.labels));
      if (!m.labels) m.labels = LabelSelector{};
    }
    info.hypernode.members.push_back(std::move(m));
  }
  return info;
}

}  // namespace gantry::k8s

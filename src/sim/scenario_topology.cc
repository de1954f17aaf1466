#include "sim/scenario_topology.h"

#include <algorithm>
#include <vector>

#include "model/hypernodes.h"
#include "model/limits.h"
#include "yaml/yaml_load.h"

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

Status ParseHyperNodes(const YamlReader& r, const YAML::Node& hypernodes, bool keys_given,
                       ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(hypernodes, "hyperNodes"));
  std::vector<HyperNode> all;
  std::vector<YAML::Node> where;  // for errors, by name
  for (size_t i = 0; i < hypernodes.size(); ++i) {
    const YAML::Node& h = hypernodes[i];
    const std::string f = "hyperNodes[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(h, f, {"name", "tier", "members"}));
    HyperNode hn;
    if (!h["name"]) return r.Error(h, f + ".name", "required");
    GANTRY_RETURN_IF_ERROR(r.Name(h["name"], f + ".name", &hn.name));
    for (const HyperNode& other : all) {
      if (other.name == hn.name) {
        return r.Error(h["name"], f + ".name",
                       "hypernode " + QuoteForMessage(hn.name) + " is defined twice");
      }
    }
    if (!h["tier"]) return r.Error(h, f + ".tier", "required");
    int64_t tier = 0;
    GANTRY_RETURN_IF_ERROR(r.Int(h["tier"], f + ".tier", 1, kMaxTopologyLevels, &tier));
    hn.tier = static_cast<int32_t>(tier);
    if (const YAML::Node& members = h["members"]) {
      GANTRY_RETURN_IF_ERROR(r.List(members, f + ".members"));
      for (size_t k = 0; k < members.size(); ++k) {
        const YAML::Node& m = members[k];
        const std::string mf = f + ".members[" + std::to_string(k) + "]";
        GANTRY_RETURN_IF_ERROR(r.Map(m, mf, {"type", "exactMatch", "regexMatch", "labelMatch"}));
        HyperNodeMember member;
        std::string type;
        if (!m["type"]) return r.Error(m, mf + ".type", "required: Node or HyperNode");
        GANTRY_RETURN_IF_ERROR(r.String(m["type"], mf + ".type", &type));
        if (type != "Node" && type != "HyperNode") {
          return r.Error(m["type"], mf + ".type",
                         QuoteForMessage(type) + " is not Node or HyperNode");
        }
        member.hypernode = type == "HyperNode";
        const int given =
            (m["exactMatch"] ? 1 : 0) + (m["regexMatch"] ? 1 : 0) + (m["labelMatch"] ? 1 : 0);
        if (given != 1) {
          return r.Error(m, mf, "give one of exactMatch, regexMatch, labelMatch");
        }
        if (m["exactMatch"]) {
          GANTRY_RETURN_IF_ERROR(r.Name(m["exactMatch"], mf + ".exactMatch", &member.exact));
        } else if (m["regexMatch"]) {
          GANTRY_RETURN_IF_ERROR(r.String(m["regexMatch"], mf + ".regexMatch", &member.pattern));
          if (member.pattern.empty() || member.pattern.size() > 1024) {
            return r.Error(m["regexMatch"], mf + ".regexMatch", "expected 1 to 1024 bytes");
          }
        } else {
          if (member.hypernode) {
            return r.Error(m["labelMatch"], mf + ".labelMatch", "selects nodes only");
          }
          LabelSelector selector;
          GANTRY_RETURN_IF_ERROR(
              r.LabelMap(m["labelMatch"], mf + ".labelMatch", &selector.match_labels));
          member.labels = std::move(selector);
        }
        hn.members.push_back(std::move(member));
      }
    }
    all.push_back(std::move(hn));
    where.push_back(h);
  }
  std::vector<std::string> names;
  for (const HyperNode& h : all) names.push_back(h.name);
  std::vector<HyperNodeProblem> problems;
  HyperNodeTree tree = HyperNodeTree::Build(std::move(all), &problems);
  if (!problems.empty()) {
    const HyperNodeProblem& p = problems.front();
    const size_t at =
        static_cast<size_t>(std::find(names.begin(), names.end(), p.hypernode) - names.begin());
    return r.Error(at < where.size() ? where[at] : hypernodes,
                   "hyperNodes[" + std::to_string(at) + "]", p.message);
  }
  for (NodeId id = 0; id < cluster->nodes().size(); ++id) {
    Node node = cluster->node(id);
    for (auto& [key, value] : tree.LabelsFor(node.name, node.labels)) {
      node.labels.Set(std::move(key), std::move(value));
    }
    GANTRY_RETURN_IF_ERROR(cluster->UpdateNode(id, std::move(node)));
  }
  if (!keys_given) cluster->SetTopologyKeys(tree.LevelKeys());
  return Status::Ok();
}

}  // namespace gantry

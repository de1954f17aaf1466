#include "engine/topology_domains.h"

#include <algorithm>
#include <map>

namespace gantry {

TopologyDomains::TopologyDomains(const ClusterState& cluster) : cluster_(cluster) {
  const std::vector<std::string>& keys = cluster_.topology_keys();
  for (const Job& job : cluster_.jobs()) {
    const std::string& key = job.topology.level;
    if (key.empty() || std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    const auto at = std::lower_bound(standalone_.begin(), standalone_.end(), key);
    if (at == standalone_.end() || *at != key) standalone_.insert(at, key);
  }
}

int TopologyDomains::LevelOf(std::string_view key) const {
  const std::vector<std::string>& keys = cluster_.topology_keys();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return static_cast<int>(i);
  }
  const auto at = std::lower_bound(standalone_.begin(), standalone_.end(), key);
  if (at == standalone_.end() || *at != key) return -1;
  return static_cast<int>(keys.size() + static_cast<size_t>(at - standalone_.begin()));
}

std::string TopologyDomainName(const Node& node, int level) {
  const size_t at = static_cast<size_t>(level);
  if (level < 0 || at >= node.topology.size() || node.topology[at].empty()) return "";
  std::string name;
  for (size_t l = 0; l <= at; ++l) {
    if (l > 0) name += '/';
    name += node.topology[l];
  }
  return name;
}

TopologyDomains::Level& TopologyDomains::Built(int level) {
  const size_t levels = cluster_.topology_keys().size();
  if (levels_.empty()) levels_.resize(levels + standalone_.size());
  Level& out = levels_[static_cast<size_t>(level)];
  if (out.built) return out;
  out.built = true;
  const std::vector<Node>& nodes = cluster_.nodes();
  std::map<std::string, std::vector<NodeId>> by_name;
  for (NodeId n = 0; n < nodes.size(); ++n) {
    if (nodes[n].removed) continue;
    std::string name;
    if (!Standalone(level)) {
      name = TopologyDomainName(nodes[n], level);
    } else if (const std::string* value = nodes[n].labels.Find(standalone_[level - levels])) {
      name = *value;
    }
    if (!name.empty()) by_name[std::move(name)].push_back(n);
  }
  out.domain_of.assign(nodes.size(), -1);
  for (auto& [name, members] : by_name) {
    std::map<std::string, std::vector<NodeId>> by_clique;
    std::vector<NodeId> unlabelled;
    for (NodeId n : members) {
      out.domain_of[n] = static_cast<int32_t>(out.domains.size());
      if (const std::string* clique = nodes[n].labels.Find(std::string(kNvlinkCliqueLabel))) {
        by_clique[*clique].push_back(n);
      } else {
        unlabelled.push_back(n);
      }
    }
    std::vector<std::vector<NodeId>> cliques;
    for (auto& [value, group] : by_clique) cliques.push_back(std::move(group));
    if (!cliques.empty() && !unlabelled.empty()) cliques.push_back(std::move(unlabelled));
    out.domains.push_back(TopologyDomain{name, std::move(members), std::move(cliques)});
  }
  return out;
}

const std::vector<TopologyDomain>& TopologyDomains::At(int level) {
  return Built(level).domains;
}

const TopologyDomain* TopologyDomains::DomainOfNode(int level, NodeId node) {
  const int32_t d = DomainOf(level, node);
  return d < 0 ? nullptr : &At(level)[static_cast<size_t>(d)];
}

int32_t TopologyDomains::DomainOf(int level, NodeId node) {
  const Level& built = Built(level);
  return node < built.domain_of.size() ? built.domain_of[node] : -1;
}

}  // namespace gantry

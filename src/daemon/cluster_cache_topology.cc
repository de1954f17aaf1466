// Where the topology levels come from, in order: the configuration's topologyKeys, the
// levels of Kueue's first Topology by name, the tiers of Volcano's HyperNodes (each
// node labelled with the HyperNode of each tier that holds it, model/hypernodes.h), else
// the model's defaults. And a job's topology request, read against those levels.
#include <algorithm>

#include "daemon/cluster_cache.h"
#include "k8s/json_fields.h"
#include "k8s/topology_objects.h"

namespace gantry {
namespace {

using json = nlohmann::json;

}  // namespace

void ClusterCache::OnKueueTopology(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  if (type == k8s::EventType::kDeleted) {
    kueue_topologies_.erase(meta->name);
  } else if (auto topology = k8s::ParseKueueTopology(object); topology.ok()) {
    kueue_topologies_[meta->name] = std::move(topology->levels);
  } else {
    // The earlier version, if any, holds.
    Problem({"kueue.x-k8s.io/v1beta1", "Topology", "", meta->name, meta->uid, "Warning",
             "InvalidTopology", Bounded(topology.status().message(), kMaxMessage)});
    return;
  }
  ApplyTopologyKeys();
}

void ClusterCache::OnHyperNode(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  if (type == k8s::EventType::kDeleted) {
    hypernodes_.erase(meta->name);
  } else if (auto parsed = k8s::ParseHyperNode(object); parsed.ok()) {
    hypernodes_[meta->name] = {parsed->meta, std::move(parsed->hypernode)};
  } else {
    Problem({"topology.volcano.sh/v1alpha1", "HyperNode", "", meta->name, meta->uid, "Warning",
             "InvalidHyperNode", Bounded(parsed.status().message(), kMaxMessage)});
    return;
  }
  std::vector<HyperNode> all;
  for (const auto& [name, record] : hypernodes_) all.push_back(record.second);
  std::vector<HyperNodeProblem> problems;
  hypernode_tree_ = HyperNodeTree::Build(std::move(all), &problems);
  // Each problem once, for as long as it lasts.
  std::set<std::string> now;
  for (const HyperNodeProblem& p : problems) {
    now.insert(p.message);
    if (hypernode_problems_.count(p.message)) continue;
    auto it = hypernodes_.find(p.hypernode);
    const std::string uid = it == hypernodes_.end() ? "" : it->second.first.uid;
    Problem({"topology.volcano.sh/v1alpha1", "HyperNode", "", p.hypernode, uid, "Warning",
             "InvalidHyperNode", Bounded(p.message, kMaxMessage)});
  }
  hypernode_problems_ = std::move(now);
  RelabelNodes();
  ApplyTopologyKeys();
}

void ClusterCache::AddHyperNodeLabels(Node& node) const {
  if (hypernode_tree_.empty()) return;
  for (auto& [key, value] : hypernode_tree_.LabelsFor(node.name, node.labels)) {
    node.labels.Set(std::move(key), std::move(value));
  }
}

void ClusterCache::RelabelNodes() {
  for (NodeId id = 0; id < state_.nodes().size(); ++id) {
    const Node& old = state_.node(id);
    if (old.removed) continue;
    Node node = old;
    Labels own;
    for (const auto& [key, value] : old.labels.pairs()) {
      if (!key.starts_with(kHyperNodeLevelPrefix)) own.Set(key, value);
    }
    node.labels = std::move(own);
    AddHyperNodeLabels(node);
    if (node.labels == old.labels) continue;
    // Only labels change: the node was valid a moment ago and stays so.
    Status st = state_.UpdateNode(id, std::move(node));
    if (!st.ok()) Problem({"v1", "Node", "", old.name, "", "Warning", "InvalidNode", st.message()});
  }
}

void ClusterCache::ApplyTopologyKeys() {
  if (!configured_topology_keys_.empty()) return;
  std::vector<std::string> keys = default_topology_keys_;
  if (!kueue_topologies_.empty()) {
    keys = kueue_topologies_.begin()->second;
  } else if (std::vector<std::string> tiers = hypernode_tree_.LevelKeys(); !tiers.empty()) {
    keys = std::move(tiers);
  }
  if (keys == state_.topology_keys()) return;
  state_.SetTopologyKeys(keys);
  // A Volcano tier names a level by its place among them: every job reads it again.
  for (auto& [key, job] : jobs_) RefreshJob(job);
}

TopologyRequest ClusterCache::TopologyOf(const JobRecord& job) const {
  if (const k8s::PodGroupInfo* group = GroupOf(job); group && group->network_topology_tier > 0) {
    const std::vector<std::string>& keys = state_.topology_keys();
    if (!hypernode_tree_.empty() && keys == hypernode_tree_.LevelKeys()) {
      // The levels are HyperNode tiers: the tier names its level.
      std::string level = hypernode_tree_.LevelForTier(group->network_topology_tier);
      if (level.empty()) return {};
      return TopologyRequest{std::move(level), group->network_topology_hard};
    }
    // Tier 1 is the innermost level; a tier above the outermost allows the whole cluster.
    const size_t tier = static_cast<size_t>(group->network_topology_tier);
    if (tier > keys.size()) return {};
    return TopologyRequest{keys[keys.size() - tier], group->network_topology_hard};
  }
  // The pods' annotations: the one most of them carry (the first such in order on a tie).
  const std::pair<std::string, bool>* best = nullptr;
  int32_t most = 0;
  for (const auto& [request, count] : job.topologies) {
    if (count > most) best = &request, most = count;
  }
  return best ? TopologyRequest{best->first, best->second} : TopologyRequest{};
}

}  // namespace gantry

// The cache's side of the nodes' places (NodeTopology, node_topology.h): the topology levels
// the cluster has, the HyperNode labels and NUMA descriptions nodes are given, and a job's
// topology request read against those levels.
#include "daemon/cluster_cache.h"

namespace gantry {

void ClusterCache::Apply(NodeTopology::Change change) {
  for (ObjectEvent& event : change.problems) Problem(std::move(event));
  if (change.relabel) RelabelNodes();
  if (change.levels) ApplyTopologyKeys();
  if (change.numa_node.empty()) return;
  const NodeId id = state_.FindNode(change.numa_node);
  if (id == kNone || state_.node(id).removed) return;
  Node node = state_.node(id);
  topology_.AttachNuma(node, &problems_);
  if (node.numa == state_.node(id).numa) return;
  // The node was valid a moment ago and AttachNuma checked its NUMA part.
  Status st = state_.UpdateNode(id, std::move(node));
  if (!st.ok()) {
    Problem({"v1", "Node", "", change.numa_node, "", "Warning", "InvalidNode", st.message()});
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
    topology_.AddHyperNodeLabels(node);
    if (node.labels == old.labels) continue;
    // Only labels change: the node was valid a moment ago and stays so.
    Status st = state_.UpdateNode(id, std::move(node));
    if (!st.ok()) Problem({"v1", "Node", "", old.name, "", "Warning", "InvalidNode", st.message()});
  }
}

void ClusterCache::ApplyTopologyKeys() {
  if (topology_.configured()) return;
  std::vector<std::string> keys = topology_.Levels();
  if (keys == state_.topology_keys()) return;
  state_.SetTopologyKeys(keys);
  // A Volcano tier names a level by its place among them: every job reads it again.
  for (auto& [key, job] : jobs_) RefreshJob(job);
}

TopologyRequest ClusterCache::TopologyOf(const JobRecord& job) const {
  // A native PodGroup's schedulingConstraints.topology: required, by its label key.
  if (const k8s::PodGroupInfo* group = GroupOf(job); group && !group->topology_key.empty()) {
    return TopologyRequest{group->topology_key, /*required=*/true};
  }
  if (const k8s::PodGroupInfo* group = GroupOf(job); group && group->network_topology_tier > 0) {
    const std::vector<std::string>& keys = state_.topology_keys();
    if (topology_.LevelsAreTiers(keys)) {
      // The levels are HyperNode tiers: the tier names its level.
      std::string level = topology_.LevelForTier(group->network_topology_tier);
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

// NodeResourceTopology objects (k8s/numa_objects.h): each node's NUMA nodes and topology
// manager policy, given to the node in ClusterState, where the numa plugin reads them.
#include "daemon/cluster_cache.h"
#include "k8s/numa_objects.h"

namespace gantry {

void ClusterCache::OnNodeResourceTopology(k8s::EventType type, const nlohmann::json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  if (type == k8s::EventType::kDeleted) {
    node_numa_.erase(meta->name);
  } else if (auto parsed = k8s::ParseNodeResourceTopology(object); parsed.ok()) {
    NumaRecord& record = node_numa_[meta->name];
    record.meta = parsed->meta;
    if (!(record.numa == parsed->numa)) record.problem.clear();  // a new one may be fine
    record.numa = std::move(parsed->numa);
  } else {
    // The earlier version, if any, holds.
    Problem({"topology.node.k8s.io/v1alpha2", "NodeResourceTopology", "", meta->name, meta->uid,
             "Warning", "InvalidNodeResourceTopology",
             Bounded(parsed.status().message(), kMaxMessage)});
    return;
  }
  const NodeId id = state_.FindNode(meta->name);
  if (id == kNone || state_.node(id).removed) return;
  Node node = state_.node(id);
  AttachNuma(node);
  if (node.numa == state_.node(id).numa) return;
  // The node was valid a moment ago and AttachNuma checked its NUMA part.
  Status st = state_.UpdateNode(id, std::move(node));
  if (!st.ok()) {
    Problem({"v1", "Node", "", meta->name, "", "Warning", "InvalidNode", st.message()});
  }
}

void ClusterCache::AttachNuma(Node& node) {
  node.numa = NodeNuma{};
  auto it = node_numa_.find(node.name);
  if (it == node_numa_.end()) return;
  NumaRecord& record = it->second;
  NodeNuma numa = record.numa;
  std::vector<int32_t> device_zones;
  Status st = PrepareNodeNuma(node.name, node.gpus.size(), &numa, &device_zones);
  if (!st.ok()) {
    // Scheduled as if it had no NUMA nodes until the two agree: what the kubelet enforces
    // cannot be known. Said once while it lasts.
    std::string problem =
        Bounded("noderesourcetopology " + node.name + " does not match its node: " + st.message() +
                    "; the node's NUMA alignment is not known",
                kMaxMessage);
    if (problem != record.problem) {
      record.problem = problem;
      Problem({"topology.node.k8s.io/v1alpha2", "NodeResourceTopology", "", node.name,
               record.meta.uid, "Warning", "InvalidNodeResourceTopology", problem});
    }
    return;
  }
  record.problem.clear();
  node.numa = record.numa;
}

}  // namespace gantry

// The cache's nodes: a Node object becomes a node of ClusterState (with its CSI part, its
// cached datasets, HyperNode labels and NUMA description from the objects that give them),
// or is refused with an event and taken out of scheduling; the pods that waited for it or
// are counted as all of something it has are synced again.
#include "daemon/cluster_cache.h"

namespace gantry {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxNodeReason = 300;
constexpr size_t kRefusedNodesNamed = 3;

}  // namespace

void ClusterCache::RefuseNode(const k8s::ObjectMeta& meta, const std::string& why) {
  std::string reason = Bounded(why, kMaxNodeReason);
  auto [it, inserted] = refused_nodes_.try_emplace(meta.name);
  if (!inserted && it->second == reason) return;  // said already
  it->second = reason;
  Problem({"v1", "Node", "", meta.name, meta.uid, "Warning", "InvalidNode",
           "gantry does not schedule onto this node: " + reason});
}

void ClusterCache::OnNode(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  NodeId id = state_.FindNode(meta->name);
  if (type == k8s::EventType::kDeleted) {
    refused_nodes_.erase(meta->name);
    bad_node_datasets_.erase(meta->name);
    if (id != kNone) state_.RemoveNode(id);
    return;
  }
  auto node = k8s::ParseNode(object);
  if (node.ok()) {
    node->csi = volumes_.NodeCsiOf(meta->name);
    node->cached_datasets = NodeCachedDatasets(*meta, object);
    node->device_capacity = devices_.NodeDeviceCapacity(meta->name);
    topology_.AddHyperNodeLabels(*node);
    topology_.AttachNuma(*node, &problems_);
  }
  Status st = !node.ok()    ? node.status()
              : id == kNone ? state_.AddNode(std::move(node).value()).status()
                            : state_.UpdateNode(id, std::move(node).value());
  if (!st.ok()) {
    // Out of scheduling like a deleted node; what runs there keeps counting.
    RefuseNode(*meta, st.message());
    if (id != kNone) state_.RemoveNode(id);
    return;
  }
  refused_nodes_.erase(meta->name);
  id = state_.FindNode(meta->name);
  // Pods counted as all of something the node has: what that is may have changed.
  std::vector<std::string> keys;
  for (TaskId t : state_.tasks_on(id)) {
    const std::string& key = pod_of_task_[t];
    auto pod = pods_.find(key);
    if (pod != pods_.end() && pod->second.adjusted) keys.push_back(key);
  }
  auto waiting = waiting_for_node_.find(meta->name);
  if (waiting != waiting_for_node_.end()) {
    for (const std::string& key : waiting->second) {
      auto pod = pods_.find(key);
      if (pod != pods_.end()) pod->second.waiting_for.clear();
      keys.push_back(key);
    }
    waiting_for_node_.erase(waiting);
  }
  for (const std::string& key : keys) SyncPod(key);
}

void ClusterCache::RefreshNodeCsi(const std::string& node) {
  const NodeId id = state_.FindNode(node);
  if (id == kNone || state_.node(id).removed) return;
  NodeCsi csi = volumes_.NodeCsiOf(node);
  if (state_.node(id).csi == csi) return;
  Node updated = state_.node(id);
  updated.csi = std::move(csi);
  // The node was accepted with these fields; only its CSI part changes.
  Status st = state_.UpdateNode(id, std::move(updated));
  if (!st.ok()) {
    Problem({"v1", "Node", "", node, "", "Warning", "InvalidNode",
             "gantry could not record the node's CSI volume limits: " + st.message()});
  }
}

std::string ClusterCache::RefusedNodesNote() const {
  if (refused_nodes_.empty()) return "";
  std::string out =
      "; gantry refused " + std::to_string(refused_nodes_.size()) + " node(s) it cannot read: ";
  size_t named = 0;
  for (const auto& [name, why] : refused_nodes_) {
    if (named == kRefusedNodesNamed) {
      out += "; and " + std::to_string(refused_nodes_.size() - named) + " more";
      break;
    }
    out += (named++ ? "; " : "") + Bounded(name, 100) + " (" + why + ")";
  }
  return out;
}

}  // namespace gantry

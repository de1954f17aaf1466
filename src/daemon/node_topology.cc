#include "daemon/node_topology.h"

#include "k8s/json_fields.h"
#include "k8s/numa_objects.h"
#include "k8s/topology_objects.h"

namespace gantry {

using json = nlohmann::json;

NodeTopology::Change NodeTopology::OnKueueTopology(k8s::EventType type, const json& object) {
  Change change;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return change;
  if (type == k8s::EventType::kDeleted) {
    kueue_topologies_.erase(meta->name);
  } else if (auto topology = k8s::ParseKueueTopology(object); topology.ok()) {
    kueue_topologies_[meta->name] = std::move(topology->levels);
  } else {
    // The earlier version, if any, holds.
    change.problems.push_back({"kueue.x-k8s.io/v1beta1", "Topology", "", meta->name, meta->uid,
                               "Warning", "InvalidTopology",
                               Bounded(topology.status().message(), kMaxMessage)});
    return change;
  }
  change.levels = true;
  return change;
}

NodeTopology::Change NodeTopology::OnHyperNode(k8s::EventType type, const json& object) {
  Change change;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return change;
  if (type == k8s::EventType::kDeleted) {
    hypernodes_.erase(meta->name);
  } else if (auto parsed = k8s::ParseHyperNode(object); parsed.ok()) {
    hypernodes_[meta->name] = {parsed->meta, std::move(parsed->hypernode)};
  } else {
    change.problems.push_back({"topology.volcano.sh/v1alpha1", "HyperNode", "", meta->name,
                               meta->uid, "Warning", "InvalidHyperNode",
                               Bounded(parsed.status().message(), kMaxMessage)});
    return change;
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
    change.problems.push_back({"topology.volcano.sh/v1alpha1", "HyperNode", "", p.hypernode, uid,
                               "Warning", "InvalidHyperNode", Bounded(p.message, kMaxMessage)});
  }
  hypernode_problems_ = std::move(now);
  change.relabel = true;
  change.levels = true;
  return change;
}

std::vector<std::string> NodeTopology::Levels() const {
  if (!kueue_topologies_.empty()) return kueue_topologies_.begin()->second;
  if (std::vector<std::string> tiers = hypernode_tree_.LevelKeys(); !tiers.empty()) return tiers;
  return defaults_;
}

void NodeTopology::AddHyperNodeLabels(Node& node) const {
  if (hypernode_tree_.empty()) return;
  for (auto& [key, value] : hypernode_tree_.LabelsFor(node.name, node.labels)) {
    node.labels.Set(std::move(key), std::move(value));
  }
}

NodeTopology::Change NodeTopology::OnNodeResourceTopology(k8s::EventType type, const json& object) {
  Change change;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return change;
  if (type == k8s::EventType::kDeleted) {
    node_numa_.erase(meta->name);
  } else if (auto parsed = k8s::ParseNodeResourceTopology(object); parsed.ok()) {
    NumaRecord& record = node_numa_[meta->name];
    record.meta = parsed->meta;
    if (!(record.numa == parsed->numa)) record.problem.clear();  // a new one may be fine
    record.numa = std::move(parsed->numa);
  } else {
    // The earlier version, if any, holds.
    change.problems.push_back({"topology.node.k8s.io/v1alpha2", "NodeResourceTopology", "",
                               meta->name, meta->uid, "Warning", "InvalidNodeResourceTopology",
                               Bounded(parsed.status().message(), kMaxMessage)});
    return change;
  }
  change.numa_node = meta->name;
  return change;
}

void NodeTopology::AttachNuma(Node& node, std::vector<ObjectEvent>* problems) {
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
      problems->push_back({"topology.node.k8s.io/v1alpha2", "NodeResourceTopology", "", node.name,
                           record.meta.uid, "Warning", "InvalidNodeResourceTopology", problem});
    }
    return;
  }
  record.problem.clear();
  node.numa = record.numa;
}

}  // namespace gantry

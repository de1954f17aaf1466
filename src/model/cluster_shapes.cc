// ClusterState's node shape classes: nodes that every class-cached predicate and score
// sees alike share a class, so that a verdict computed for one node is reused for the rest
// (docs/engine.md, "Node shape classes"). What a class's key holds, and why each field of a node
// is in it or not, is ShapeOf's.
#include "model/cluster.h"
#include "model/hash.h"

namespace gantry {

size_t ClusterState::NodeShapeHash::operator()(const NodeShape& shape) const {
  Hasher h;
  h.Add(shape.allocatable).Add(shape.labels).Add(shape.taints);
  h.Add(static_cast<uint64_t>(shape.gpus.size()));
  for (const GpuDevice& g : shape.gpus) {
    h.Add(static_cast<uint64_t>(g.model))
        .Add(static_cast<uint64_t>(g.memory_mib))
        .Add(static_cast<uint64_t>(g.nvlink_domain))
        .Add(static_cast<uint64_t>(g.numa_node));
  }
  h.Add(static_cast<uint64_t>(shape.unschedulable));
  const NodeMig& mig = shape.mig;
  h.Add(static_cast<uint64_t>(mig.strategy)).Add(mig.unready_state);
  h.Add(static_cast<uint64_t>(mig.gpus)).Add(static_cast<uint64_t>(mig.devices.size()));
  for (const MigDevice& d : mig.devices) {
    h.Add(static_cast<uint64_t>(d.resource)).Add(static_cast<uint64_t>(d.gpu));
  }
  return h.value();
}

ClusterState::NodeShape ClusterState::ShapeOf(const Node& node) const {
  // Every field of Node is named here, so that one added later does not compile until it
  // is decided: in the key if a class-cached verdict reads it (a node that differs in it
  // must not get another node's verdict), out of it otherwise. The verdicts cached per
  // class are the predicates' FilterStatic and FilterByCapacity; the property test in
  // tests/unit/shape_class_test.cc checks them against the node alone.
  [[maybe_unused]] const auto& [name, allocatable, labels, taints, gpus, unschedulable, csi, mig,
                                numa, removed, topology, shape_class, used, task_count,
                                cached_datasets] = node;
  // Not in the key, and why:
  //  - csi: its drivers' limits and attachments are read by nodevolumelimits' FilterDynamic;
  //  - numa: its zones are read by the numa plugin's FilterDynamic and score (each GPU's
  //    NUMA node, in `gpus`, is in the key);
  //  - removed: a removed node is unschedulable, which is in the key;
  //  - topology: read by the gang topology search and the topology scorer, per node;
  //  - shape_class, used, task_count: the class itself and usage (dynamic);
  //  - cached_datasets: read only by the datalocality scorer, per node;
  //  - name: read only through matchFields, as the label kNodeNameField below.
  NodeShape shape;
  shape.allocatable = allocatable;
  // The read labels, looked up from whichever side is shorter: specs read few keys, and
  // nodes carry dozens of labels.
  std::vector<std::pair<std::string, std::string>> read;
  if (label_key_refs_.size() < labels.pairs().size()) {
    for (const auto& [key, specs] : label_key_refs_) {
      if (const std::string* value = labels.Find(key)) read.emplace_back(key, *value);
    }
  } else {
    for (const auto& [key, value] : labels.pairs()) {
      if (label_key_refs_.count(key)) read.emplace_back(key, value);
    }
  }
  // matchFields on metadata.name reads the name: while a spec has one, each node is its
  // own class.
  if (label_key_refs_.count(std::string(kNodeNameField))) {
    read.emplace_back(std::string(kNodeNameField), name);
  }
  shape.labels = Labels(std::move(read));  // sorted, whatever the order found
  shape.taints = taints;
  shape.gpus = gpus;
  for (GpuDevice& g : shape.gpus) g.used_milli = 0, g.used_memory_mib = 0;
  shape.unschedulable = unschedulable;
  // A node whose MIG manager is re-cutting its GPUs (mig.config.state not "success") takes
  // no MIG pod; its twin that is done does. The layout too, without who holds each device.
  shape.mig = mig;
  for (MigDevice& d : shape.mig.devices) d.holder = kNoMigHolder;
  return shape;
}

uint32_t ClusterState::ShapeClassOf(const Node& node) {
  NodeShape shape = ShapeOf(node);
  auto it = shape_classes_.find(shape);
  if (it == shape_classes_.end()) {
    uint32_t id;
    if (!free_shape_classes_.empty()) {
      id = free_shape_classes_.back();
      free_shape_classes_.pop_back();
    } else {
      id = static_cast<uint32_t>(shape_class_keys_.size());
      shape_class_keys_.emplace_back();
      shape_class_refs_.push_back(0);
    }
    shape_class_keys_[id] = shape;
    it = shape_classes_.emplace(std::move(shape), id).first;
  }
  shape_class_refs_[it->second]++;
  return it->second;
}

void ClusterState::ReleaseShapeClass(uint32_t id) {
  if (--shape_class_refs_[id] > 0) return;
  shape_classes_.erase(shape_class_keys_[id]);
  shape_class_keys_[id] = NodeShape{};
  free_shape_classes_.push_back(id);
}

void ClusterState::CountLabelKeys(const TaskSpec& spec, int sign) {
  for (const std::string& key : LabelKeysOf(spec)) {
    if (sign > 0) {
      if (++label_key_refs_[key] == 1) ReclassNodesWithLabel(key);
    } else {
      auto it = label_key_refs_.find(key);
      if (--it->second == 0) label_key_refs_.erase(it);
    }
  }
}

void ClusterState::ReclassNodesWithLabel(const std::string& key) {
  const bool name = key == kNodeNameField;  // every node has one
  if (!name && !node_label_keys_.count(key)) return;
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    Node& node = nodes_[id];
    if (!name && node.labels.Find(key) == nullptr) continue;
    // Released first, so that the last node leaving a class frees its slot for the next.
    const uint32_t old_class = node.shape_class;
    ReleaseShapeClass(old_class);
    node.shape_class = ShapeClassOf(node);
    if (node.shape_class != old_class) Touch(id);
  }
}

void ClusterState::CountNodeLabels(const Node& node, int sign) {
  for (const auto& [key, value] : node.labels.pairs()) {
    if (sign > 0) {
      ++node_label_keys_[key];
    } else {
      auto it = node_label_keys_.find(key);
      if (--it->second == 0) node_label_keys_.erase(it);
    }
  }
}

}  // namespace gantry

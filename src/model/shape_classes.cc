// The node shape class table (model/shape_classes.h). What a class's key holds, and why
// each field of a node is in it or not, is ShapeOf's.
#include "model/shape_classes.h"

#include "model/hash.h"

namespace gantry {

size_t ShapeClassTable::NodeShapeHash::operator()(const NodeShape& shape) const {
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
  h.Add(shape.declared_features);
  const NodeMig& mig = shape.mig;
  h.Add(static_cast<uint64_t>(mig.strategy)).Add(mig.unready_state);
  h.Add(static_cast<uint64_t>(mig.gpus)).Add(static_cast<uint64_t>(mig.devices.size()));
  for (const MigDevice& d : mig.devices) {
    h.Add(static_cast<uint64_t>(d.resource)).Add(static_cast<uint64_t>(d.gpu));
  }
  return h.value();
}

ShapeClassTable::NodeShape ShapeClassTable::ShapeOf(const Node& node) const {
  // Every field of Node is named here, so that one added later does not compile until it
  // is decided: in the key if a class-cached verdict reads it (a node that differs in it
  // must not get another node's verdict), out of it otherwise. The verdicts cached per
  // class are the predicates' FilterStatic and FilterByCapacity; the property test in
  // tests/unit/shape_class_test.cc checks them against the node alone.
  [[maybe_unused]] const auto& [name, allocatable, labels, taints, gpus, unschedulable, csi, mig,
                                numa, removed, topology, shape_class, used, task_count,
                                cached_datasets, device_capacity, declared_features] = node;
  // Not in the key, and why:
  //  - csi: its drivers' limits and attachments are read by nodevolumelimits' FilterDynamic;
  //  - numa: its zones are read by the numa plugin's FilterDynamic and score (each GPU's
  //    NUMA node, in `gpus`, is in the key);
  //  - removed: a removed node is unschedulable, which is in the key;
  //  - topology: read by the gang topology search and the topology scorer, per node;
  //  - shape_class, used, task_count: the class itself and usage (dynamic);
  //  - cached_datasets: read only by the datalocality scorer, per node;
  //  - name: read only through matchFields, as the label kNodeNameField below;
  //  - device_capacity: read only by the cluster's capacity totals (DRA devices are
  //    checked per node by DeviceReservations, dynamically).
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
  // The predicates' FilterStatic refuses a pod needing a feature the node does not declare.
  shape.declared_features = declared_features;
  return shape;
}

uint32_t ShapeClassTable::Acquire(const Node& node) {
  NodeShape shape = ShapeOf(node);
  auto it = classes_.find(shape);
  if (it == classes_.end()) {
    uint32_t id;
    if (!free_ids_.empty()) {
      id = free_ids_.back();
      free_ids_.pop_back();
    } else {
      id = static_cast<uint32_t>(keys_.size());
      keys_.emplace_back();
      refs_.push_back(0);
    }
    keys_[id] = shape;
    it = classes_.emplace(std::move(shape), id).first;
  }
  refs_[it->second]++;
  return it->second;
}

void ShapeClassTable::Release(uint32_t id) {
  if (--refs_[id] > 0) return;
  classes_.erase(keys_[id]);
  keys_[id] = NodeShape{};
  free_ids_.push_back(id);
}

std::vector<NodeId> ShapeClassTable::CountSpecLabelKeys(const TaskSpec& spec, int sign,
                                                        std::span<Node> nodes) {
  std::vector<NodeId> reclassed;
  for (const std::string& key : LabelKeysOf(spec)) {
    if (sign > 0) {
      if (++label_key_refs_[key] == 1) ReclassNodesWithLabel(key, nodes, &reclassed);
    } else {
      auto it = label_key_refs_.find(key);
      if (--it->second == 0) label_key_refs_.erase(it);
    }
  }
  return reclassed;
}

void ShapeClassTable::ReclassNodesWithLabel(const std::string& key, std::span<Node> nodes,
                                            std::vector<NodeId>* reclassed) {
  const bool name = key == kNodeNameField;  // every node has one
  if (!name && !node_label_keys_.count(key)) return;
  for (NodeId id = 0; id < nodes.size(); ++id) {
    Node& node = nodes[id];
    if (!name && node.labels.Find(key) == nullptr) continue;
    // Released first, so that the last node leaving a class frees its slot for the next.
    const uint32_t old_class = node.shape_class;
    Release(old_class);
    node.shape_class = Acquire(node);
    if (node.shape_class != old_class) reclassed->push_back(id);
  }
}

void ShapeClassTable::CountNodeLabels(const Node& node, int sign) {
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

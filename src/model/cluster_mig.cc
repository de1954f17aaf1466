// ClusterState's part in MIG (model/mig.h, model/task_devices.h): reading a node's devices,
// and the devices a placed task takes and gives back.
#include "model/cluster.h"
#include "model/task_devices.h"

namespace gantry {

Status LayOutNodeMig(Node& node) {
  std::string_view product;
  if (const std::string* label = node.labels.Find("nvidia.com/gpu.product")) {
    product = *label;
  } else if (!node.gpus.empty()) {
    product = GpuModels().Name(node.gpus.front().model);
  }
  MigProfileRef single;
  GANTRY_RETURN_IF_ERROR(
      PrepareNodeMig(node.name, node.labels, node.allocatable, product, &node.mig, &single));
  if (node.mig.strategy == MigStrategy::kSingle) {
    // Devices of one GPU share its domain: tight packing fills a cut GPU first.
    const auto per_gpu = static_cast<size_t>(MigDevicesPerGpu(single));
    for (size_t i = 0; i < node.gpus.size(); ++i) {
      node.gpus[i].nvlink_domain = static_cast<int32_t>(i / per_gpu);
    }
  }
  for (MigDevice& d : node.mig.devices) d.holder = kNoMigHolder;
  return Status::Ok();
}

void TakeTaskMig(uint32_t holder, Task& task, const TaskSpec& spec, Node& node) {
  task.mig_devices.clear();
  if (node.mig.devices.empty()) return;
  for (ResourceId id : spec.mig_resources.ids) {
    std::vector<int32_t> taken =
        TakeMigDevices(node.mig, id, spec.requests.Get(id) / kMilliPerUnit, holder);
    task.mig_devices.insert(task.mig_devices.end(), taken.begin(), taken.end());
  }
}

void GiveBackTaskMig(Task& task, Node& node) {
  for (int32_t index : task.mig_devices) {
    if (static_cast<size_t>(index) < node.mig.devices.size()) {
      node.mig.devices[static_cast<size_t>(index)].holder = kNoMigHolder;
    }
  }
  task.mig_devices.clear();
}

void ClusterState::RetakeMig(NodeId id) {
  Node& node = nodes_[id];
  for (MigDevice& d : node.mig.devices) d.holder = kNoMigHolder;
  for (TaskId t : tasks_on_node_[id]) TakeTaskMig(t, tasks_[t], specs_[tasks_[t].spec], node);
}

void FillMigResources(TaskSpec& spec) {
  spec.mig_resources.ids.clear();
  for (const auto& e : spec.requests.entries()) {
    if (!MigProfileOfResource(ResourceName(e.id)).empty()) spec.mig_resources.ids.push_back(e.id);
  }
}

}  // namespace gantry

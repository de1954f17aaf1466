// ClusterState's part in NUMA alignment (model/numa.h): a node's zones checked and its GPUs
// put on them, and the zone each unit of a placed task takes, picked as the kubelet's
// topology manager picks it, so that the next session sees the room each zone has left.
#include <algorithm>

#include "model/cluster.h"
#include "model/task_devices.h"

namespace gantry {
namespace {

std::vector<NumaUnit> UnitsOn(const TaskSpec& spec, const Node& node) {
  return NumaUnitsOf(spec.numa, spec.requests, spec.gpu.count, node.numa.scope);
}

}  // namespace

Status LayOutNodeNuma(Node& node) {
  std::vector<int32_t> device_zones;
  GANTRY_RETURN_IF_ERROR(PrepareNodeNuma(node.name, node.gpus.size(), &node.numa, &device_zones));
  for (size_t i = 0; i < device_zones.size(); ++i) node.gpus[i].numa_node = device_zones[i];
  for (NumaZone& zone : node.numa.zones) zone.used = ResourceVector();
  return Status::Ok();
}

ZoneRoom NumaRoomFor(const Node& node, NodeId node_id, const Task& task) {
  const bool here = task.state == TaskState::kRunning && task.node == node_id;
  ZoneRoom room(node.numa.zones.size());
  for (size_t z = 0; z < node.numa.zones.size(); ++z) {
    const NumaZone& zone = node.numa.zones[z];
    room[z] = zone.allocatable;
    room[z].Subtract(zone.used);
    Milli gpus = 0;
    for (size_t d = 0; d < node.gpus.size(); ++d) {
      const GpuDevice& device = node.gpus[d];
      if (device.numa_node != zone.id) continue;
      const bool own = here && std::find(task.gpus.begin(), task.gpus.end(),
                                         static_cast<int32_t>(d)) != task.gpus.end();
      if (device.used_milli == 0 || (own && device.used_milli == task.gpu_milli_each)) {
        gpus += kMilliPerUnit;
      }
    }
    room[z].Set(kGpu, gpus);
  }
  return room;
}

void TakeTaskNuma(Task& task, const TaskSpec& spec, Node& node) {
  task.numa_zones.clear();
  if (!node.numa.aligns()) return;
  const std::vector<NumaUnit> units = UnitsOn(spec, node);
  if (!NeedsAlignment(node.numa, units, spec.numa.guaranteed)) return;
  ZoneRoom room = NumaRoomFor(node, task.node, task);
  FitZones(node.numa, units, spec.numa.guaranteed, &room, &task.numa_zones);
  for (size_t u = 0; u < units.size(); ++u) {
    const int32_t z = task.numa_zones[u];
    if (z < 0 || !units[u].holds) continue;
    node.numa.zones[static_cast<size_t>(z)].used.Add(
        ZoneCharge(node.numa, units[u], spec.numa.guaranteed));
  }
}

void GiveBackTaskNuma(Task& task, const TaskSpec& spec, Node& node) {
  if (task.numa_zones.empty()) return;
  const std::vector<NumaUnit> units = UnitsOn(spec, node);
  for (size_t u = 0; u < units.size() && u < task.numa_zones.size(); ++u) {
    const int32_t z = task.numa_zones[u];
    if (z < 0 || static_cast<size_t>(z) >= node.numa.zones.size() || !units[u].holds) continue;
    node.numa.zones[static_cast<size_t>(z)].used.Subtract(
        ZoneCharge(node.numa, units[u], spec.numa.guaranteed));
  }
  task.numa_zones.clear();
}

void ClusterState::RetakeNuma(NodeId id) {
  Node& node = nodes_[id];
  for (NumaZone& zone : node.numa.zones) zone.used = ResourceVector();
  // In task order, so that the same tasks always land in the same zones.
  std::vector<TaskId> tasks = tasks_on_node_[id];
  std::sort(tasks.begin(), tasks.end());
  for (TaskId t : tasks) tasks_[t].numa_zones.clear();
  for (TaskId t : tasks) TakeTaskNuma(tasks_[t], specs_[tasks_[t].spec], node);
}

}  // namespace gantry

// Invariants of a ClusterState that any parser or event stream must leave intact: the
// limits of model/limits.h hold, and every node's bookkeeping (used resources, device
// shares, task counts) agrees with the tasks recorded on it.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/device_backed.h"
#include "model/limits.h"
#include "tests/fuzz/fuzz_check.h"

namespace gantry::fuzz {

struct ClusterCheckOptions {
  // Every task was placed with ClusterState::Place (checked): nothing is over its node's
  // allocatable. False where bound pods are recorded as the API server says (PlaceBound).
  bool placed_with_room_check = true;
};

inline void CheckCluster(const ClusterState& cluster, ClusterCheckOptions options = {}) {
  FUZZ_CHECK(static_cast<int64_t>(cluster.nodes().size()) <= kMaxNodes,
             std::to_string(cluster.nodes().size()) + " nodes, above kMaxNodes");
  FUZZ_CHECK(static_cast<int64_t>(cluster.tasks().size()) <= kMaxTasks,
             std::to_string(cluster.tasks().size()) + " tasks, above kMaxTasks");
  std::vector<ResourceVector> used(cluster.nodes().size());
  std::vector<std::vector<int32_t>> device_use(cluster.nodes().size());
  std::vector<int32_t> task_count(cluster.nodes().size());
  size_t numa_nodes = 0;  // live nodes that align, counted
  for (NodeId id = 0; id < cluster.nodes().size(); ++id) {
    device_use[id].assign(cluster.node(id).gpus.size(), 0);
  }
  for (TaskId id = 0; id < cluster.tasks().size(); ++id) {
    const Task& task = cluster.task(id);
    if (task.state != TaskState::kRunning || task.job == kNone) continue;
    FUZZ_CHECK(task.node < cluster.nodes().size(), "task \"" + task.name + "\" runs on no node");
    FUZZ_CHECK(task.spec < cluster.specs().size(), "task \"" + task.name + "\" has no spec");
    ++task_count[task.node];
    used[task.node].Add(ClusterState::Accounted(
        cluster.spec(task.spec), static_cast<int32_t>(task.gpus.size()), task.gpu_milli_each));
    for (int32_t gpu : task.gpus) {
      FUZZ_CHECK(gpu >= 0 && static_cast<size_t>(gpu) < device_use[task.node].size(),
                 "task \"" + task.name + "\" holds GPU " + std::to_string(gpu) +
                     ", which its node does not have");
      device_use[task.node][gpu] += task.gpu_milli_each;
    }
  }
  for (NodeId id = 0; id < cluster.nodes().size(); ++id) {
    const Node& node = cluster.node(id);
    const std::string where = "node \"" + node.name + "\"";
    if (node.name.empty()) {
      // A freed slot (a removed node whose last task left): nothing of it is kept.
      FUZZ_CHECK(node.removed, "a live node without a name");
      FUZZ_CHECK(task_count[id] == 0 && cluster.tasks_on(id).empty() && node.gpus.empty() &&
                     node.labels.empty(),
                 "a freed node slot still holds tasks, devices or labels");
      continue;
    }
    FUZZ_CHECK(cluster.FindNode(node.name) == id, where + " is not found by its name");
    FUZZ_CHECK(node.name.size() <= kMaxNameLength,
               "a node name of " + std::to_string(node.name.size()) + " bytes");
    FUZZ_CHECK(node.gpus.size() <= static_cast<size_t>(kMaxGpusPerNode),
               where + " has " + std::to_string(node.gpus.size()) + " GPUs");
    for (const auto& e : node.allocatable.entries()) {
      FUZZ_CHECK(e.amount >= 0, where + ": negative allocatable " + ResourceName(e.id));
    }
    FUZZ_CHECK(node.allocatable.Get(kGpu) == static_cast<Milli>(node.gpus.size()) * kGpuMilliWhole,
               where + ": allocatable GPUs " + std::to_string(node.allocatable.Get(kGpu)) +
                   "m for " + std::to_string(node.gpus.size()) + " devices");
    FUZZ_CHECK(node.task_count == task_count[id] &&
                   cluster.tasks_on(id).size() == static_cast<size_t>(task_count[id]),
               where + ": task_count " + std::to_string(node.task_count) + ", " +
                   std::to_string(cluster.tasks_on(id).size()) + " on it, " +
                   std::to_string(task_count[id]) + " running tasks say they are there");
    if (!used[id].saturated() && !node.used.saturated()) {
      FUZZ_CHECK(node.used == used[id], where + ": used " + node.used.ToString() +
                                            ", its tasks add up to " + used[id].ToString());
    }
    // MIG devices: each held by a running task on this node that lists it, and no task
    // holds more of a profile's devices than it asks for.
    for (size_t d = 0; d < node.mig.devices.size(); ++d) {
      const MigDevice& device = node.mig.devices[d];
      FUZZ_CHECK(device.gpu >= 0 && device.gpu < node.mig.gpus,
                 where + ": MIG device " + std::to_string(d) + " on GPU " +
                     std::to_string(device.gpu) + " of " + std::to_string(node.mig.gpus));
      if (device.holder == kNoMigHolder) continue;
      FUZZ_CHECK(device.holder < cluster.tasks().size(), where + ": MIG device held by no task");
      const Task& holder = cluster.task(device.holder);
      FUZZ_CHECK(holder.state == TaskState::kRunning && holder.node == id &&
                     std::count(holder.mig_devices.begin(), holder.mig_devices.end(),
                                static_cast<int32_t>(d)) == 1,
                 where + ": MIG device " + std::to_string(d) + " held by task \"" + holder.name +
                     "\", which does not hold it here");
    }
    for (TaskId t : cluster.tasks_on(id)) {
      const Task& task = cluster.task(t);
      for (int32_t d : task.mig_devices) {
        FUZZ_CHECK(d >= 0 && static_cast<size_t>(d) < node.mig.devices.size() &&
                       node.mig.devices[static_cast<size_t>(d)].holder == t,
                   where + ": task \"" + task.name + "\" lists MIG device " + std::to_string(d) +
                       ", not held by it");
      }
      FUZZ_CHECK(task.mig_devices.size() <= node.mig.devices.size(),
                 where + ": task \"" + task.name + "\" holds more MIG devices than there are");
    }
    // NUMA zones: what each holds is what the units placed in it charge.
    std::vector<ResourceVector> zone_use(node.numa.zones.size());
    for (TaskId t : cluster.tasks_on(id)) {
      const Task& task = cluster.task(t);
      if (task.numa_zones.empty()) continue;
      const TaskSpec& spec = cluster.spec(task.spec);
      const std::vector<NumaUnit> units =
          NumaUnitsOf(spec.numa, spec.requests, spec.gpu.count, node.numa.scope);
      FUZZ_CHECK(node.numa.aligns() && task.numa_zones.size() == units.size(),
                 where + ": task \"" + task.name + "\" has NUMA zones for another layout");
      for (size_t u = 0; u < units.size(); ++u) {
        const int32_t z = task.numa_zones[u];
        FUZZ_CHECK(z >= -1 && z < static_cast<int32_t>(zone_use.size()),
                   where + ": task \"" + task.name + "\" in NUMA zone " + std::to_string(z));
        if (z >= 0 && units[u].holds) {
          zone_use[static_cast<size_t>(z)].Add(
              ZoneCharge(node.numa, units[u], spec.numa.guaranteed));
        }
      }
    }
    for (size_t z = 0; z < node.numa.zones.size(); ++z) {
      FUZZ_CHECK(node.numa.zones[z].used == zone_use[z],
                 where + ": NUMA zone " + std::to_string(z) + " holds " +
                     node.numa.zones[z].used.ToString() + ", its units add up to " +
                     zone_use[z].ToString());
    }
    if (!node.removed && node.numa.aligns()) ++numa_nodes;
    for (size_t d = 0; d < node.gpus.size(); ++d) {
      FUZZ_CHECK(node.gpus[d].used_milli == device_use[id][d],
                 where + " GPU " + std::to_string(d) + ": used_milli " +
                     std::to_string(node.gpus[d].used_milli) + ", its tasks take " +
                     std::to_string(device_use[id][d]));
      if (options.placed_with_room_check) {
        FUZZ_CHECK(node.gpus[d].used_milli <= kGpuMilliWhole,
                   where + " GPU " + std::to_string(d) +
                       " is over-shared: " + std::to_string(node.gpus[d].used_milli) + "m");
      }
    }
    if (options.placed_with_room_check && !node.removed) {
      // Extended resources the node serves through DRA (model/device_backed.h) are in no
      // allocatable: their devices are checked by the allocator, and the schedule harness
      // compares them between sessions. Every other resource fits.
      ResourceVector counted = node.used;
      for (TaskId t : cluster.tasks_on(id)) {
        for (const DeviceBackedResource& r : cluster.spec(cluster.task(t).spec).device_backed) {
          if (ServedByDra(r.resource, node)) counted.Set(r.resource, 0);
        }
      }
      FUZZ_CHECK(counted.FitsIn(node.allocatable), where + " is overcommitted: used " +
                                                       node.used.ToString() + " of " +
                                                       node.allocatable.ToString());
    }
  }
  FUZZ_CHECK(numa_nodes == cluster.numa_node_count(), std::to_string(cluster.numa_node_count()) +
                                                          " NUMA nodes counted, " +
                                                          std::to_string(numa_nodes) + " align");
}

}  // namespace gantry::fuzz

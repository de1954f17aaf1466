// The MIG devices (model/mig.h) and NUMA zones (model/numa.h) of a node and of the tasks
// placed on it: a node's devices and zones laid out when ClusterState takes its
// description, and what each placed task takes of them, as the device plugin and the
// kubelet's topology manager would give it, so that the next session sees what is left.
// Functions of a node, a task and its spec, and nothing else of the cluster: ClusterState
// calls them as it places, releases and updates (cluster.cc, cluster_update.cc), and keeps
// the state they change on Node (mig, numa) and Task (mig_devices, numa_zones).
// Defined in cluster_mig.cc and cluster_numa.cc. Task is only named here, so that this
// header needs nothing of model/cluster.h (which ClusterState's files include beside it).
#pragma once

#include <cstdint>

#include "model/node.h"
#include "model/numa.h"
#include "model/status.h"
#include "model/task_spec.h"

namespace gantry {

struct Task;  // model/cluster.h

// ---- MIG (cluster_mig.cc).
// Reads the node's MIG devices (PrepareNodeMig) and groups single-strategy devices by GPU.
Status LayOutNodeMig(Node& node);
// The MIG resources a spec requests (TaskSpec::mig_resources), from its requests.
void FillMigResources(TaskSpec& spec);
// A placed task's MIG devices: taken when it is placed (on `node`; `holder` is its id,
// MigDevice::holder), given back when it leaves, and taken again by every task on a node
// whose layout an update changed.
void TakeTaskMig(uint32_t holder, Task& task, const TaskSpec& spec, Node& node);
void GiveBackTaskMig(Task& task, Node& node);

// ---- NUMA (cluster_numa.cc).
// Checks the node's zones and puts each GPU on its zone; no zone holds anything yet.
Status LayOutNodeNuma(Node& node);
// The room of each of the zones of `node` (whose id is `node_id`) for `task`: what aligned
// units leave of the zone (NumaZone::used), and its whole GPUs free counting the task's
// own as free.
ZoneRoom NumaRoomFor(const Node& node, NodeId node_id, const Task& task);
// The zones a placed task's units take (Task::numa_zones), as the kubelet picks them; the
// task runs on `node` (task.node is its id). Given back when it leaves.
void TakeTaskNuma(Task& task, const TaskSpec& spec, Node& node);
void GiveBackTaskNuma(Task& task, const TaskSpec& spec, Node& node);

}  // namespace gantry

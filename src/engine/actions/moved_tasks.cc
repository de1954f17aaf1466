#include "engine/actions/moved_tasks.h"

#include <algorithm>

#include "engine/actions/victims.h"
#include "engine/statement.h"

namespace gantry {

Milli GpuShareHeld(const ClusterState& cluster, TaskId task) {
  const Task& t = cluster.task(task);
  return static_cast<Milli>(t.gpus.size()) * t.gpu_milli_each;
}

void SortForMoving(const ClusterState& cluster, std::vector<TaskId>* tasks) {
  std::sort(tasks->begin(), tasks->end(), [&](TaskId a, TaskId b) {
    const Milli sa = GpuShareHeld(cluster, a), sb = GpuShareHeld(cluster, b);
    if (sa != sb) return sa > sb;
    return VictimGoesFirst(cluster, a, b);
  });
}

bool CouldHold(const Session& s, const TaskSpec& spec, NodeId node) {
  if (s.cluster().node(node).unschedulable) return false;
  if (Milli{spec.gpu.count} * kGpuMilliWhole > s.allocatable(node, kGpu)) return false;
  for (const ResourceVector::Entry& e : spec.requests.entries()) {
    if (e.amount > s.allocatable(node, e.id)) return false;
  }
  return true;
}

bool RoomMayFit(const Session& s, const TaskSpec& spec, NodeId node) {
  for (const ResourceVector::Entry& e : spec.requests.entries()) {
    if (s.state().future_free(node, e.id) < e.amount) return false;
  }
  return spec.gpu.count == 0 || s.state().future_table().nodes[node].whole_free >= spec.gpu.count;
}

bool MayFitMovingAll(const Session& s, const TaskSpec& spec, NodeId node,
                     const std::vector<TaskId>& on_node) {
  const ClusterState& c = s.cluster();
  for (const ResourceVector::Entry& e : spec.requests.entries()) {
    Milli room = s.state().future_free(node, e.id);
    for (TaskId v : on_node) room += c.spec_of(v).requests.Get(e.id);
    if (room < e.amount) return false;
  }
  if (spec.gpu.count == 0) return true;
  const NodeTable& future = s.state().future_table();
  const NodeWork& w = future.nodes[node];
  std::vector<int32_t> free(future.gpu_free_milli.begin() + w.gpu_begin,
                            future.gpu_free_milli.begin() + w.gpu_begin + w.gpu_count);
  for (TaskId v : on_node) {
    for (int32_t d : c.task(v).gpus) {
      if (d >= 0 && d < w.gpu_count) free[static_cast<size_t>(d)] += c.task(v).gpu_milli_each;
    }
  }
  return std::count_if(free.begin(), free.end(), [](int32_t f) { return f >= kGpuMilliWhole; }) >=
         spec.gpu.count;
}

bool MovedTasksFit(Session& session, Statement& st, std::span<const TaskId> moved,
                   std::string* why_not) {
  const ClusterState& c = session.cluster();
  std::vector<TaskId> order(moved.begin(), moved.end());
  SortForMoving(c, &order);
  for (TaskId task : order) {
    Placement placement;
    std::string why;
    if (!session.FindPlacement(task, &placement, &why)) {
      *why_not = "task " + c.task(task).name + " of job " + c.job(c.task(task).job).name +
                 " would be moved, and would fit nowhere else now: " + why;
      return false;
    }
    Status held = st.Hold(task, std::move(placement));
    if (!held.ok()) {  // the search found it this room: a bug, say so
      *why_not = "internal error: " + held.message();
      return false;
    }
  }
  return true;
}

}  // namespace gantry

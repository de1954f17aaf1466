#include "engine/actions/moved_tasks.h"

#include <algorithm>

#include "engine/actions/evict_for.h"
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

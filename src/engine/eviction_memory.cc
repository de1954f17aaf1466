#include "engine/eviction_memory.h"

namespace gantry {

void RememberEviction(ClusterState& cluster, const EvictDecision& eviction, int64_t now) {
  if (eviction.for_job != kNone && eviction.for_job < cluster.jobs().size() &&
      eviction.task < cluster.tasks().size()) {
    cluster.NoteEviction(cluster.task(eviction.task).job, eviction.for_job);
  }
  if (eviction.cause == EvictionCause::kDefragment) cluster.NoteDefragmentEviction(now);
}

}  // namespace gantry

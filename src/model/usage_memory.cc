#include "model/usage_memory.h"

#include <algorithm>
#include <cmath>

#include "model/quantity.h"

namespace gantry {
namespace {
// Below kMilliMax, so that the rounding back to an integer cannot overflow.
constexpr double kUsageMax = static_cast<double>(kMilliMax / 4);
}  // namespace

int64_t TreeUsageHalfLife(const ClusterState& cluster, QueueId queue) {
  // A loop of parents (refused by BuildQueueTree, but the model may hold one) ends the walk.
  for (size_t depth = 0; depth <= cluster.queues().size(); ++depth) {
    const Queue& q = cluster.queue(queue);
    if (q.parent == kNone) return q.usage_half_life_s;
    queue = q.parent;
  }
  return 0;
}

void UsageMemory::Advance(ClusterState& cluster, double now) {
  const double dt = started_ ? std::max(0.0, now - last_) : 0.0;
  last_ = started_ ? std::max(last_, now) : now;
  started_ = true;
  const auto& queues = cluster.queues();
  queues_.resize(queues.size());
  for (QueueId id = 0; id < queues.size(); ++id) {
    Remembered& kept = queues_[id];
    const Queue& queue = queues[id];
    const int64_t half_life = TreeUsageHalfLife(cluster, id);
    if (kept.name != queue.name || half_life <= 0) kept = Remembered{queue.name, {}};
    if (half_life <= 0) {
      if (!queue.usage.empty()) cluster.SetQueueUsage(id, {});
      continue;
    }
    const double keep = std::exp2(-dt / static_cast<double>(half_life));
    ResourceVector next;
    // Every resource either side names: a + (u - a) * keep, rounded to the milli-unit.
    ResourceVector names = Max(kept.usage, queue.allocated);
    for (const auto& e : names.entries()) {
      const double a = static_cast<double>(queue.allocated.Get(e.id));
      const double u = static_cast<double>(kept.usage.Get(e.id));
      const double v = std::clamp(a + (u - a) * keep, 0.0, kUsageMax);
      const Milli rounded = static_cast<Milli>(std::llround(v));
      if (rounded > 0) next.Set(e.id, rounded);
    }
    kept.usage = next;
    cluster.SetQueueUsage(id, std::move(next));
  }
}

}  // namespace gantry

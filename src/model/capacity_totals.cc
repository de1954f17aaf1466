// What the live nodes of a cluster add up to (model/capacity_totals.h).
#include "model/capacity_totals.h"

namespace gantry {

void CapacityTotals::Count(const Node& node, int sign) {
  // Its DRA devices count for queues as the allocatable they stand for.
  for (const ResourceVector* amounts : {&node.allocatable, &node.device_capacity}) {
    for (const auto& e : amounts->entries()) {
      if (exact_.size() <= e.id) exact_.resize(e.id + 1, 0);
      Int128& total = exact_[e.id];
      total += sign > 0 ? static_cast<Int128>(e.amount) : -static_cast<Int128>(e.amount);
      capped_.Set(e.id, total > kMilliMax ? kMilliMax : static_cast<Milli>(total));
    }
  }
  live_nodes_ = sign > 0 ? live_nodes_ + 1 : live_nodes_ - 1;
  if (node.numa.aligns()) numa_nodes_ = sign > 0 ? numa_nodes_ + 1 : numa_nodes_ - 1;
}

}  // namespace gantry

#include "engine/queue_shares.h"

#include <algorithm>

#include "model/int128.h"
#include "model/quantity.h"

namespace gantry {
namespace {

// Divides `pool` among `members` (see the header). `deserved` holds each member's
// starting amount on entry (its guarantee up to its want) and its share on return.
void WaterFill(const std::vector<Queue>& queues, const std::vector<QueueId>& members,
               const ResourceVector& pool, const std::vector<ResourceVector>& want,
               std::vector<ResourceVector>* deserved) {
  for (const auto& total : pool.entries()) {
    const ResourceId r = total.id;
    // A member that names an explicit deserved amount of r has it already.
    auto fills = [&](QueueId q) {
      return queues[q].deserved.Get(r) <= 0 && (*deserved)[q].Get(r) < want[q].Get(r);
    };
    Milli given = 0;
    for (QueueId q : members) given = SaturatingAdd(given, (*deserved)[q].Get(r));
    Milli remaining = std::max<Milli>(0, total.amount - given);
    while (remaining > 0) {
      int64_t weight_sum = 0;
      for (QueueId q : members) {
        if (fills(q)) weight_sum += queues[q].weight;
      }
      if (weight_sum == 0) break;
      Milli handed = 0;
      for (QueueId q : members) {
        if (!fills(q)) continue;
        Milli have = (*deserved)[q].Get(r);
        Milli need = want[q].Get(r) - have;
        auto portion = static_cast<Milli>(MulDiv(remaining, queues[q].weight, weight_sum));
        Milli give = std::min(need, portion);
        (*deserved)[q].Set(r, have + give);
        handed += give;
      }
      if (handed == 0) {
        // Less is left than there are weight units: hand out the rest one milli-unit at
        // a time in id order, so that none is lost and the result is exact.
        for (size_t i = 0; i < members.size() && remaining > 0; ++i) {
          const QueueId q = members[i];
          if (fills(q)) {
            (*deserved)[q].Set(r, (*deserved)[q].Get(r) + 1);
            --remaining;
          }
        }
        continue;
      }
      remaining -= handed;
    }
  }
}

}  // namespace

std::vector<ResourceVector> DeservedShares(const std::vector<Queue>& queues, const QueueTree& tree,
                                           const std::vector<ResourceVector>& requests,
                                           const ResourceVector& capacity) {
  const size_t n = queues.size();
  std::vector<QueueId> top_down;
  for (QueueId q = 0; q < n; ++q) {
    if (tree.in_tree(q)) top_down.push_back(q);
  }
  std::stable_sort(top_down.begin(), top_down.end(),
                   [&](QueueId a, QueueId b) { return tree.depth[a] < tree.depth[b]; });
  // What each queue can use at most: its demand, capped by its capability (bottom-up).
  std::vector<ResourceVector> want(n);
  for (auto it = top_down.rbegin(); it != top_down.rend(); ++it) {
    const QueueId q = *it;
    if (tree.leaf(q)) {
      want[q] = requests[q];
    } else {
      for (QueueId c : tree.children[q]) want[q].Add(want[c]);
    }
    for (const auto& cap : queues[q].capability.entries()) {
      want[q].Set(cap.id, std::min(want[q].Get(cap.id), cap.amount));
    }
  }
  // Every queue starts at its guarantee (or explicit deserved amount), up to its want.
  std::vector<ResourceVector> deserved(n);
  for (QueueId q : top_down) {
    ResourceVector start = tree.guarantee[q];
    for (const auto& e : queues[q].deserved.entries()) {
      start.Set(e.id, std::max(start.Get(e.id), e.amount));
    }
    deserved[q] = Min(start, want[q]);
  }
  WaterFill(queues, tree.roots, capacity, want, &deserved);
  for (QueueId q : top_down) {
    if (!tree.leaf(q)) WaterFill(queues, tree.children[q], deserved[q], want, &deserved);
  }
  return deserved;
}

}  // namespace gantry

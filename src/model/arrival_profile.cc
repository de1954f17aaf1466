#include "model/arrival_profile.h"

#include <algorithm>
#include <cmath>

namespace gantry {

ArrivalProfile::ArrivalProfile(double half_life_s, size_t max_shapes)
    : half_life_s_(half_life_s), max_shapes_(max_shapes) {}

void ArrivalProfile::Observe(const TaskShape& shape, double at) {
  if (!started_) {
    latest_ = at;
    started_ = true;
  } else if (at > latest_) {
    const double decay = std::exp2(-(at - latest_) / half_life_s_);
    for (Entry& e : entries_) e.weight *= decay;
    latest_ = at;
  }
  const double weight = std::exp2(-(latest_ - at) / half_life_s_);
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.shape == shape; });
  if (it != entries_.end()) {
    it->weight += weight;
    return;
  }
  if (entries_.size() < max_shapes_) {
    entries_.push_back(Entry{shape, weight, next_order_++});
    return;
  }
  auto lightest =
      std::min_element(entries_.begin(), entries_.end(),
                       [](const Entry& a, const Entry& b) { return a.weight < b.weight; });
  if (lightest->weight >= weight) return;
  *lightest = Entry{shape, weight, next_order_++};
}

WorkloadProfile ArrivalProfile::ProfileAt(double now) const {
  const double decay = now > latest_ ? std::exp2(-(now - latest_) / half_life_s_) : 1.0;
  std::vector<const Entry*> kept;
  for (const Entry& e : entries_) kept.push_back(&e);
  std::sort(kept.begin(), kept.end(),
            [](const Entry* a, const Entry* b) { return a->order < b->order; });
  WorkloadProfile profile;
  for (const Entry* e : kept) {
    const auto count = static_cast<int64_t>(std::llround(e->weight * decay * 1000.0));
    if (count <= 0) continue;
    profile.types.push_back(TaskType{e->shape.requests, e->shape.gpu, count});
    profile.total += count;
  }
  std::stable_sort(profile.types.begin(), profile.types.end(),
                   [](const TaskType& a, const TaskType& b) { return a.count > b.count; });
  return profile;
}

}  // namespace gantry

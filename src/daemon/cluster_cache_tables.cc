#include "daemon/cluster_cache_tables.h"

#include <iterator>

namespace gantry::cache {

SpecId SpecTable::Find(const TaskSpec& spec) const {
  auto it = ids_.find(spec);
  return it == ids_.end() ? kNone : it->second;
}

SpecId SpecTable::Acquire(const TaskSpec& spec, ClusterState& state) {
  auto [it, inserted] = ids_.try_emplace(spec, 0);
  if (!inserted) {
    uses_[it->second]++;
    return it->second;
  }
  SpecId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    state.ReplaceSpec(id, spec);
  } else {
    id = state.AddSpec(spec);
    uses_.resize(id + 1, 0);
  }
  uses_[id] = 1;
  it->second = id;
  return id;
}

void SpecTable::Release(SpecId id, const ClusterState& state) {
  if (--uses_[id] > 0) return;
  ids_.erase(state.spec(id));
  free_.push_back(id);
}

void JobLine::File(JobId id, const std::string& key, int64_t created, ClusterState& state) {
  if (filed_.size() <= id) {
    filed_.resize(id + 1, false);
    filed_at_.resize(id + 1, 0);
  }
  if (filed_[id] && filed_at_[id] == created) return;
  Unfile(id, key);
  const auto it = order_.emplace(created, key, id).first;
  filed_[id] = true;
  filed_at_[id] = created;
  // Creation times lie within a day of years 0000..9999 (k8s/timestamp.h): no overflow.
  const int64_t first = created * kOrderSlots;
  const auto in_second = [&](auto at) { return at != order_.end() && std::get<0>(*at) == created; };
  int64_t value = first;
  if (it != order_.begin() && in_second(std::prev(it))) {
    value = state.job(std::get<2>(*std::prev(it))).creation + 1;
  }
  state.SetJobCreation(id, value);
  state.SetJobSubmitted(id, created);  // the session clock is the wall clock's seconds
  // Those after it in the same second move back until there is room: none when jobs come
  // in order (a relist lists them by name), a few when a second's jobs come mixed.
  for (auto next = std::next(it); in_second(next); ++next) {
    const JobId other = std::get<2>(*next);
    if (state.job(other).creation > value) break;
    state.SetJobCreation(other, ++value);
  }
  if (value - first < kOrderSlots) return;
  // Out of slots in this second (after many arrivals out of order): number them afresh.
  value = first;
  for (auto at = order_.lower_bound({created, "", 0}); in_second(at); ++at) {
    state.SetJobCreation(std::get<2>(*at), value++);
  }
}

void JobLine::Unfile(JobId id, const std::string& key) {
  if (id >= filed_.size() || !filed_[id]) return;
  order_.erase({filed_at_[id], key, id});
  filed_[id] = false;
}

}  // namespace gantry::cache

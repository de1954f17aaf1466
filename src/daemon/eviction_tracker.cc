#include "daemon/eviction_tracker.h"

namespace gantry {

void EvictionTracker::EraseIfEmpty(std::unordered_map<std::string, PodEvictions>::iterator it) {
  const PodEvictions& pod = it->second;
  if (!pod.in_flight && pod.refusals == 0 && pod.nominated.empty()) pods_.erase(it);
}

bool EvictionTracker::Start(const std::string& key) {
  PodEvictions& pod = pods_[key];
  if (pod.in_flight) return false;
  pod.in_flight = true;
  return true;
}

bool EvictionTracker::Done(const std::string& key, bool evicted) {
  auto it = pods_.try_emplace(key).first;
  PodEvictions& pod = it->second;
  pod.in_flight = false;
  bool first_refusal = false;
  if (evicted) {
    pod.refusals = 0;
  } else {
    first_refusal = ++pod.refusals == 1;
  }
  EraseIfEmpty(it);
  return first_refusal;
}

bool EvictionTracker::Nominate(const std::string& key, const std::string& node) {
  auto it = pods_.try_emplace(key).first;
  const bool changed = it->second.nominated != node;
  it->second.nominated = node;
  EraseIfEmpty(it);
  return changed;
}

void EvictionTracker::ForgetPod(const std::string& key) {
  pods_.erase(key);
}

}  // namespace gantry

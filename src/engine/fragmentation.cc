#include "engine/fragmentation.h"

#include <algorithm>
#include <cmath>

namespace gantry {

FragmentationMeasure::FragmentationMeasure(const WorkloadProfile& profile) {
  if (profile.total <= 0) return;
  for (const TaskType& t : profile.types) {
    const double weight = static_cast<double>(t.count) / static_cast<double>(profile.total);
    if (!t.gpu.wants_gpu()) {
      cpu_only_weight_ += weight;
      continue;
    }
    Type type;
    type.cpu = t.requests.Get(kCpu);
    type.level = t.gpu.shared() ? t.gpu.milli : kGpuMilliWhole;  // a share for now
    type.count = t.gpu.shared() ? 1 : t.gpu.count;
    type.models = t.gpu.models;
    type.weight = weight;
    levels_.push_back(type.level);
    cpu_steps_.push_back(type.cpu);
    types_.push_back(std::move(type));
  }
  std::sort(levels_.begin(), levels_.end());
  levels_.erase(std::unique(levels_.begin(), levels_.end()), levels_.end());
  std::sort(cpu_steps_.begin(), cpu_steps_.end());
  cpu_steps_.erase(std::unique(cpu_steps_.begin(), cpu_steps_.end()), cpu_steps_.end());
  for (Type& t : types_) {
    t.level = static_cast<int32_t>(std::lower_bound(levels_.begin(), levels_.end(), t.level) - levels_.begin());
  }
  roomy_.resize(levels_.size());
  too_small_.resize(levels_.size());
}

double FragmentationMeasure::NodeFragmentation(Milli cpu_free, GpuModelId model,
                                               std::span<const int32_t> free_milli) const {
  int64_t total_free = 0;
  for (int32_t f : free_milli) total_free += f;
  if (total_free == 0) return 0;
  // Per distinct share level: devices with room for it and the free share of the rest.
  for (size_t l = 0; l < levels_.size(); ++l) {
    int32_t roomy = 0;
    int64_t too_small = 0;
    for (int32_t f : free_milli) {
      if (f >= levels_[l]) {
        ++roomy;
      } else {
        too_small += f;
      }
    }
    roomy_[l] = roomy;
    too_small_[l] = too_small;
  }
  const auto all = static_cast<double>(total_free);
  double frag = cpu_only_weight_ * all;
  for (const Type& t : types_) {
    bool fits = cpu_free >= t.cpu && roomy_[static_cast<size_t>(t.level)] >= t.count &&
                (t.models.empty() || std::find(t.models.begin(), t.models.end(), model) != t.models.end());
    frag += t.weight * (fits ? static_cast<double>(too_small_[static_cast<size_t>(t.level)]) : all);
  }
  return frag;
}

double FragmentationMeasure::CachedNodeFragmentation(Milli cpu_free, GpuModelId model,
                                                     std::span<const int32_t> free_milli) const {
  if (free_milli.size() > 8) return NodeFragmentation(cpu_free, model, free_milli);
  int32_t sorted[8];
  const size_t n = free_milli.size();
  std::copy(free_milli.begin(), free_milli.end(), sorted);
  std::sort(sorted, sorted + n);
  StateKey key;
  for (size_t i = 0; i < n; ++i) {
    // 11 bits per device share (0..1000), five to a word.
    key.words[i / 5] |= static_cast<uint64_t>(sorted[i] & 0x7ff) << (11 * (i % 5));
  }
  const auto cpu_level = static_cast<uint64_t>(
      std::upper_bound(cpu_steps_.begin(), cpu_steps_.end(), cpu_free) - cpu_steps_.begin());
  key.words[2] = static_cast<uint64_t>(model) | (cpu_level << 32) | (static_cast<uint64_t>(n) << 56);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  double frag = NodeFragmentation(cpu_free, model, free_milli);
  cache_.emplace(key, frag);
  return frag;
}

int64_t FgdScore(double frag_before, double frag_after) {
  // int(100 / (1 + e^-x)) >= k exactly when x >= ln(k / (100 - k)): count the thresholds
  // below x instead of calling exp() for every candidate.
  static const std::vector<double> kThresholds = [] {
    std::vector<double> t;
    for (int k = 1; k < 100; ++k) t.push_back(std::log(static_cast<double>(k) / (100.0 - k)));
    return t;
  }();
  const double x = (frag_before - frag_after) / 1000.0;
  return std::upper_bound(kThresholds.begin(), kThresholds.end(), x) - kThresholds.begin();
}

}  // namespace gantry

#include "engine/fragmentation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace gantry {

FragmentationMeasure::FragmentationMeasure(const WorkloadProfile& profile, double coverage) {
  if (profile.total <= 0) return;
  int64_t kept = 0;
  size_t used = 0;
  while (used < profile.types.size() &&
         static_cast<double>(kept) < coverage * static_cast<double>(profile.total)) {
    kept += profile.types[used++].count;
  }
  for (size_t i = 0; i < used; ++i) {
    const TaskType& t = profile.types[i];
    const double weight = static_cast<double>(t.count) / static_cast<double>(kept);
    if (!t.gpu.wants_gpu()) {
      cpu_only_weight_ += weight;
      continue;
    }
    Type type;
    type.cpu = t.requests.Get(kCpu);
    // A share for now. A share given only as GPU memory (milli 0) counts as the smallest
    // share: the measure knows no device's memory, and a level of 0 would divide by zero.
    type.level = t.gpu.shared() ? std::max<int32_t>(t.gpu.milli, 1) : kGpuMilliWhole;
    type.count = t.gpu.shared() ? 1 : t.gpu.count;
    type.models = t.gpu.models;
    type.weight = weight;
    gpu_weight_ += weight;
    levels_.push_back(type.level);
    cpu_steps_.push_back(type.cpu);
    types_.push_back(std::move(type));
  }
  std::sort(levels_.begin(), levels_.end());
  levels_.erase(std::unique(levels_.begin(), levels_.end()), levels_.end());
  std::sort(cpu_steps_.begin(), cpu_steps_.end());
  cpu_steps_.erase(std::unique(cpu_steps_.begin(), cpu_steps_.end()), cpu_steps_.end());
  for (Type& t : types_) {
    t.level = static_cast<int32_t>(std::lower_bound(levels_.begin(), levels_.end(), t.level) -
                                   levels_.begin());
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
    bool fits =
        cpu_free >= t.cpu && roomy_[static_cast<size_t>(t.level)] >= t.count &&
        (t.models.empty() || std::find(t.models.begin(), t.models.end(), model) != t.models.end());
    frag += t.weight * (fits ? static_cast<double>(too_small_[static_cast<size_t>(t.level)]) : all);
  }
  return frag;
}

bool FragmentationMeasure::KeyOf(Milli cpu_free, GpuModelId model,
                                 std::span<const int32_t> free_milli, StateKey* key) const {
  if (free_milli.size() > 8) return false;
  // Insertion sort: at most 8 values, cheaper than std::sort's set-up.
  int32_t sorted[8];
  const size_t n = free_milli.size();
  for (size_t i = 0; i < n; ++i) {
    int32_t v = free_milli[i];
    size_t j = i;
    for (; j > 0 && sorted[j - 1] > v; --j) sorted[j] = sorted[j - 1];
    sorted[j] = v;
  }
  *key = StateKey{};
  for (size_t i = 0; i < n; ++i) {
    // 11 bits per device share (0..1000), five to a word.
    key->words[i / 5] |= static_cast<uint64_t>(sorted[i] & 0x7ff) << (11 * (i % 5));
  }
  // Only which types' CPU fits matters (for the fill variant, how many times: the exact
  // free CPU, which is still far fewer states than nodes).
  key->words[2] = static_cast<uint64_t>(model) | (static_cast<uint64_t>(n) << 56);
  key->words[1] |= static_cast<uint64_t>(cpu_free) << 33;
  return true;
}

double FragmentationMeasure::CachedNodeFragmentation(Milli cpu_free, GpuModelId model,
                                                     std::span<const int32_t> free_milli) const {
  // FGD's measure sees the CPU only through which types fit: use that as the key.
  const auto cpu_level = static_cast<Milli>(
      std::upper_bound(cpu_steps_.begin(), cpu_steps_.end(), cpu_free) - cpu_steps_.begin());
  StateKey key;
  if (!KeyOf(cpu_level, model, free_milli, &key))
    return NodeFragmentation(cpu_free, model, free_milli);
  if (const double* known = cache_.Find(key)) return *known;
  double frag = NodeFragmentation(cpu_free, model, free_milli);
  cache_.Insert(key, frag);
  return frag;
}

double FragmentationMeasure::ComputeFill(Milli cpu_free, GpuModelId model,
                                         std::span<const int32_t> free_milli) const {
  int64_t total_free = 0;
  int32_t whole_free = 0;
  for (int32_t f : free_milli) {
    total_free += f;
    whole_free += f == kGpuMilliWhole ? 1 : 0;
  }
  if (total_free == 0 || gpu_weight_ == 0) return 0;
  const auto all = static_cast<double>(total_free);
  double frag = 0;
  for (const Type& t : types_) {
    int64_t used = 0;
    bool model_ok =
        t.models.empty() || std::find(t.models.begin(), t.models.end(), model) != t.models.end();
    if (model_ok) {
      const int32_t share = levels_[static_cast<size_t>(t.level)];
      int64_t slots = 0;
      if (t.count == 1 && share < kGpuMilliWhole) {
        for (int32_t f : free_milli) slots += f / share;
      } else {
        slots = whole_free / t.count;
      }
      if (t.cpu > 0) slots = std::min<int64_t>(slots, cpu_free / t.cpu);
      used = slots * t.count * share;
    }
    frag += t.weight * static_cast<double>(total_free - used);
  }
  return frag / gpu_weight_ * (all > 0 ? 1.0 : 0.0);
}

double FragmentationMeasure::FillFragmentation(Milli cpu_free, GpuModelId model,
                                               std::span<const int32_t> free_milli) const {
  StateKey key;
  if (!KeyOf(cpu_free, model, free_milli, &key)) return ComputeFill(cpu_free, model, free_milli);
  if (const double* known = fill_cache_.Find(key)) return *known;
  double frag = ComputeFill(cpu_free, model, free_milli);
  fill_cache_.Insert(key, frag);
  return frag;
}

void FragmentationMeasure::StateMemo::Insert(const StateKey& key, double value) {
  if (2 * (size_ + 1) > slots_.size()) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(64, 2 * old.size()), Slot{});
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.used) Insert(slot.key, slot.value);
    }
  }
  size_t i = IndexOf(key);
  while (slots_[i].used) i = (i + 1) & (slots_.size() - 1);
  slots_[i] = Slot{key, value, true};
  ++size_;
}

int64_t FgdScore(double frag_before, double frag_after) {
  // int(100 / (1 + e^-x)) >= k exactly when x >= ln(k / (100 - k)): count the thresholds
  // at or below x instead of calling exp() for every candidate. Padded with +inf to 128
  // for a branch-free binary search (this runs for every candidate node of every task).
  static const std::array<double, 128> kThresholds = [] {
    std::array<double, 128> t;
    t.fill(std::numeric_limits<double>::infinity());
    for (int k = 1; k < 100; ++k) t[k - 1] = std::log(static_cast<double>(k) / (100.0 - k));
    return t;
  }();
  const double x = (frag_before - frag_after) / 1000.0;
  int64_t k = 99;  // NaN or +inf: above every threshold
  if (x < std::numeric_limits<double>::infinity()) {
    size_t below = 0;  // thresholds <= x: kThresholds[0, below) are
    for (size_t step = 64; step > 0; step /= 2)
      below += kThresholds[below + step - 1] <= x ? step : 0;
    k = static_cast<int64_t>(below);
  }
  // 100 only where the sigmoid rounds to exactly 1 (a drop of ~37 GPUs on one node).
  if (k == 99 && 100.0 / (1.0 + std::exp(-x)) >= 100.0) return 100;
  return k;
}

}  // namespace gantry

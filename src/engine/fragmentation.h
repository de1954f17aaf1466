// The GPU fragmentation measure of Weng et al., "Beware of Fragmentation" (USENIX ATC '23).
//
// Free GPU capacity on a node is a fragment for a kind of task when that task cannot use
// it: all of the node's free GPU share when the task cannot be placed there at all (too
// little CPU, no device with room, a GPU model it may not use, or a task without GPUs),
// else the free share of the devices too small for it. A node's fragmentation is the
// expected fragment over the workload's task types, weighted by how often each occurs.
// In milli-GPUs; memory is not part of the measure (as in the paper).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/cluster.h"

namespace gantry {

class FragmentationMeasure {
 public:
  FragmentationMeasure() = default;
  // The most frequent types of the profile (its types are in that order) that together
  // make up at least `coverage` (0..1] of its tasks, each weighted by its count over theirs.
  // The paper uses 0.95 ("typical pods").
  explicit FragmentationMeasure(const WorkloadProfile& profile, double coverage = 1.0);

  bool empty() const { return types_.empty() && cpu_only_weight_ == 0; }

  // F(node): free CPU, the node's GPU model and each device's free share.
  double NodeFragmentation(Milli cpu_free, GpuModelId model,
                           std::span<const int32_t> free_milli) const;

  // The same, remembered by node state: F depends on the free CPU only through which
  // task types' CPU fits, and on the devices only through their free shares as a
  // multiset, so nodes in the same state (idle ones, full ones) share one computation.
  double CachedNodeFragmentation(Milli cpu_free, GpuModelId model,
                                 std::span<const int32_t> free_milli) const;

  // Gantry's look-ahead variant: for each GPU task type, the free GPU share that would
  // stay unused if only tasks of that type arrived until the node is full (by its devices
  // or by its CPU, whichever runs out first), weighted by the type's frequency. It sees
  // what FGD's one-task view misses: a node whose CPU will run out before its GPUs do,
  // and device remainders that no multiple of the common shares fills. Tasks without
  // GPUs are left out (they leave every node's GPUs alike). Cached like the above.
  double FillFragmentation(Milli cpu_free, GpuModelId model, std::span<const int32_t> free_milli) const;

 private:
  struct Type {
    Milli cpu = 0;
    int32_t level = 0;  // index into levels_: the share needed on each device
    int32_t count = 0;  // devices needed
    std::vector<GpuModelId> models;
    double weight = 0;
  };
  double ComputeFill(Milli cpu_free, GpuModelId model, std::span<const int32_t> free_milli) const;
  struct StateKey {
    uint64_t words[3] = {0, 0, 0};
    bool operator==(const StateKey&) const = default;
  };
  struct StateKeyHash {
    size_t operator()(const StateKey& k) const {
      uint64_t h = k.words[0] * 0x9e3779b97f4a7c15ULL;
      h ^= k.words[1] + 0x7f4a7c159e3779b9ULL + (h << 6) + (h >> 2);
      h ^= k.words[2] + 0x94d049bb133111ebULL + (h << 6) + (h >> 2);
      return static_cast<size_t>(h);
    }
  };

  std::vector<Type> types_;     // GPU task types
  double cpu_only_weight_ = 0;  // tasks without GPUs: all free GPU is a fragment to them
  std::vector<int32_t> levels_;    // distinct per-device shares, ascending
  std::vector<Milli> cpu_steps_;   // distinct CPU requests, ascending
  mutable std::vector<int32_t> roomy_;      // scratch, per level
  mutable std::vector<int64_t> too_small_;  // scratch, per level
  // Node states to their measure. Open addressing in one array: looked up for every
  // candidate node of every task, where std::unordered_map's node per entry cost a cache
  // miss each time.
  class StateMemo {
   public:
    // The value stored for `key`, or null.
    const double* Find(const StateKey& key) const {
      if (slots_.empty()) return nullptr;
      for (size_t i = IndexOf(key);; i = (i + 1) & (slots_.size() - 1)) {
        const Slot& slot = slots_[i];
        if (!slot.used) return nullptr;
        if (slot.key == key) return &slot.value;
      }
    }
    // REQUIRES: Find(key) is null.
    void Insert(const StateKey& key, double value);

   private:
    struct Slot {
      StateKey key;
      double value = 0;
      bool used = false;
    };
    size_t IndexOf(const StateKey& key) const {
      uint64_t h = StateKeyHash()(key);
      h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdULL;  // spread into the low bits used
      return static_cast<size_t>(h ^ (h >> 29)) & (slots_.size() - 1);
    }
    std::vector<Slot> slots_;  // a power of two in size, at most half used
    size_t size_ = 0;
  };
  mutable StateMemo cache_;
  mutable StateMemo fill_cache_;
  double gpu_weight_ = 0;  // total weight of the GPU task types
  // The key of a node state for the caches; false when the node has too many devices.
  bool KeyOf(Milli cpu_free, GpuModelId model, std::span<const int32_t> free_milli, StateKey* key) const;
};

// The paper's FGD node score, int(100 * sigmoid(x)) with x = (F_before - F_after) / 1000:
// the drop in the node's fragmentation, in GPUs. 50 means no change.
int64_t FgdScore(double frag_before, double frag_after);

}  // namespace gantry

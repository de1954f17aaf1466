// Choosing GPU devices on one node for one task.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/cluster.h"

namespace gantry {

// Which devices (and nodes) to prefer: the fullest that still fit (pack, leave whole
// GPUs free for big tasks) or the emptiest (spread).
enum class GpuPacking { kNone, kTight, kLoose };

// The devices chosen for a task on a node, and the share it takes on each.
struct GpuChoice {
  std::vector<int32_t> devices;
  int32_t milli_each = 0;
  int64_t memory_each = 0;

  void Clear() {
    devices.clear();
    milli_each = 0;
    memory_each = 0;
  }
  bool operator==(const GpuChoice&) const = default;
};

// The free state of one node's devices, as a session sees it.
struct NodeGpus {
  std::span<const GpuDevice> devices;  // static properties (model, memory, NVLink domain)
  std::span<const int32_t> free_milli;
  std::span<const int64_t> free_memory_mib;
  // Every device in one NVLink domain (most nodes): whole GPUs are then the first free
  // ones, without counting per domain.
  bool one_nvlink_domain = false;
};

// The share a shared-GPU request takes on device `i` of the node, or 0 when it does not
// fit there (a model it may not use, too little free share or memory).
int32_t SharedFitOn(const GpuRequest& request, const NodeGpus& node, size_t i);

// Chooses devices for `request` on one node, or returns false when it does not fit.
// Whole GPUs: free devices of an allowed model, all within one NVLink domain when one
// has room (the domain with the fewest free devices that suffice when tight, the most
// when loose), else the lowest indexes. Shared: one device with the share and memory
// free; the one with least room left when tight, most when loose. Ties: lowest index.
bool ChooseGpus(const GpuRequest& request, const NodeGpus& node, GpuPacking packing,
                GpuChoice* out);

}  // namespace gantry

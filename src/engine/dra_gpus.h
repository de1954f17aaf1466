// DRA devices that are the engine's GPUs: where whoever publishes a node's GPUs as DRA
// devices (the simulator's `--gpu-api dra`) says which device is which of Node::gpus, the
// engine's device choice (fgd's fragmentation score, packing's fullest device) decides
// which of several fitting devices a claim gets, instead of upstream's first that fits.
//
// The policies choose GPUs on the engine's view of each node (Node::gpus and the
// session's free shares), as they do for the device plugin; when a task with claims is
// placed, the allocator tries the chosen GPUs' devices first (GpuChoicePreference), so its
// first solution is that choice whenever the choice is a valid allocation. The search
// still checks it (selectors, capacity, counters, constraints), and devices that are no
// GPUs of the engine keep upstream's order.
#pragma once

#include <cstdint>
#include <limits>

#include "engine/dra/preference.h"
#include "engine/gpu_placement.h"
#include "model/dra.h"
#include "model/node.h"

namespace gantry {

class GpuDeviceMap {
 public:
  virtual ~GpuDeviceMap() = default;
  // The index in node.gpus of the GPU that `device` of `slice` is, or -1 when it is none
  // of the node's GPUs.
  virtual int32_t GpuIndex(const Node& node, const dra::ResourceSlice& slice,
                           const dra::Device& device) const = 0;
};

// The chosen GPUs' devices first, in the order of the choice; every other device after,
// in upstream's order.
class GpuChoicePreference final : public dra::DevicePreference {
 public:
  // REQUIRES: all three outlive the preference.
  GpuChoicePreference(const GpuDeviceMap& map, const Node& node, const GpuChoice& choice)
      : map_(map), node_(node), choice_(choice) {}

  int64_t Rank(const dra::ResourceSlice& slice, const dra::Device& device) const override {
    const int32_t index = map_.GpuIndex(node_, slice, device);
    if (index < 0) return kUnchosen;
    for (size_t i = 0; i < choice_.devices.size(); ++i) {
      if (choice_.devices[i] == index) return static_cast<int64_t>(i);
    }
    return kUnchosen;
  }

 private:
  static constexpr int64_t kUnchosen = std::numeric_limits<int64_t>::max();
  const GpuDeviceMap& map_;
  const Node& node_;
  const GpuChoice& choice_;
};

}  // namespace gantry

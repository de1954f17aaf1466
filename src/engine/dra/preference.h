// An order in which the allocator tries a node's devices, where the caller knows better
// than "first that fits" (AllocateOptions::preference).
//
// Upstream tries devices in pool, slice and device order and takes the first solution:
// nothing in the search is about which fitting devices are best. Gantry adds best fit among
// shared devices (AllocateOptions::pack_shared) below the preference. Gantry's engine knows
// that for devices that are its GPUs (engine/dra_gpus.h): a policy has chosen them (fgd's
// fragmentation score, packing's fullest device). Ranking those first makes the first
// solution the policy's choice when it is valid, and leaves the search (selectors,
// capacity, counters, constraints) to decide that it is.
#pragma once

#include <cstdint>

#include "model/dra.h"

namespace gantry::dra {

class DevicePreference {
 public:
  virtual ~DevicePreference() = default;
  // Devices of lower rank are tried first; equal ranks keep upstream's order. Asked once
  // per device of the node for each Allocate.
  virtual int64_t Rank(const ResourceSlice& slice, const Device& device) const = 0;
};

}  // namespace gantry::dra

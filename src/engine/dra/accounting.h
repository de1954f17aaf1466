// What DRA devices count as, for queues: a configured map from DeviceClass to the resource
// name that queue weights, guarantees and capabilities are written in, so that devices of
// class gpu.nvidia.com count as nvidia.com/gpu and a team's GPU quota means the same
// whether its GPUs come from the device plugin or from the DRA driver.
//
// Two sides, as for any resource:
// - a node's capacity (Node::device_capacity): the devices its own slices publish (a slice
//   or device with nodeName set to it) that match a mapped class. Devices that several nodes
//   can reach (allNodes, a node selector) belong to no node and count nowhere. A device of
//   a partitionable GPU (it consumes shared counters) counts through its counter sets: each
//   counter set used by a mapped device counts one unit once, so that a GPU published both
//   whole and as MIG partitions counts as one GPU, not as all of them.
// - a task's requests (TaskSpec::device_requests): for an allocated claim, what its devices
//   count as; for one not yet allocated, an estimate that never exceeds what any allocation
//   will count (ExactCount times the smallest device of the class; firstAvailable the
//   smallest of its subrequests; allocationMode All counts nothing until allocated).
//
// How much a device counts: one unit (1000 milli, as a whole nvidia.com/gpu), or, with a
// counter prefix, the share it consumes of its counter set's counters whose names start
// with the prefix: a MIG device counts by its memory slices (1g.10gb on an 8-slice GPU is
// 1/8 of a GPU), rounded down to the milli.
//
// Class membership is the class's CEL selectors, asked of the SelectorVerdicts; a selector
// that fails on a device leaves it out (the allocator reports such errors; accounting does
// not repeat them).
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/dra.h"
#include "model/dra_inventory.h"
#include "model/dra_verdicts.h"
#include "model/resources.h"

namespace gantry::dra {

// One entry of the map.
struct ClassResource {
  std::string device_class;
  ResourceId resource = kGpu;
  // Empty: each device is one unit. Else a device counts by the shared counters with
  // this prefix that it consumes (see above).
  std::string counter_prefix;
  bool operator==(const ClassResource&) const = default;
};

class DeviceAccounting {
 public:
  DeviceAccounting() = default;
  // Reads every device of `inventory` once. `verdicts` may be null (no CEL): only classes
  // without selectors then have members.
  DeviceAccounting(std::span<const ClassResource> map, const Inventory& inventory,
                   const SelectorVerdicts* verdicts);

  bool empty() const { return map_.empty(); }
  // What the devices published for `node_name` count as (empty when none).
  const ResourceVector& NodeCapacity(std::string_view node_name) const;
  // What the claims count as (see above); `claims` may hold nulls (missing claims).
  ResourceVector ClaimRequests(std::span<const ResourceClaim* const> claims) const;

 private:
  struct Member {
    ResourceId resource = 0;
    Milli amount = 0;
  };
  const ClassResource* EntryFor(std::string_view device_class) const;
  Milli SmallestOf(const DeviceRequestSpec& spec) const;

  std::vector<ClassResource> map_;
  std::unordered_map<std::string, ResourceVector> node_capacity_;
  // What each mapped device counts as, by DeviceKey, per class (a device may be in several).
  std::map<std::string, std::unordered_map<std::string, Milli>, std::less<>> members_;
  // The smallest member of each class.
  std::map<std::string, Milli, std::less<>> smallest_;
};

}  // namespace gantry::dra

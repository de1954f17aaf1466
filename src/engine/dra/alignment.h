// Which of a node's fitting devices a claim gets, where the node's devices say which work
// best together: devices that share a NUMA node or a PCIe root (the standard attributes
// resource.kubernetes.io/numaNode and resource.kubernetes.io/pcieRoot, or whatever
// attributes the configuration names) talk fastest to each other and to the CPUs the pod
// runs on.
//
// A claim that requires alignment says so with a matchAttribute constraint, which the
// allocator enforces. Most claims do not (a plain "2 GPUs"), and upstream then gives the
// first devices that fit, across NUMA nodes if that is where they are. Gantry prefers, as
// it does for device-plugin GPUs (NVLink domains, NUMA zones): per attribute, outermost
// first, the group of devices (those with one value) that holds all the devices the claims
// ask for with the fewest to spare, so that the groups with more room stay whole for
// larger requests; when no group holds them all, the groups with the most free devices
// first, so that the claims span as few groups as they can. Devices without the attribute
// come after those with it. A preference only: the search (selectors, constraints,
// counters) still decides what is valid, and whether the node fits does not depend on it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>

#include "engine/dra/preference.h"
#include "model/dra.h"
#include "model/dra_inventory.h"

namespace gantry::dra {

// The standard attributes, outermost first (DaemonConfig::device_alignment_attributes'
// default).
inline constexpr std::string_view kNumaNodeAttribute = "resource.kubernetes.io/numaNode";
inline constexpr std::string_view kPcieRootAttribute = "resource.kubernetes.io/pcieRoot";

class AlignmentPreference final : public DevicePreference {
 public:
  // The devices of `node`'s own slices (nodeName set to it), grouped by `attributes`
  // (at most kMaxLevels are used), free where `allocated` has none of them; `wanted`: how
  // many devices the claims being allocated ask for.
  // REQUIRES: `inventory` outlives the preference (devices are known by address).
  AlignmentPreference(std::span<const QualifiedName> attributes, const Inventory& inventory,
                      const AllocatedState& allocated, std::string_view node, int64_t wanted);

  int64_t Rank(const ResourceSlice& slice, const Device& device) const override;

  static constexpr size_t kMaxLevels = 4;

  // Whether any device of `node`'s own slices has one of `attributes` (the first
  // kMaxLevels): where none has, the preference would rank every device alike, and
  // building it is work for nothing on every placement.
  static bool AppliesTo(std::span<const QualifiedName> attributes, const Inventory& inventory,
                        std::string_view node);

  // How many devices the claims ask for with ExactCount (a firstAvailable request: its
  // first subrequest's; allocationMode All: none).
  static int64_t WantedBy(std::span<const ResourceClaim* const> claims);

 private:
  std::unordered_map<const Device*, int64_t> rank_;
};

}  // namespace gantry::dra

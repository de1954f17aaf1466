// Why a pod's claims cannot be allocated on a node, in words a person can act on.
//
// kube-scheduler says "cannot allocate all claims" for every such node. That is the reason
// Gantry counts nodes under too (engine/filter.cc), but it does not say what to change.
// For the nodes `gantry explain` names as closest, this says per request that cannot be
// met on its own: how many of the node's devices match its class and selectors, how many
// of those are free, and how many it wants. It asks the allocator itself, with one request
// at a time and smaller counts, so every rule of the search (pools, node selection,
// selectors, taints, counters, capacity) counts exactly as when placing. Explanations only:
// never on the placement path.
#pragma once

#include <span>
#include <string>

#include "engine/dra/pools.h"
#include "model/dra.h"
#include "model/dra_inventory.h"
#include "model/dra_verdicts.h"

namespace gantry::dra {

struct Shortfall {
  // "claim ml/train-gpus, request gpu: 1 of 4 matching devices free, needs 2", a part per
  // request that cannot be met on its own; "" when each can (then the claims together, or
  // their constraints, are what fails). Requests with firstAvailable or for all devices
  // are not described.
  std::string words;
  // The devices those requests lack, summed; a request that no device of the node
  // matches counts as more than any could lack (kCountLimit more), to order such nodes
  // last.
  int64_t devices_short = 0;
};

// Upstream's limit on a claim's devices (AllocationResultsMaxSize): counting stops there.
inline constexpr int64_t kCountLimit = 32;

Shortfall DescribeShortfall(const Inventory& inventory, const NodeRef& node,
                            std::span<const ResourceClaim* const> claims,
                            const AllocatedState& allocated, const SelectorVerdicts& verdicts);

}  // namespace gantry::dra

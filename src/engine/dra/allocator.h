// DRA's structured allocator, as kube-scheduler 1.37 runs it with its default feature
// gates: Gantry's port of k8s.io/dynamic-resource-allocation/structured v0.37.2, the
// "incubating" variant (prioritized lists, partitionable devices, consumable capacity with
// fractional ranges, device taints and taint rules, admin access, binding conditions).
//
// The search is upstream's: claims in order, each claim's requests in order, a request's
// devices in pool, slice and device order, the first full solution taken, backtracking
// over combinations (never permutations) within a request. So on the same inputs it picks
// the same devices, not only the same yes or no.
//
// CEL stays outside the engine: the caller answers each (expression, device) question
// through SelectorVerdicts (src/dra/ does it with upstream's CEL library).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/dra/pools.h"
#include "engine/dra/verdicts.h"
#include "model/dra.h"
#include "model/dra_inventory.h"
#include "model/status.h"

namespace gantry::dra {

// What happened, beside the result.
struct AllocateReport {
  int64_t steps = 0;
  // Set when the claims could not be allocated and some pool was invalid (upstream then
  // reports "invalid resource pools were encountered" as the node's reason).
  std::string unschedulable_reason;
};

// The allocations of `claims` on `node` (one per claim, in order), nullopt when they cannot
// all be allocated there, an error where upstream's Allocate returns one (a missing class,
// a CEL error, a request for all devices of an incomplete pool, a constraint that a
// request for all devices cannot satisfy, more than 32 devices for a claim, ...).
//
// A device that allows multiple allocations gets a share ID that is a function of the
// claim's UID, its result's index and the device (upstream draws a random UUID), made to
// differ from the device's allocated share IDs.
Result<std::optional<std::vector<Allocation>>> Allocate(
    const Inventory& inventory, const NodeRef& node, std::span<const ResourceClaim> claims,
    const AllocatedState& allocated, const SelectorVerdicts& verdicts,
    const AllocateOptions& options = {}, AllocateReport* report = nullptr);
// The same, for claims kept elsewhere (the engine's claim table), without copying them.
Result<std::optional<std::vector<Allocation>>> Allocate(
    const Inventory& inventory, const NodeRef& node, std::span<const ResourceClaim* const> claims,
    const AllocatedState& allocated, const SelectorVerdicts& verdicts,
    const AllocateOptions& options = {}, AllocateReport* report = nullptr);

}  // namespace gantry::dra

#include "engine/dra/shortfall.h"

#include <algorithm>

#include "engine/dra/allocator.h"

namespace gantry::dra {
namespace {

// The claim with only `request`, for `count` devices, and no constraints.
ResourceClaim Probe(const ResourceClaim& claim, const DeviceRequest& request, int64_t count) {
  ResourceClaim probe;
  probe.name_space = claim.name_space;
  probe.name = claim.name;
  probe.uid = claim.uid;
  DeviceRequest only = request;
  only.exactly->count = count;
  probe.spec.requests.push_back(std::move(only));
  return probe;
}

// The most devices, up to `limit`, that `request` alone gets on the node in `allocated`.
int64_t MostAllocatable(const Inventory& inventory, const NodeRef& node, const ResourceClaim& claim,
                        const DeviceRequest& request, const AllocatedState& allocated,
                        const SelectorVerdicts& verdicts, int64_t limit) {
  auto fits = [&](int64_t count) {
    const ResourceClaim probe[] = {Probe(claim, request, count)};
    auto result =
        Allocate(inventory, node, std::span<const ResourceClaim>(probe), allocated, verdicts);
    return result.ok() && result->has_value();
  };
  int64_t low = 0;           // fits (none always does)
  int64_t high = limit + 1;  // does not
  while (high - low > 1) {
    const int64_t mid = low + (high - low) / 2;
    (fits(mid) ? low : high) = mid;
  }
  return low;
}

std::string Devices(int64_t n) {
  return n == 1 ? "1 matching device" : std::to_string(n) + " matching devices";
}

}  // namespace

Shortfall DescribeShortfall(const Inventory& inventory, const NodeRef& node,
                            std::span<const ResourceClaim* const> claims,
                            const AllocatedState& allocated, const SelectorVerdicts& verdicts) {
  Shortfall out;
  const AllocatedState none;
  for (const ResourceClaim* claim : claims) {
    if (claim == nullptr || claim->allocation) continue;
    for (const DeviceRequest& request : claim->spec.requests) {
      if (!request.exactly || request.exactly->allocation_mode != AllocationMode::kExactCount) {
        continue;
      }
      const int64_t wanted = request.exactly->count;
      const int64_t free = MostAllocatable(inventory, node, *claim, request, allocated, verdicts,
                                           std::min(wanted, kCountLimit));
      if (free >= wanted) continue;
      const int64_t matching =
          MostAllocatable(inventory, node, *claim, request, none, verdicts, kCountLimit);
      std::string words =
          "claim " + claim->name_space + "/" + claim->name + ", request " + request.name + ": ";
      out.devices_short += matching == 0 ? kCountLimit + wanted : wanted - free;
      if (matching == 0) {
        words += "no device matches class " + request.exactly->device_class_name +
                 (request.exactly->selectors.empty() ? "" : " and its selectors");
      } else {
        words += std::to_string(free) + " of " + Devices(matching) +
                 (matching >= kCountLimit ? " (or more)" : "") + " free, needs " +
                 std::to_string(wanted);
      }
      out.words += (out.words.empty() ? "" : "; ") + words;
    }
  }
  return out;
}

}  // namespace gantry::dra

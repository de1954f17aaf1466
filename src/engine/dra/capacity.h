// Consumable capacity (DRAConsumableCapacity with DRAFractionalCapacityRange): what a
// request consumes of a device's capacities, and whether that still fits.
//
// Upstream's consumable_capacity.go (incubating), in Gantry's exact milli-units. Upstream
// takes its milli-value path whenever min, max and step are representable in milli-units
// and step >= 1m, which every amount of the model is: the integer path it keeps for other
// quantities is never needed here.
#pragma once

#include <map>
#include <optional>

#include "model/dra.h"
#include "model/status.h"

namespace gantry::dra {

using CapacityAmounts = std::map<QualifiedName, Milli>;

// calculateConsumedCapacity: what a request for `requested` (unset: none named) consumes
// of `capacity`: the policy's default or the whole value when unset, else the request
// rounded up to the valid range's step or the next valid value. An error when the
// rounded value cannot be represented (upstream aborts the allocation on it).
Result<Milli> ConsumedAmount(std::optional<Milli> requested, const DeviceCapacity& capacity);

// CmpRequestOverCapacity: whether a request with `requests` fits a device with
// `capacity` beside what is allocated and being allocated on it (either may be null).
// false: skip the device (a requested capacity the device lacks, a policy violation, not
// enough left); an error: abort (an amount that cannot be represented, or negative).
Result<bool> FitsCapacity(const CapacityAmounts& requests,
                          const std::map<QualifiedName, DeviceCapacity>& capacity,
                          const CapacityAmounts* allocated, const CapacityAmounts* allocating);

// GetConsumedCapacityFromRequest: what the request consumes of each of the device's
// capacities (all of them, requested or not).
Result<CapacityAmounts> ConsumedCapacity(const CapacityAmounts& requests,
                                         const std::map<QualifiedName, DeviceCapacity>& capacity);

}  // namespace gantry::dra

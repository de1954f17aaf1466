#include "engine/dra/capacity.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace gantry::dra {

namespace {

using Range = CapacityRequestPolicy::Range;

Result<Milli> RoundUpToRange(Milli requested, const Range& range) {
  if (requested < range.min) return range.min;
  if (!range.step) return requested;
  const Milli step = *range.step;
  if (step <= 0) return Status::Invalid("capacity request policy: step must be positive");
  const Milli added = requested - range.min;
  Milli steps = added / step;
  if (added % step != 0) ++steps;
  Milli rounded = 0;
  if (!CheckedMul(step, steps, &rounded) || !CheckedAdd(range.min, rounded, &rounded)) {
    return Status::OutOfRange(
        "capacity request cannot be represented in the device's range arithmetic: rounding " +
        FormatQuantity(requested) + " up to the next step passes the milli-value range");
  }
  return rounded;
}

Milli RoundUpToValidValues(Milli requested, const std::vector<Milli>& valid_values) {
  for (Milli value : valid_values) {
    if (requested <= value) return value;
  }
  return requested;
}

// violatesPolicy. Note that it does not check a range's minimum: only a request is
// rounded up to it, and a default or whole value below it is accepted.
bool ViolatesPolicy(Milli consumed, const std::optional<CapacityRequestPolicy>& policy) {
  if (!policy) return false;
  if (policy->default_value && consumed == *policy->default_value) return false;
  if (policy->valid_range) {
    const Range& range = *policy->valid_range;
    if (range.max && consumed > *range.max) return true;
    if (range.step && *range.step > 0 && (consumed - range.min) % *range.step != 0) return true;
    return false;
  }
  if (!policy->valid_values.empty()) {
    for (Milli value : policy->valid_values) {
      if (consumed == value) return false;
    }
    return true;
  }
  return false;
}

// The name a claim's capacity.requests use for a device's capacity: as the slice wrote it.
// Upstream compares the keys as written, so a capacity published bare ("memory") is asked
// for as "memory", and one published qualified by its full name.
std::string_view WrittenName(const QualifiedName& name, const DeviceCapacity& capacity) {
  if (!capacity.bare_name) return name;
  const size_t slash = name.find('/');
  return slash == std::string::npos ? std::string_view(name)
                                    : std::string_view(name).substr(slash + 1);
}

std::optional<Milli> Requested(const CapacityAmounts& requests, const QualifiedName& name,
                               const DeviceCapacity& capacity) {
  auto it = requests.find(std::string(WrittenName(name, capacity)));
  if (it == requests.end()) return std::nullopt;
  return it->second;
}

Milli AmountOf(const CapacityAmounts* amounts, const QualifiedName& name) {
  if (amounts == nullptr) return 0;
  auto it = amounts->find(name);
  return it == amounts->end() ? 0 : it->second;
}

}  // namespace

Result<Milli> ConsumedAmount(std::optional<Milli> requested, const DeviceCapacity& capacity) {
  if (!requested) {
    if (capacity.request_policy && capacity.request_policy->default_value) {
      return *capacity.request_policy->default_value;
    }
    return capacity.value;
  }
  if (!capacity.request_policy) return *requested;
  if (capacity.request_policy->valid_range) {
    return RoundUpToRange(*requested, *capacity.request_policy->valid_range);
  }
  if (!capacity.request_policy->valid_values.empty()) {
    return RoundUpToValidValues(*requested, capacity.request_policy->valid_values);
  }
  return *requested;
}

Result<bool> FitsCapacity(const CapacityAmounts& requests,
                          const std::map<QualifiedName, DeviceCapacity>& capacity,
                          const CapacityAmounts* allocated, const CapacityAmounts* allocating) {
  for (const auto& [requested_name, amount] : requests) {
    bool found = false;
    for (const auto& [name, device_capacity] : capacity) {
      if (WrittenName(name, device_capacity) == requested_name) found = true;
    }
    if (!found) return false;  // another device may have it
  }
  // Every amount is resolved before any soft "no": whether an unrepresentable request
  // aborts must not depend on which capacity is looked at first. (On the stack: this runs
  // for every device a search looks at.)
  std::array<Milli, kMaxAttributesAndCapacitiesPerDevice> inline_amounts;
  std::vector<Milli> more_amounts;
  Milli* consumed = inline_amounts.data();
  if (capacity.size() > inline_amounts.size()) {
    more_amounts.resize(capacity.size());
    consumed = more_amounts.data();
  }
  size_t i = 0;
  for (const auto& [name, device_capacity] : capacity) {
    Result<Milli> amount =
        ConsumedAmount(Requested(requests, name, device_capacity), device_capacity);
    if (!amount.ok()) return amount.status().WithPrefix("capacity \"" + name + "\"");
    if (*amount < 0)
      return Status::Invalid("capacity \"" + name + "\": capacity value is negative");
    consumed[i++] = *amount;
  }
  i = 0;
  for (const auto& [name, device_capacity] : capacity) {
    const Milli amount = consumed[i++];
    if (ViolatesPolicy(amount, device_capacity.request_policy)) return false;
    const Milli total =
        SaturatingAdd(SaturatingAdd(AmountOf(allocated, name), amount), AmountOf(allocating, name));
    if (total > device_capacity.value) return false;
  }
  return true;
}

Result<CapacityAmounts> ConsumedCapacity(const CapacityAmounts& requests,
                                         const std::map<QualifiedName, DeviceCapacity>& capacity) {
  CapacityAmounts consumed;
  for (const auto& [name, device_capacity] : capacity) {
    Result<Milli> amount =
        ConsumedAmount(Requested(requests, name, device_capacity), device_capacity);
    if (!amount.ok()) return amount.status().WithPrefix("capacity \"" + name + "\"");
    consumed[name] = *amount;
  }
  return consumed;
}

}  // namespace gantry::dra

#include "model/dra_inventory.h"

#include <utility>

namespace gantry::dra {

std::string DeviceKey(std::string_view driver, std::string_view pool, std::string_view device) {
  std::string key;
  key.reserve(driver.size() + pool.size() + device.size() + 2);
  key.append(driver).append("/").append(pool).append("/").append(device);
  return key;
}

namespace {

// resourceslice/tracker applyPatches: a rule applies when its driver and pool (where set)
// are the slice's and its device (where set) is the device's name.
void ApplyTaintRules(std::span<const DeviceTaintRule> rules, ResourceSlice* slice) {
  for (const DeviceTaintRule& rule : rules) {
    if (rule.driver && *rule.driver != slice->driver) continue;
    if (rule.pool && *rule.pool != slice->pool.name) continue;
    for (Device& device : slice->devices) {
      if (rule.device && *rule.device != device.name) continue;
      device.taints.push_back(rule.taint);
    }
  }
}

}  // namespace

Inventory::Inventory(std::vector<ResourceSlice> slices, std::vector<DeviceClass> classes,
                     std::span<const DeviceTaintRule> taint_rules)
    : slices_(std::move(slices)) {
  for (DeviceClass& device_class : classes) {
    std::string name = device_class.name;
    classes_.insert_or_assign(std::move(name), std::move(device_class));
  }
  for (int i = 0; i < static_cast<int>(slices_.size()); ++i) {
    ResourceSlice& slice = slices_[i];
    ApplyTaintRules(taint_rules, &slice);
    const bool on_node = slice.node_selection && slice.node_selection->node_name &&
                         !slice.node_selection->node_name->empty();
    if (on_node) {
      on_node_[*slice.node_selection->node_name].push_back(i);
    } else {
      shared_.push_back(i);
    }
  }
}

const DeviceClass* Inventory::FindClass(std::string_view name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

AllocatedState AllocatedState::FromClaims(std::span<const ResourceClaim> claims) {
  AllocatedState state;
  for (const ResourceClaim& claim : claims) {
    if (claim.allocation) state.Add(*claim.allocation);
  }
  return state;
}

AllocatedState::DeviceUse& AllocatedState::Own(std::string key) {
  auto it = devices_.find(key);
  if (it != devices_.end()) return it->second;
  const DeviceUse* below = base_ == nullptr ? nullptr : base_->Find(key);
  return devices_.emplace(std::move(key), below == nullptr ? DeviceUse{} : *below).first->second;
}

void AllocatedState::Forget(std::map<std::string, DeviceUse, std::less<>>::iterator it) {
  // A free entry over a base that has the device taken says "freed here": kept.
  if (!it->second.Free()) return;
  if (base_ != nullptr && base_->Find(it->first) != nullptr) return;
  devices_.erase(it);
}

// foreachAllocatedDevice with DRAConsumableCapacity on: admin access takes nothing; a
// result with a share ID is a share (its consumed capacity added when it has one); any
// other result takes the whole device.
void AllocatedState::Add(const Allocation& allocation) {
  for (const AllocationResult& result : allocation.results) {
    if (result.admin_access) continue;
    DeviceUse& use = Own(DeviceKey(result.driver, result.pool, result.device));
    if (result.share_id) {
      for (const auto& [name, value] : result.consumed_capacity) use.capacity[name] += value;
      ++use.share_ids[*result.share_id];
      continue;
    }
    ++use.dedicated;
  }
}

void AllocatedState::Remove(const Allocation& allocation) {
  for (const AllocationResult& result : allocation.results) {
    if (result.admin_access) continue;
    const std::string key = DeviceKey(result.driver, result.pool, result.device);
    if (Find(key) == nullptr) continue;  // not added: nothing to undo
    Own(key);
    auto it = devices_.find(key);
    DeviceUse& use = it->second;
    if (!result.share_id) {
      if (use.dedicated > 0) --use.dedicated;
      Forget(it);
      continue;
    }
    for (const auto& [name, value] : result.consumed_capacity) {
      auto sum = use.capacity.find(name);
      if (sum == use.capacity.end()) continue;
      sum->second -= value;
      if (sum->second == 0) use.capacity.erase(sum);
    }
    if (auto share = use.share_ids.find(*result.share_id); share != use.share_ids.end()) {
      if (--share->second == 0) use.share_ids.erase(share);
    }
    Forget(it);
  }
}

std::string ClaimKey(std::string_view name_space, std::string_view name) {
  std::string key;
  key.reserve(name_space.size() + name.size() + 1);
  key.append(name_space).append("/").append(name);
  return key;
}

}  // namespace gantry::dra

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

// foreachAllocatedDevice with DRAConsumableCapacity on: admin access takes nothing; a
// result with a share ID is a share (its consumed capacity added when it has one); any
// other result takes the whole device.
void AllocatedState::Add(const Allocation& allocation) {
  for (const AllocationResult& result : allocation.results) {
    if (result.admin_access) continue;
    std::string key = DeviceKey(result.driver, result.pool, result.device);
    if (result.share_id) {
      if (!result.consumed_capacity.empty()) {
        std::map<QualifiedName, Milli>& sum = capacity_[key];
        for (const auto& [name, value] : result.consumed_capacity) sum[name] += value;
      }
      shares_[std::move(key)].insert(*result.share_id);
      continue;
    }
    dedicated_.insert(std::move(key));
  }
}

void AllocatedState::Remove(const Allocation& allocation) {
  for (const AllocationResult& result : allocation.results) {
    if (result.admin_access) continue;
    const std::string key = DeviceKey(result.driver, result.pool, result.device);
    if (!result.share_id) {
      dedicated_.erase(key);
      continue;
    }
    if (!result.consumed_capacity.empty()) {
      if (auto it = capacity_.find(key); it != capacity_.end()) {
        for (const auto& [name, value] : result.consumed_capacity) {
          auto sum = it->second.find(name);
          if (sum == it->second.end()) continue;
          sum->second -= value;
          if (sum->second == 0) it->second.erase(sum);
        }
        if (it->second.empty()) capacity_.erase(it);
      }
    }
    if (auto it = shares_.find(key); it != shares_.end()) {
      it->second.erase(*result.share_id);
      if (it->second.empty()) shares_.erase(it);
    }
  }
}

std::string ClaimKey(std::string_view name_space, std::string_view name) {
  std::string key;
  key.reserve(name_space.size() + name.size() + 1);
  key.append(name_space).append("/").append(name);
  return key;
}

const std::map<QualifiedName, Milli>* AllocatedState::ConsumedCapacity(
    const std::string& key) const {
  auto it = capacity_.find(key);
  return it == capacity_.end() ? nullptr : &it->second;
}

const std::set<std::string>* AllocatedState::ShareIds(const std::string& key) const {
  auto it = shares_.find(key);
  return it == shares_.end() ? nullptr : &it->second;
}

}  // namespace gantry::dra

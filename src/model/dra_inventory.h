// What DRA's structured allocator works from: the devices published in ResourceSlices,
// the DeviceClasses, the cluster's ResourceClaims, and which devices they already hold.
// Plain data, in the model so that whoever keeps the cluster (the daemon, the simulator)
// can own it and the engine read it.
//
// Mirrors kube-scheduler's inputs to k8s.io/dynamic-resource-allocation/structured
// (v0.37.2): the slices as ListWithDeviceTaintRules gives them (each DeviceTaintRule's
// taint appended to the devices it picks), the class lister, and GatherAllocatedState.
#pragma once

#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/dra.h"

namespace gantry::dra {

// "driver/pool/device": unambiguous, since neither a driver nor a device name has a '/'
// (a pool name may).
std::string DeviceKey(std::string_view driver, std::string_view pool, std::string_view device);

// The slices, classes and taint rules of one snapshot of the cluster. Built once, read by
// every Allocate of a session.
class Inventory {
 public:
  Inventory() = default;
  // Copies the slices, with each rule's taint appended to the devices it picks (upstream's
  // resourceslice tracker does the same before the scheduler sees a slice).
  Inventory(std::vector<ResourceSlice> slices, std::vector<DeviceClass> classes,
            std::span<const DeviceTaintRule> taint_rules = {});

  const std::vector<ResourceSlice>& slices() const { return slices_; }
  const DeviceClass* FindClass(std::string_view name) const;

  // Upstream's slicesForNode: the slices whose spec.nodeName is `node_name`, then every
  // slice without a nodeName, each group in the order given.
  template <typename Fn>
  void ForEachSliceForNode(std::string_view node_name, Fn&& fn) const {
    if (auto it = on_node_.find(std::string(node_name)); it != on_node_.end()) {
      for (int index : it->second) fn(slices_[index]);
    }
    for (int index : shared_) fn(slices_[index]);
  }

 private:
  std::vector<ResourceSlice> slices_;
  std::map<std::string, DeviceClass, std::less<>> classes_;
  std::unordered_map<std::string, std::vector<int>> on_node_;
  std::vector<int> shared_;
};

// Which devices are taken (upstream's AllocatedState): devices allocated whole, shares of
// devices that allow multiple allocations, and the capacity those shares consume. Results
// with admin access take nothing.
//
// Allocations are counted, so that Remove undoes exactly one Add even where two claims
// hold one device (two schedulers raced): the device stays taken until both are gone.
//
// A state may read another one below its own changes (a session's over the cluster's): it
// then keeps only the devices it changed, each copied from the base on its first change,
// and costs nothing to make however many devices the cluster has allocated.
class AllocatedState {
 public:
  AllocatedState() = default;
  // REQUIRES: `base` outlives this state and does not change while this one is used.
  explicit AllocatedState(const AllocatedState* base) : base_(base) {}

  // GatherAllocatedState: every claim's status.allocation, whoever wrote it.
  static AllocatedState FromClaims(std::span<const ResourceClaim> claims);
  // Adds an allocation (one not written yet, in flight).
  void Add(const Allocation& allocation);
  // Takes back an allocation added before: the exact undo of Add (a session's trial
  // placements are undone in reverse order).
  void Remove(const Allocation& allocation);

  // True only where no device is taken; may be false where none is (a fast path's test).
  bool empty() const { return devices_.empty() && (base_ == nullptr || base_->empty()); }
  bool Dedicated(std::string_view key) const {
    const DeviceUse* use = Find(key);
    return use != nullptr && use->dedicated > 0;
  }
  // A share of the device is allocated (with or without consumed capacity).
  bool Shared(std::string_view key) const {
    const DeviceUse* use = Find(key);
    return use != nullptr && !use->share_ids.empty();
  }
  // The capacity the allocated shares of the device consume, or null when none recorded.
  const std::map<QualifiedName, Milli>* ConsumedCapacity(std::string_view key) const {
    const DeviceUse* use = Find(key);
    return use == nullptr || use->capacity.empty() ? nullptr : &use->capacity;
  }
  // A share with this ID is allocated on the device (so that a new one differs).
  bool HasShareId(std::string_view key, const std::string& share_id) const {
    const DeviceUse* use = Find(key);
    return use != nullptr && use->share_ids.count(share_id) > 0;
  }
  // IsDeviceAllocated: whole, shared, or with consumed capacity.
  bool Allocated(std::string_view key) const {
    const DeviceUse* use = Find(key);
    return use != nullptr && !use->Free();
  }

 private:
  struct DeviceUse {
    int dedicated = 0;                        // allocations that take it whole
    std::map<std::string, int> share_ids;     // share ID -> allocations with it
    std::map<QualifiedName, Milli> capacity;  // what the shares consume
    bool Free() const { return dedicated == 0 && share_ids.empty() && capacity.empty(); }
  };
  // This state's entry for the device, else the base's; null: the device is free.
  const DeviceUse* Find(std::string_view key) const {
    auto it = devices_.find(key);
    if (it != devices_.end()) return &it->second;
    return base_ == nullptr ? nullptr : base_->Find(key);
  }
  // This state's entry, copied from the base's on the first change.
  DeviceUse& Own(std::string key);
  // Drops an entry that says no more than the base does.
  void Forget(std::map<std::string, DeviceUse, std::less<>>::iterator it);

  const AllocatedState* base_ = nullptr;
  std::map<std::string, DeviceUse, std::less<>> devices_;
};

// A claim's key: "namespace/name".
std::string ClaimKey(std::string_view name_space, std::string_view name);

// Every ResourceClaim of the cluster by ClaimKey: those pods use (TaskSpec::resource_claims)
// and the others, whose allocations take devices too.
using ClaimTable = std::map<std::string, ResourceClaim, std::less<>>;

}  // namespace gantry::dra

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
class AllocatedState {
 public:
  // GatherAllocatedState: every claim's status.allocation, whoever wrote it.
  static AllocatedState FromClaims(std::span<const ResourceClaim> claims);
  // Adds an allocation (one not written yet, in flight).
  void Add(const Allocation& allocation);
  // Takes back an allocation added before: the exact undo of Add (a session's trial
  // placements are undone in reverse order).
  void Remove(const Allocation& allocation);

  bool empty() const { return dedicated_.empty() && shares_.empty() && capacity_.empty(); }
  bool Dedicated(const std::string& key) const { return dedicated_.count(key) > 0; }
  // A share of the device is allocated (with or without consumed capacity).
  bool Shared(const std::string& key) const { return shares_.count(key) > 0; }
  // The capacity the allocated shares of the device consume, or null when none recorded.
  const std::map<QualifiedName, Milli>* ConsumedCapacity(const std::string& key) const;
  // The share IDs allocated on the device (so that a new one differs).
  const std::set<std::string>* ShareIds(const std::string& key) const;
  // IsDeviceAllocated: whole, shared, or with consumed capacity.
  bool Allocated(const std::string& key) const {
    return Dedicated(key) || Shared(key) || capacity_.count(key) > 0;
  }

 private:
  std::set<std::string, std::less<>> dedicated_;
  std::map<std::string, std::set<std::string>> shares_;  // device key -> share IDs
  std::map<std::string, std::map<QualifiedName, Milli>> capacity_;
};

// A claim's key: "namespace/name".
std::string ClaimKey(std::string_view name_space, std::string_view name);

// Every ResourceClaim of the cluster by ClaimKey: those pods use (TaskSpec::resource_claims)
// and the others, whose allocations take devices too.
using ClaimTable = std::map<std::string, ResourceClaim, std::less<>>;

}  // namespace gantry::dra

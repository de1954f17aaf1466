// The state and steps of one Allocate (upstream's `allocator` struct): internal to
// engine/dra/ (allocator.h says what it does).
//
// Devices are numbered in search order (pools, their slices, their devices): upstream's
// deviceLocation (pool, slice, device) is then one index, and a device of a usable pool
// is known by it (device names are unique in a valid pool).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "engine/dra/capacity.h"
#include "engine/dra/pools.h"
#include "engine/dra/verdicts.h"
#include "model/dra_inventory.h"

namespace gantry::dra {

struct Candidate {
  int pool = 0;
  const ResourceSlice* slice = nullptr;
  const Device* device = nullptr;
  std::string Key() const { return DeviceKey(slice->driver, slice->pool.name, device->name); }
  bool dedicated = false;  // allocated whole (AllocatedDevices)
  bool shared = false;     // a share allocated (AllocatedSharedDeviceIDs, AggregatedCapacity)
  const CapacityAmounts* allocated_capacity = nullptr;
  // Being allocated in this search: for which claims (allocatingDevices), and the capacity
  // shares take (allocatingCapacity; set while any share is there, even of nothing).
  std::vector<int> allocating_claims;
  std::optional<CapacityAmounts> allocating_capacity;
};

// A request without subrequests, or one subrequest (upstream's requestData).
struct RequestData {
  const DeviceRequestSpec* spec = nullptr;
  int claim = 0;
  std::string name;    // the request's, or the subrequest's
  std::string parent;  // the request's, for a subrequest
  const DeviceClass* device_class = nullptr;
  int64_t num_devices = 0;
  bool admin_access = false;  // never for a subrequest
  int selected_sub = 0;       // on a request's first subrequest: the one chosen
  std::vector<int> all_devices;
  int cache_row = 0;

  bool is_sub() const { return !parent.empty(); }
  bool all_mode() const { return spec->allocation_mode == AllocationMode::kAll; }
  std::string FullName() const { return parent.empty() ? name : parent + "/" + name; }
};

// matchAttribute or distinctAttribute over a claim's devices (all, or those of some
// requests). Constraints are monotonic: a device refused now stays refused as more come.
struct Constraint {
  bool distinct = false;
  std::set<std::string, std::less<>> requests;  // empty: all
  QualifiedName attribute;
  const AttributeValue* first = nullptr;  // matchAttribute: the value all share
  int count = 0;
  std::vector<const AttributeValue*> values;  // distinctAttribute: those taken

  bool Applies(const RequestData& request) const;
  bool Add(const RequestData& request, const Candidate& candidate);
  void Remove(const RequestData& request);
};

struct DeviceResult {
  int candidate = 0;
  const RequestData* request = nullptr;
  bool shared = false;
  CapacityAmounts consumed;
};

struct SearchPosition {
  int claim = 0;
  int request = 0;
  int sub = 0;
  int64_t device = 0;
};

class DeviceSearch {
 public:
  // All of it left (LeftOf), in thousandths.
  static constexpr Milli kWholeLeft = 1000;
  DeviceSearch(const Inventory& inventory, const NodeRef& node,
               std::span<const ResourceClaim* const> claims, const AllocatedState& allocated,
               const SelectorVerdicts& verdicts, const AllocateOptions& options);

  // allocator.cc: validation of the claims, then the results.
  Status Prepare();
  Result<std::vector<Allocation>> Results() const;
  std::vector<AllocationConfig> Configs(int claim) const;
  bool AnyInvalidPool() const;

  // search.cc.
  enum class Outcome { kDone, kFailed, kTooManyResults, kError };
  Outcome AllocateOne(SearchPosition at, bool in_subrequest, int start);
  const Status& error() const { return error_; }
  int64_t steps() const { return steps_; }

 private:
  struct Rollback {
    bool counters_reserved = false;
    int constraints_added = 0;
    bool marked = false;
    bool capacity_inserted = false;
    bool capacity_entry_existed = false;
    bool result_added = false;
    size_t previous_results = 0;
    CapacityAmounts consumed;
  };

  Result<RequestData> ValidateRequest(int claim, const std::string& name, const std::string& parent,
                                      const DeviceRequestSpec& spec, bool admin_access);
  Result<bool> IsSelectable(const RequestData& request, int candidate);
  Result<bool> SelectorsMatch(int claim, const DeviceClass* device_class,
                              const std::vector<std::string>& selectors, int candidate);
  Result<bool> FitsRemainingCapacity(const RequestData& request, int candidate) const;
  // allocateDevice: true with *undo filled when the device was taken.
  Result<bool> AllocateDevice(const SearchPosition& at, int candidate, bool must, Rollback* undo);
  void Undo(const SearchPosition& at, int candidate, const Rollback& undo);
  bool InUse(int candidate) const;
  bool AllocatingForClaim(int candidate, int claim) const;
  bool CapacityInUse(int candidate) const;
  bool ReserveCounters(int candidate);
  void ReleaseCounters(int candidate);
  const std::map<std::string, Counters>& AvailableCounters(int pool);
  // What is left, in thousandths, of what the device shares with others before this search:
  // the least left of the counters it consumes and of its capacity that allocated shares
  // consume; kWholeLeft when it shares nothing (AllocateOptions::pack_shared).
  Milli LeftOf(int candidate);
  std::string ClaimName(int claim) const;
  Outcome Fail(Status status);

  const Inventory& inventory_;
  NodeRef node_;
  std::span<const ResourceClaim* const> claims_;
  const AllocatedState& allocated_;
  const SelectorVerdicts& verdicts_;
  AllocateOptions options_;

  std::vector<Pool> pools_;
  std::vector<Candidate> candidates_;
  // The order an exact-count request tries the candidates in: upstream's (0, 1, ...), or
  // the caller's preference. A request's next device comes later in this order.
  std::vector<int> search_order_;
  // Per claim, per request: the request's data, or one per subrequest.
  std::vector<std::vector<std::vector<RequestData>>> requests_;
  std::vector<std::vector<Constraint>> constraints_;
  std::vector<std::vector<DeviceResult>> results_;
  std::vector<int8_t> selectable_;  // per (request row, candidate): -1 unknown, 0, 1
  int cache_rows_ = 0;
  // Per pool: what its counter sets have left beside allocated devices (computed when
  // first needed), and what this search's devices consume.
  std::vector<std::optional<std::map<std::string, Counters>>> available_counters_;
  std::vector<std::map<std::string, Counters>> consumed_counters_;
  int64_t steps_ = 0;
  Status error_;
};

}  // namespace gantry::dra

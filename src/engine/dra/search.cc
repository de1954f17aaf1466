// The backtracking search of upstream's allocateOne and allocateDevice (incubating).
#include <algorithm>
#include <string>

#include "engine/dra/search.h"

namespace gantry::dra {

namespace {

const AttributeValue* LookupAttribute(const Candidate& candidate, const QualifiedName& name) {
  const auto& attributes = candidate.device->attributes;
  if (auto it = attributes.find(name); it != attributes.end()) return &it->second;
  // A bare id in the driver's own domain (the decoder qualifies ids, this is for others).
  const size_t slash = name.find('/');
  if (slash == std::string::npos || name.compare(0, slash, candidate.slice->driver) != 0) {
    return nullptr;
  }
  auto it = attributes.find(name.substr(slash + 1));
  return it == attributes.end() ? nullptr : &it->second;
}

// resourceclaim.ToleratesTaint.
bool Tolerates(const DeviceToleration& toleration, const DeviceTaint& taint) {
  if (toleration.effect && *toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  return toleration.op == DeviceToleration::Op::kExists || toleration.value == taint.value;
}

// Only NoSchedule and NoExecute keep a device from being allocated.
bool TaintPreventsAllocation(const Device& device, const DeviceRequestSpec& request) {
  for (const DeviceTaint& taint : device.taints) {
    if (taint.effect == DeviceTaintEffect::kNone) continue;
    const bool tolerated = std::any_of(
        request.tolerations.begin(), request.tolerations.end(),
        [&](const DeviceToleration& toleration) { return Tolerates(toleration, taint); });
    if (!tolerated) return true;
  }
  return false;
}

}  // namespace

bool Constraint::Applies(const RequestData& request) const {
  if (requests.empty()) return true;
  if (requests.count(request.is_sub() ? request.parent : request.name) > 0) return true;
  return request.is_sub() && requests.count(request.FullName()) > 0;
}

bool Constraint::Add(const RequestData& request, const Candidate& candidate) {
  if (!Applies(request)) return true;
  const AttributeValue* value = LookupAttribute(candidate, attribute);
  if (value == nullptr) return false;
  if (distinct) {
    for (const AttributeValue* taken : values) {
      if (*taken == *value) return false;
    }
    values.push_back(value);
    return true;
  }
  if (count == 0) {
    first = value;
  } else if (!(*first == *value)) {
    return false;
  }
  ++count;
  return true;
}

void Constraint::Remove(const RequestData& request) {
  if (!Applies(request)) return;
  if (distinct) {
    values.pop_back();
  } else {
    --count;
  }
}

DeviceSearch::Outcome DeviceSearch::Fail(Status status) {
  error_ = std::move(status);
  return Outcome::kError;
}

bool DeviceSearch::AllocatingForClaim(int candidate, int claim) const {
  const std::vector<int>& claims = candidates_[candidate].allocating_claims;
  return std::find(claims.begin(), claims.end(), claim) != claims.end();
}

bool DeviceSearch::InUse(int candidate) const {
  return candidates_[candidate].dedicated || !candidates_[candidate].allocating_claims.empty();
}

bool DeviceSearch::CapacityInUse(int candidate) const {
  const Candidate& c = candidates_[candidate];
  return c.shared || c.allocating_capacity.has_value();
}

Result<bool> DeviceSearch::FitsRemainingCapacity(const RequestData& request, int candidate) const {
  const Candidate& c = candidates_[candidate];
  return FitsCapacity(request.spec->capacity_requests, c.device->capacity, c.allocated_capacity,
                      c.allocating_capacity ? &*c.allocating_capacity : nullptr);
}

DeviceSearch::Outcome DeviceSearch::AllocateOne(SearchPosition at, bool in_subrequest, int start) {
  if (++steps_ > options_.max_steps) {
    return Fail(Status::OutOfRange("device allocation stopped after " +
                                   std::to_string(options_.max_steps) + " search steps"));
  }
  if (at.claim >= static_cast<int>(claims_.size())) return Outcome::kDone;
  std::vector<std::vector<RequestData>>& claim_requests = requests_[at.claim];
  if (at.request >= static_cast<int>(claim_requests.size())) {
    // Done with the claim. A later claim over the result limit does not stop the search:
    // another choice here may let it pick a subrequest with fewer devices.
    const Outcome next = AllocateOne({at.claim + 1, 0, 0, 0}, false, 0);
    return next == Outcome::kTooManyResults ? Outcome::kFailed : next;
  }
  std::vector<RequestData>& alternatives = claim_requests[at.request];
  if (!in_subrequest && alternatives[at.sub].is_sub()) {
    // firstAvailable: the first subrequest that works wins.
    bool all_too_many = true;
    for (int sub = 0; sub < static_cast<int>(alternatives.size()); ++sub) {
      at.sub = sub;
      const Outcome outcome = AllocateOne(at, true, 0);
      if (outcome == Outcome::kTooManyResults) continue;
      all_too_many = false;
      if (outcome == Outcome::kError) return outcome;
      if (outcome == Outcome::kDone) {
        alternatives[0].selected_sub = sub;
        return outcome;
      }
    }
    return all_too_many ? Outcome::kTooManyResults : Outcome::kFailed;
  }
  const RequestData& request = alternatives[at.sub];
  if (request.all_mode() && request.all_devices.empty()) return Outcome::kFailed;
  if (at.device >= request.num_devices) {
    return AllocateOne({at.claim, at.request + 1, 0, 0}, false, 0);
  }
  const int64_t remaining = request.num_devices - at.device;
  const int64_t room = kMaxAllocationResults - static_cast<int64_t>(results_[at.claim].size());
  if (remaining > room) return Outcome::kTooManyResults;
  const SearchPosition next{at.claim, at.request, at.sub, at.device + 1};

  if (request.all_mode()) {
    // The devices are known; each must be usable, in any order.
    const int candidate = request.all_devices[at.device];
    Rollback undo;
    Result<bool> taken = AllocateDevice(at, candidate, true, &undo);
    if (!taken.ok()) return Fail(taken.status());
    if (!*taken) return Outcome::kFailed;
    const Outcome outcome = AllocateOne(next, in_subrequest, 0);
    if (outcome != Outcome::kDone) Undo(at, candidate, undo);
    return outcome;
  }

  for (int position = start; position < static_cast<int>(search_order_.size()); ++position) {
    const int candidate = search_order_[position];
    // Cheap checks first: in use.
    if (request.admin_access ? AllocatingForClaim(candidate, at.claim) : InUse(candidate)) {
      continue;
    }
    Result<bool> selectable = IsSelectable(request, candidate);
    if (!selectable.ok()) return Fail(selectable.status());
    if (!*selectable) continue;
    Result<bool> fits = FitsRemainingCapacity(request, candidate);
    if (!fits.ok()) {
      return Fail(fits.status().WithPrefix("claim " + ClaimName(at.claim) + ", request " +
                                           request.name + ": checking capacity for device " +
                                           candidates_[candidate].Key()));
    }
    if (!*fits) continue;
    Rollback undo;
    Result<bool> taken = AllocateDevice(at, candidate, false, &undo);
    if (!taken.ok()) return Fail(taken.status());
    if (!*taken) continue;
    // Combinations, not permutations: the request's next device comes after this one (in
    // the search order).
    const Outcome outcome = AllocateOne(next, in_subrequest, position + 1);
    if (outcome == Outcome::kDone) return outcome;
    Undo(at, candidate, undo);
    if (outcome != Outcome::kFailed) return outcome;
  }
  return Outcome::kFailed;
}

Result<bool> DeviceSearch::AllocateDevice(const SearchPosition& at, int candidate, bool must,
                                          Rollback* undo) {
  const RequestData& request = requests_[at.claim][at.request][at.sub];
  Candidate& c = candidates_[candidate];
  const bool multiple = c.device->allow_multiple_allocations;
  if (!multiple && request.admin_access && AllocatingForClaim(candidate, at.claim)) return false;
  if (!request.admin_access && InUse(candidate)) return false;

  *undo = Rollback{};
  undo->previous_results = results_[at.claim].size();
  // A share of a device already in use does not consume its counters again.
  const bool skip_counters = multiple && CapacityInUse(candidate);
  if (!skip_counters && !c.device->consumes_counters.empty()) {
    if (!ReserveCounters(candidate)) return false;
    undo->counters_reserved = true;
  }
  if (TaintPreventsAllocation(*c.device, *request.spec)) {
    Undo(at, candidate, *undo);
    return false;
  }
  for (Constraint& constraint : constraints_[at.claim]) {
    if (!constraint.Add(request, c)) {
      Undo(at, candidate, *undo);
      if (must) {
        return Status::Failed("claim " + ClaimName(at.claim) + ", request " + request.name +
                              ": cannot add device " + c.Key() +
                              " because a claim constraint would not be satisfied");
      }
      return false;
    }
    ++undo->constraints_added;
  }
  if (!multiple) {
    c.allocating_claims.push_back(at.claim);
    undo->marked = true;
  }
  Result<bool> fits = FitsRemainingCapacity(request, candidate);
  if (!fits.ok()) {
    Undo(at, candidate, *undo);
    return fits.status().WithPrefix("claim " + ClaimName(at.claim) + ", request " + request.name +
                                    ": rechecking capacity for device " + c.Key());
  }
  if (!*fits) {
    Undo(at, candidate, *undo);
    return false;
  }
  DeviceResult result{candidate, &request, multiple, {}};
  if (multiple) {
    Result<CapacityAmounts> consumed =
        ConsumedCapacity(request.spec->capacity_requests, c.device->capacity);
    if (!consumed.ok()) {
      Undo(at, candidate, *undo);
      return consumed.status().WithPrefix("claim " + ClaimName(at.claim) + ", request " +
                                          request.name +
                                          ": computing consumed capacity for device " + c.Key());
    }
    undo->capacity_entry_existed = c.allocating_capacity.has_value();
    if (!c.allocating_capacity) c.allocating_capacity.emplace();
    for (const auto& [name, amount] : *consumed) (*c.allocating_capacity)[name] += amount;
    undo->capacity_inserted = true;
    undo->consumed = *consumed;
    result.consumed = std::move(*consumed);
  }
  results_[at.claim].push_back(std::move(result));
  undo->result_added = true;
  return true;
}

void DeviceSearch::Undo(const SearchPosition& at, int candidate, const Rollback& undo) {
  Candidate& c = candidates_[candidate];
  const RequestData& request = requests_[at.claim][at.request][at.sub];
  if (undo.result_added) results_[at.claim].resize(undo.previous_results);
  if (undo.capacity_inserted && c.allocating_capacity) {
    // ConsumedCapacityCollection.Remove drops an entry that is all zero; an earlier share
    // of the device keeps it (as an empty entry: "shared") though.
    bool empty = true;
    for (auto& [name, amount] : *c.allocating_capacity) {
      if (auto it = undo.consumed.find(name); it != undo.consumed.end()) amount -= it->second;
      if (amount != 0) empty = false;
    }
    if (empty) {
      c.allocating_capacity.reset();
      if (undo.capacity_entry_existed) c.allocating_capacity.emplace();
    }
  }
  if (undo.marked) {
    auto& claims = c.allocating_claims;
    claims.erase(std::find(claims.begin(), claims.end(), at.claim));
  }
  std::vector<Constraint>& constraints = constraints_[at.claim];
  for (int i = undo.constraints_added - 1; i >= 0; --i) constraints[i].Remove(request);
  if (undo.counters_reserved) ReleaseCounters(candidate);
}

const std::map<std::string, Counters>& DeviceSearch::AvailableCounters(int pool_index) {
  std::optional<std::map<std::string, Counters>>& available = available_counters_[pool_index];
  if (available) return *available;
  const Pool& pool = pools_[pool_index];
  available.emplace();
  for (const auto& [name, set] : pool.counter_sets) (*available)[name] = set->counters;
  // Counters that allocated devices consume (this search's are in consumed_counters_).
  for (const auto* slices : {&pool.slices_on_node, &pool.slices_elsewhere}) {
    for (const ResourceSlice* slice : *slices) {
      for (const Device& device : slice->devices) {
        if (!allocated_.Allocated(DeviceKey(slice->driver, slice->pool.name, device.name))) {
          continue;
        }
        for (const DeviceCounterConsumption& consumption : device.consumes_counters) {
          auto set = available->find(consumption.counter_set);
          if (set == available->end()) continue;
          for (const auto& [name, amount] : consumption.counters) {
            // Over-allocation leaves a negative amount: nothing is available then.
            if (auto it = set->second.find(name); it != set->second.end()) it->second -= amount;
          }
        }
      }
    }
  }
  return *available;
}

bool DeviceSearch::ReserveCounters(int candidate) {
  const Candidate& c = candidates_[candidate];
  const std::map<std::string, Counters>& available = AvailableCounters(c.pool);
  std::map<std::string, Counters>& consumed = consumed_counters_[c.pool];
  for (const DeviceCounterConsumption& consumption : c.device->consumes_counters) {
    Counters& set = consumed[consumption.counter_set];
    for (const auto& [name, amount] : consumption.counters) set[name] += amount;
  }
  // Every counter of the pool is checked, as upstream does (an over-allocated counter of
  // another set refuses the device too).
  for (const auto& [set_name, counters] : available) {
    auto consumed_set = consumed.find(set_name);
    for (const auto& [name, amount] : counters) {
      Milli used = 0;
      if (consumed_set != consumed.end()) {
        if (auto it = consumed_set->second.find(name); it != consumed_set->second.end()) {
          used = it->second;
        }
      }
      if (amount < used) {
        ReleaseCounters(candidate);
        return false;
      }
    }
  }
  return true;
}

void DeviceSearch::ReleaseCounters(int candidate) {
  const Candidate& c = candidates_[candidate];
  std::map<std::string, Counters>& consumed = consumed_counters_[c.pool];
  for (const DeviceCounterConsumption& consumption : c.device->consumes_counters) {
    Counters& set = consumed[consumption.counter_set];
    for (const auto& [name, amount] : consumption.counters) set[name] -= amount;
  }
}

}  // namespace gantry::dra

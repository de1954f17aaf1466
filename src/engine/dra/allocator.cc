// Allocate: upstream's validation of the claims before the search (the devices each
// request needs, its class, the constraints), the selectors, and the results.
#include "engine/dra/allocator.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>
#include <utility>

#include "engine/dra/preference.h"
#include "engine/dra/search.h"

namespace gantry::dra {

DeviceSearch::DeviceSearch(const Inventory& inventory, const NodeRef& node,
                           std::span<const ResourceClaim* const> claims,
                           const AllocatedState& allocated, const SelectorVerdicts& verdicts,
                           const AllocateOptions& options)
    : inventory_(inventory),
      node_(node),
      claims_(claims),
      allocated_(allocated),
      verdicts_(verdicts),
      options_(options),
      pools_(GatherPools(inventory, node)) {
  std::string key;
  for (int p = 0; p < static_cast<int>(pools_.size()); ++p) {
    const Pool& pool = pools_[p];
    if (pool.incomplete || pool.invalid) continue;  // nothing is allocated from those
    for (const ResourceSlice* slice : pool.slices_on_node) {
      for (const Device& device : slice->devices) {
        Candidate c;
        c.pool = p;
        c.slice = slice;
        c.device = &device;
        if (!allocated_.empty()) {
          // One buffer for every device's key: this runs for each node a pod is tried on.
          key.assign(pool.driver).append("/").append(pool.name).append("/").append(device.name);
          c.dedicated = allocated_.Dedicated(key);
          c.allocated_capacity = allocated_.ConsumedCapacity(key);
          c.shared = allocated_.Shared(key) || c.allocated_capacity != nullptr;
        }
        candidates_.push_back(std::move(c));
      }
    }
  }
  search_order_.resize(candidates_.size());
  for (size_t i = 0; i < search_order_.size(); ++i) search_order_[i] = static_cast<int>(i);
  available_counters_.resize(pools_.size());
  consumed_counters_.resize(pools_.size());
  if (options_.preference != nullptr || options_.pack_shared) {
    // (the preference's rank, what is left): lower first; ties keep upstream's order.
    std::vector<std::pair<int64_t, Milli>> rank(candidates_.size(), {0, kWholeLeft});
    for (size_t i = 0; i < rank.size(); ++i) {
      if (options_.preference != nullptr) {
        rank[i].first = options_.preference->Rank(*candidates_[i].slice, *candidates_[i].device);
      }
      if (options_.pack_shared) rank[i].second = LeftOf(static_cast<int>(i));
    }
    std::stable_sort(search_order_.begin(), search_order_.end(),
                     [&](int a, int b) { return rank[a] < rank[b]; });
  }
  results_.resize(claims_.size());
}

namespace {

// part / whole in thousandths, 0 to kWholeLeft, without overflow for amounts in milli.
Milli Thousandths(Milli part, Milli whole) {
  if (whole <= 0) return DeviceSearch::kWholeLeft;
  part = std::clamp<Milli>(part, 0, whole);
  constexpr Milli kSafe = std::numeric_limits<Milli>::max() / DeviceSearch::kWholeLeft;
  if (part <= kSafe) return part * DeviceSearch::kWholeLeft / whole;
  return part / (whole / DeviceSearch::kWholeLeft);  // whole >= part > kSafe: no zero divisor
}

}  // namespace

Milli DeviceSearch::LeftOf(int candidate) {
  const Candidate& c = candidates_[candidate];
  Milli left = kWholeLeft;
  if (!c.device->consumes_counters.empty()) {
    const Pool& pool = pools_[c.pool];
    const std::map<std::string, Counters>& available = AvailableCounters(c.pool);
    for (const DeviceCounterConsumption& consumption : c.device->consumes_counters) {
      auto set = pool.counter_sets.find(consumption.counter_set);
      auto have = available.find(consumption.counter_set);
      if (set == pool.counter_sets.end() || have == available.end()) continue;
      for (const auto& [name, amount] : consumption.counters) {
        auto total = set->second->counters.find(name);
        auto free = have->second.find(name);
        if (total == set->second->counters.end() || free == have->second.end()) continue;
        left = std::min(left, Thousandths(free->second, total->second));
      }
    }
  }
  if (c.allocated_capacity != nullptr) {
    for (const auto& [name, consumed] : *c.allocated_capacity) {
      auto capacity = c.device->capacity.find(name);
      if (capacity == c.device->capacity.end()) continue;
      left = std::min(left, Thousandths(capacity->second.value - consumed, capacity->second.value));
    }
  }
  return left;
}

std::string DeviceSearch::ClaimName(int claim) const {
  const ResourceClaim& c = *claims_[claim];
  return c.name_space.empty() ? c.name : c.name_space + "/" + c.name;
}

bool DeviceSearch::AnyInvalidPool() const {
  return std::any_of(pools_.begin(), pools_.end(), [](const Pool& pool) { return pool.invalid; });
}

Result<bool> DeviceSearch::SelectorsMatch(int claim, const DeviceClass* device_class,
                                          const std::vector<std::string>& selectors,
                                          int candidate) {
  const Candidate& c = candidates_[candidate];
  const DeviceRef device{c.slice->driver, c.slice->pool.name, *c.device};
  for (size_t i = 0; i < selectors.size(); ++i) {
    Result<bool> matches = verdicts_.Matches(selectors[i], device);
    if (!matches.ok()) {
      const std::string owner =
          device_class ? "class " + device_class->name : "claim " + ClaimName(claim);
      const std::string selector = owner + ": selector #" + std::to_string(i);
      if (matches.status().code() == Status::Code::kInvalidArgument) {
        return matches.status().WithPrefix(selector + ": CEL compile error");
      }
      return matches.status().WithPrefix(selector + " on device " + c.Key() +
                                         ": CEL runtime error");
    }
    if (!*matches) return false;
  }
  return true;
}

Result<bool> DeviceSearch::IsSelectable(const RequestData& request, int candidate) {
  int8_t& known = selectable_[static_cast<size_t>(request.cache_row) * candidates_.size() +
                              static_cast<size_t>(candidate)];
  if (known >= 0) return known == 1;
  Result<bool> matches = SelectorsMatch(request.claim, request.device_class,
                                        request.device_class->selectors, candidate);
  if (matches.ok() && *matches) {
    matches = SelectorsMatch(request.claim, nullptr, request.spec->selectors, candidate);
  }
  if (!matches.ok()) return matches;
  const Candidate& c = candidates_[candidate];
  if (*matches && c.slice->per_device_node_selection) {
    *matches = c.device->node_selection && NodeMatches(node_, *c.device->node_selection);
  }
  known = *matches ? 1 : 0;
  return *matches;
}

Result<RequestData> DeviceSearch::ValidateRequest(int claim, const std::string& name,
                                                  const std::string& parent,
                                                  const DeviceRequestSpec& spec,
                                                  bool admin_access) {
  const std::string where = "claim " + ClaimName(claim) + ", request " + name;
  if (admin_access && !options_.admin_access_allowed) {
    return Status::Invalid(where + ": admin access to devices requires the `" +
                           std::string(kAdminAccessNamespaceLabel) +
                           ": true` label on the containing namespace");
  }
  if (spec.device_class_name.empty()) {
    return Status::Invalid(where + ": missing device class name (unsupported request type?)");
  }
  RequestData request;
  request.spec = &spec;
  request.claim = claim;
  request.name = name;
  request.parent = parent;
  request.admin_access = admin_access;
  request.device_class = inventory_.FindClass(spec.device_class_name);
  if (request.device_class == nullptr) {
    return Status::NotFound(where + ": could not retrieve device class " + spec.device_class_name +
                            ": deviceclass.resource.k8s.io \"" + spec.device_class_name +
                            "\" not found");
  }
  request.cache_row = cache_rows_++;
  selectable_.resize(selectable_.size() + candidates_.size(), int8_t{-1});

  if (spec.allocation_mode == AllocationMode::kExactCount) {
    request.num_devices = spec.count;
    return request;
  }
  // All: which devices is known now. A pool being updated or invalid makes "all" unknown.
  size_t next = 0;
  for (int p = 0; p < static_cast<int>(pools_.size()); ++p) {
    const Pool& pool = pools_[p];
    if (pool.incomplete) {
      return Status::Failed(where + ": asks for all devices, but resource pool " + pool.Id() +
                            " is currently being updated");
    }
    if (pool.invalid) {
      return Status::Failed(where + ": asks for all devices, but resource pool " + pool.Id() +
                            " is currently invalid");
    }
    for (; next < candidates_.size() && candidates_[next].pool == p; ++next) {
      const int candidate = static_cast<int>(next);
      Result<bool> selectable = IsSelectable(request, candidate);
      if (!selectable.ok()) return selectable.status();
      if (!*selectable) continue;
      // Only the device's own capacity: one in use stays in the list, and "all" fails.
      const Device& device = *candidates_[next].device;
      Result<bool> fits = FitsCapacity(spec.capacity_requests, device.capacity, nullptr, nullptr);
      if (!fits.ok()) {
        return fits.status().WithPrefix(where + ": checking capacity for device " + device.name);
      }
      if (*fits) request.all_devices.push_back(candidate);
    }
  }
  request.num_devices = static_cast<int64_t>(request.all_devices.size());
  return request;
}

Status DeviceSearch::Prepare() {
  requests_.resize(claims_.size());
  constraints_.resize(claims_.size());
  for (int claim = 0; claim < static_cast<int>(claims_.size()); ++claim) {
    const ResourceClaimSpec& spec = claims_[claim]->spec;
    int64_t claim_devices = 0;
    for (const DeviceRequest& request : spec.requests) {
      std::vector<RequestData>& alternatives = requests_[claim].emplace_back();
      int64_t request_devices = 0;
      if (!request.first_available.empty()) {
        // Only a lower bound: which subrequest is chosen is not known yet.
        request_devices = std::numeric_limits<int64_t>::max();
        for (const DeviceSubRequest& sub : request.first_available) {
          Result<RequestData> data =
              ValidateRequest(claim, sub.name, request.name, sub.spec, false);
          if (!data.ok()) return data.status();
          request_devices = std::min(request_devices, data->num_devices);
          alternatives.push_back(std::move(*data));
        }
      } else if (request.exactly) {
        Result<RequestData> data = ValidateRequest(claim, request.name, "", *request.exactly,
                                                   request.exactly->admin_access);
        if (!data.ok()) return data.status();
        request_devices = data->num_devices;
        alternatives.push_back(std::move(*data));
      } else {
        return Status::Invalid("claim " + ClaimName(claim) + ", request " + request.name +
                               ": unknown request type");
      }
      if (request_devices > kMaxAllocationResults - claim_devices) {
        return Status::Invalid("claim " + ClaimName(claim) + ", request " + request.name +
                               ": adding " + std::to_string(request_devices) +
                               " devices exceeds the claim limit of " +
                               std::to_string(kMaxAllocationResults) + ", with " +
                               std::to_string(claim_devices) + " already accounted for");
      }
      claim_devices += request_devices;
    }
    for (size_t i = 0; i < spec.constraints.size(); ++i) {
      const DeviceConstraint& given = spec.constraints[i];
      Constraint constraint;
      if (given.match_attribute) {
        constraint.attribute = *given.match_attribute;
      } else if (given.distinct_attribute) {
        constraint.distinct = true;
        constraint.attribute = *given.distinct_attribute;
      } else {
        return Status::Invalid("claim " + ClaimName(claim) + ", constraint #" + std::to_string(i) +
                               ": empty constraint (unsupported constraint type?)");
      }
      constraint.requests.insert(given.requests.begin(), given.requests.end());
      constraints_[claim].push_back(std::move(constraint));
    }
  }
  return Status::Ok();
}

namespace {

// A UUID-shaped share ID (RFC 4122 form, lowercase: what the API validates) from a 128-bit
// FNV-1a hash of `seed`.
std::string ShareIdFrom(const std::string& seed) {
  uint64_t high = 0xcbf29ce484222325ULL;
  uint64_t low = 0x84222325cbf29ce4ULL;
  for (unsigned char ch : seed) {
    high = (high ^ ch) * 0x100000001b3ULL;
    low = (low ^ static_cast<unsigned char>(ch + 0x5a)) * 0x100000001b3ULL;
  }
  high = (high & ~0xf000ULL) | 0x4000ULL;          // version 4
  low = (low & ~(0xcULL << 60)) | (0x8ULL << 60);  // RFC 4122 variant
  char text[37];
  std::snprintf(text, sizeof(text), "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(high >> 32), static_cast<unsigned>((high >> 16) & 0xffff),
                static_cast<unsigned>(high & 0xffff), static_cast<unsigned>(low >> 48),
                static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return text;
}

// createNodeSelector's dedup: same key, operator and set of values.
bool SameRequirement(const SelectorRequirement& a, const SelectorRequirement& b) {
  if (a.key != b.key || a.op != b.op) return false;
  return std::set<std::string>(a.values.begin(), a.values.end()) ==
         std::set<std::string>(b.values.begin(), b.values.end());
}

}  // namespace

// Upstream's "populate configs": each class's configs once, for every request that used
// the class (the subrequest chosen, for a firstAvailable request); then the claim's
// configs that apply to a request allocated; a list naming every request becomes "all".
std::vector<AllocationConfig> DeviceSearch::Configs(int claim) const {
  const ResourceClaimSpec& spec = claims_[claim]->spec;
  const std::vector<std::vector<RequestData>>& requests = requests_[claim];
  // The chosen alternative of each request.
  std::vector<const RequestData*> chosen;
  for (const std::vector<RequestData>& alternatives : requests) {
    chosen.push_back(&alternatives[alternatives.front().selected_sub]);
  }
  std::vector<AllocationConfig> configs;
  std::map<std::string, std::pair<size_t, size_t>> class_configs;  // class -> [begin, end)
  for (const RequestData* request : chosen) {
    const std::string name = request->FullName();
    auto known = class_configs.find(request->device_class->name);
    if (known != class_configs.end()) {
      for (size_t i = known->second.first; i < known->second.second; ++i) {
        configs[i].requests.push_back(name);
      }
      continue;
    }
    const size_t begin = configs.size();
    for (const DeviceClass::Config& given : request->device_class->config) {
      configs.push_back({true, {name}, given.driver, given.parameters_json});
    }
    class_configs[request->device_class->name] = {begin, configs.size()};
  }
  const auto names = [&](const std::vector<std::string>& list, size_t i) {
    const auto listed = [&](const std::string& name) {
      return std::find(list.begin(), list.end(), name) != list.end();
    };
    return listed(spec.requests[i].name) || (chosen[i]->is_sub() && listed(chosen[i]->FullName()));
  };
  for (const ClaimConfig& given : spec.config) {
    bool applies = given.requests.empty();
    for (size_t i = 0; !applies && i < spec.requests.size(); ++i)
      applies = names(given.requests, i);
    if (applies) configs.push_back({false, given.requests, given.driver, given.parameters_json});
  }
  for (AllocationConfig& config : configs) {
    if (config.requests.empty()) continue;
    bool all = true;
    for (size_t i = 0; all && i < spec.requests.size(); ++i) all = names(config.requests, i);
    if (all) config.requests.clear();
  }
  return configs;
}

Result<std::vector<Allocation>> DeviceSearch::Results() const {
  std::vector<Allocation> allocations(claims_.size());
  std::map<std::string, std::set<std::string>> new_share_ids;  // device key -> share IDs
  for (size_t claim = 0; claim < claims_.size(); ++claim) {
    Allocation& allocation = allocations[claim];
    std::vector<SelectorRequirement> term;
    bool on_node_only = false;
    for (size_t i = 0; i < results_[claim].size(); ++i) {
      const DeviceResult& found = results_[claim][i];
      const Candidate& c = candidates_[found.candidate];
      const RequestData& request = *found.request;
      AllocationResult& result = allocation.results.emplace_back();
      result.request = request.FullName();
      result.driver = c.slice->driver;
      result.pool = c.slice->pool.name;
      result.device = c.device->name;
      result.admin_access = request.admin_access;
      result.tolerations = request.spec->tolerations;
      result.binding_conditions = c.device->binding_conditions;
      result.binding_failure_conditions = c.device->binding_failure_conditions;
      if (found.shared) {
        const std::string key = c.Key();
        std::set<std::string>& made = new_share_ids[key];
        const std::string seed = claims_[claim]->uid + "|" + ClaimName(static_cast<int>(claim)) +
                                 "|" + std::to_string(i) + "|" + key;
        std::string id = ShareIdFrom(seed);
        for (int attempt = 1; allocated_.HasShareId(key, id) || made.count(id) > 0; ++attempt) {
          id = ShareIdFrom(seed + "#" + std::to_string(attempt));
        }
        made.insert(id);
        result.share_id = std::move(id);
        result.consumed_capacity = found.consumed;
        for (const auto& [name, capacity] : c.device->capacity) {
          if (capacity.bare_name && found.consumed.count(name)) result.consumed_bare.insert(name);
        }
      }
      // createNodeSelector: a device local to the node (or binding to it) pins the
      // allocation to the node; otherwise the devices' one-term selectors are merged.
      const NodeSelection* selection =
          c.slice->per_device_node_selection
              ? (c.device->node_selection ? &*c.device->node_selection : nullptr)
              : (c.slice->node_selection ? &*c.slice->node_selection : nullptr);
      if ((selection && selection->node_name && !selection->node_name->empty()) ||
          c.device->binds_to_node) {
        on_node_only = true;
      }
      if (on_node_only || !selection || !selection->node_selector) continue;
      const auto& terms = *selection->node_selector;
      if (terms.size() > 1) {
        return Status::Invalid("create NodeSelector for claim " + claims_[claim]->name +
                               ": unsupported ResourceSlice.NodeSelector with " +
                               std::to_string(terms.size()) + " terms");
      }
      for (const auto& given : terms) {
        for (const SelectorRequirement& requirement : given) {
          const bool present = std::any_of(term.begin(), term.end(), [&](const auto& have) {
            return SameRequirement(have, requirement);
          });
          if (!present) term.push_back(requirement);
        }
      }
    }
    allocation.config = Configs(static_cast<int>(claim));
    if (on_node_only) {
      allocation.node_selector.emplace();
      allocation.node_selector->push_back({SelectorRequirement{
          std::string(kNodeNameField), SelectorRequirement::Op::kIn, {std::string(node_.name)}}});
    } else if (!term.empty()) {
      allocation.node_selector.emplace();
      allocation.node_selector->push_back(std::move(term));
    }
  }
  return allocations;
}

Result<std::optional<std::vector<Allocation>>> Allocate(
    const Inventory& inventory, const NodeRef& node, std::span<const ResourceClaim> claims,
    const AllocatedState& allocated, const SelectorVerdicts& verdicts,
    const AllocateOptions& options, AllocateReport* report) {
  std::vector<const ResourceClaim*> pointers;
  pointers.reserve(claims.size());
  for (const ResourceClaim& claim : claims) pointers.push_back(&claim);
  return Allocate(inventory, node, std::span<const ResourceClaim* const>(pointers), allocated,
                  verdicts, options, report);
}

Result<std::optional<std::vector<Allocation>>> Allocate(
    const Inventory& inventory, const NodeRef& node, std::span<const ResourceClaim* const> claims,
    const AllocatedState& allocated, const SelectorVerdicts& verdicts,
    const AllocateOptions& options, AllocateReport* report) {
  DeviceSearch search(inventory, node, claims, allocated, verdicts, options);
  Status prepared = search.Prepare();
  if (!prepared.ok()) return prepared;
  const DeviceSearch::Outcome outcome = search.AllocateOne({}, false, 0);
  if (report != nullptr) report->steps = search.steps();
  if (outcome == DeviceSearch::Outcome::kError) return search.error();
  if (outcome == DeviceSearch::Outcome::kTooManyResults) {
    return Status::Failed(
        "allocation max size exceeded");  // as upstream's errAllocationResultMaxSizeExceeded
  }
  if (outcome != DeviceSearch::Outcome::kDone) {
    if (report != nullptr && search.AnyInvalidPool()) {
      report->unschedulable_reason = "invalid resource pools were encountered";
    }
    return std::optional<std::vector<Allocation>>();
  }
  Result<std::vector<Allocation>> allocations = search.Results();
  if (!allocations.ok()) return allocations.status();
  return std::optional<std::vector<Allocation>>(std::move(*allocations));
}

}  // namespace gantry::dra

#include "engine/dra/accounting.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

namespace gantry::dra {
namespace {

constexpr Milli kUnit = 1000;

// driver/pool/counter-set: counter sets are named per pool.
std::string CounterSetKey(const ResourceSlice& slice, const std::string& set) {
  return DeviceKey(slice.driver, slice.pool.name, set);
}

void AddTo(ResourceVector* v, ResourceId id, Milli amount) {
  v->Set(id, v->Get(id) + amount);
}

Milli PrefixSum(const Counters& counters, std::string_view prefix) {
  Milli sum = 0;
  for (const auto& [name, amount] : counters) {
    if (std::string_view(name).starts_with(prefix)) sum += amount;
  }
  return sum;
}

// The node a device belongs to, or "" when several nodes can reach it.
std::string_view OwningNode(const ResourceSlice& slice, const Device& device) {
  const std::optional<NodeSelection>& selection =
      slice.per_device_node_selection ? device.node_selection : slice.node_selection;
  if (selection && selection->node_name) return *selection->node_name;
  return {};
}

}  // namespace

DeviceAccounting::DeviceAccounting(std::span<const ClassResource> map, const Inventory& inventory,
                                   const SelectorVerdicts* verdicts)
    : map_(map.begin(), map.end()) {
  if (map_.empty()) return;
  std::map<std::string, const Counters*> counter_sets;
  for (const ResourceSlice& slice : inventory.slices()) {
    for (const CounterSet& set : slice.shared_counters) {
      counter_sets.emplace(CounterSetKey(slice, set.name), &set.counters);
    }
  }
  // Per node and resource: the devices without counters, and the counter sets used.
  std::unordered_map<std::string, std::map<ResourceId, std::set<std::string>>> node_sets;
  for (const ClassResource& entry : map_) {
    const DeviceClass* device_class = inventory.FindClass(entry.device_class);
    if (device_class == nullptr) continue;
    auto& members = members_[entry.device_class];
    for (const ResourceSlice& slice : inventory.slices()) {
      for (const Device& device : slice.devices) {
        const DeviceRef ref{slice.driver, slice.pool.name, device};
        bool member = true;
        for (const std::string& selector : device_class->selectors) {
          Result<bool> matches = verdicts ? verdicts->Matches(selector, ref) : Result<bool>(false);
          if (!matches.ok() || !*matches) {
            member = false;
            break;
          }
        }
        if (!member) continue;
        Milli amount = kUnit;
        if (!entry.counter_prefix.empty()) {
          Milli used = 0;
          Milli total = 0;
          for (const DeviceCounterConsumption& c : device.consumes_counters) {
            used += PrefixSum(c.counters, entry.counter_prefix);
            auto set = counter_sets.find(CounterSetKey(slice, c.counter_set));
            if (set != counter_sets.end()) total += PrefixSum(*set->second, entry.counter_prefix);
          }
          if (total > 0 && used > 0) amount = std::min(kUnit, used * kUnit / total);
        }
        members[DeviceKey(slice.driver, slice.pool.name, device.name)] = amount;
        auto& smallest = smallest_.try_emplace(entry.device_class, amount).first->second;
        smallest = std::min(smallest, amount);

        const std::string_view node = OwningNode(slice, device);
        if (node.empty()) continue;
        auto& sets = node_sets[std::string(node)][entry.resource];
        if (device.consumes_counters.empty()) {
          // A device of its own: one unit, named so that two classes naming it count it once.
          sets.insert("device:" + DeviceKey(slice.driver, slice.pool.name, device.name));
        }
        for (const DeviceCounterConsumption& c : device.consumes_counters) {
          sets.insert("counters:" + CounterSetKey(slice, c.counter_set));
        }
      }
    }
  }
  for (const auto& [node, by_resource] : node_sets) {
    ResourceVector& capacity = node_capacity_[node];
    for (const auto& [resource, sets] : by_resource) {
      AddTo(&capacity, resource, static_cast<Milli>(sets.size()) * kUnit);
    }
  }
}

const ResourceVector& DeviceAccounting::NodeCapacity(std::string_view node_name) const {
  static const ResourceVector kNone;
  auto it = node_capacity_.find(std::string(node_name));
  return it == node_capacity_.end() ? kNone : it->second;
}

const ClassResource* DeviceAccounting::EntryFor(std::string_view device_class) const {
  for (const ClassResource& entry : map_) {
    if (entry.device_class == device_class) return &entry;
  }
  return nullptr;
}

Milli DeviceAccounting::SmallestOf(const DeviceRequestSpec& spec) const {
  auto it = smallest_.find(spec.device_class_name);
  // No device of the class is published: nothing can be allocated, count a unit.
  return it == smallest_.end() ? kUnit : it->second;
}

ResourceVector DeviceAccounting::ClaimRequests(std::span<const ResourceClaim* const> claims) const {
  ResourceVector out;
  if (map_.empty()) return out;
  for (const ResourceClaim* claim : claims) {
    if (claim == nullptr) continue;
    if (claim->allocation) {
      for (const AllocationResult& result : claim->allocation->results) {
        if (result.admin_access) continue;  // takes no device from anyone
        const std::string_view request =
            std::string_view(result.request)
                .substr(0, std::min(result.request.size(), result.request.find('/')));
        const std::string_view sub =
            result.request.size() > request.size()
                ? std::string_view(result.request).substr(request.size() + 1)
                : std::string_view();
        const DeviceRequestSpec* spec = nullptr;
        for (const DeviceRequest& r : claim->spec.requests) {
          if (r.name != request) continue;
          if (r.exactly) spec = &*r.exactly;
          for (const DeviceSubRequest& s : r.first_available) {
            if (s.name == sub) spec = &s.spec;
          }
        }
        if (spec == nullptr) continue;
        const ClassResource* entry = EntryFor(spec->device_class_name);
        if (entry == nullptr) continue;
        Milli amount = SmallestOf(*spec);
        auto members = members_.find(spec->device_class_name);
        if (members != members_.end()) {
          auto device = members->second.find(DeviceKey(result.driver, result.pool, result.device));
          if (device != members->second.end()) amount = device->second;
        }
        AddTo(&out, entry->resource, amount);
      }
      continue;
    }
    for (const DeviceRequest& request : claim->spec.requests) {
      if (request.exactly) {
        const DeviceRequestSpec& spec = *request.exactly;
        const ClassResource* entry = EntryFor(spec.device_class_name);
        if (entry == nullptr || spec.allocation_mode != AllocationMode::kExactCount ||
            spec.admin_access) {
          continue;
        }
        AddTo(&out, entry->resource, spec.count * SmallestOf(spec));
        continue;
      }
      // firstAvailable: the least any subrequest can count as, for the resource they
      // share (subrequests of different resources count nothing until allocated).
      std::optional<ResourceId> resource;
      Milli least = std::numeric_limits<Milli>::max();
      for (const DeviceSubRequest& sub : request.first_available) {
        const ClassResource* entry = EntryFor(sub.spec.device_class_name);
        if (entry == nullptr || (resource && *resource != entry->resource) ||
            sub.spec.allocation_mode != AllocationMode::kExactCount) {
          resource.reset();
          least = 0;
          break;
        }
        resource = entry->resource;
        least = std::min(least, sub.spec.count * SmallestOf(sub.spec));
      }
      if (resource && least > 0) AddTo(&out, *resource, least);
    }
  }
  return out;
}

}  // namespace gantry::dra

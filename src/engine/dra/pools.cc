#include "engine/dra/pools.h"

#include <algorithm>
#include <set>
#include <utility>

namespace gantry::dra {

bool NodeMatches(const NodeRef& node, const NodeSelection& selection) {
  if (selection.node_name && !selection.node_name->empty()) {
    return *selection.node_name == node.name;
  }
  if (selection.all_nodes) return true;
  if (selection.node_selector) {
    return SelectorTermsMatch(*selection.node_selector, node.labels, node.name);
  }
  return false;
}

namespace {

using PoolKey = std::pair<std::string, std::string>;  // driver, pool

bool SelectsByNode(const NodeSelection& selection) {
  return (selection.node_name && !selection.node_name->empty()) || selection.all_nodes ||
         selection.node_selector.has_value();
}

// Whether the node sees the slice; unset when the slice's node selection is of no kind
// known here (upstream skips such a slice as some future extension).
std::optional<bool> Relevant(const ResourceSlice& slice, const NodeRef& node) {
  if (slice.node_selection && SelectsByNode(*slice.node_selection)) {
    return NodeMatches(node, *slice.node_selection);
  }
  if (slice.per_device_node_selection) {
    return std::any_of(slice.devices.begin(), slice.devices.end(), [&](const Device& device) {
      return device.node_selection && NodeMatches(node, *device.node_selection);
    });
  }
  return std::nullopt;
}

// addSlice: a newer generation replaces the slices gathered so far, an older one is
// ignored.
void AddSlice(std::map<PoolKey, std::vector<const ResourceSlice*>>* pools,
              const ResourceSlice& slice) {
  std::vector<const ResourceSlice*>& gathered = (*pools)[{slice.driver, slice.pool.name}];
  if (!gathered.empty()) {
    const int64_t generation = gathered.front()->pool.generation;
    if (slice.pool.generation < generation) return;
    if (slice.pool.generation > generation) gathered.clear();
  }
  gathered.push_back(&slice);
}

// checkSlicesInPool: every slice of the pool with `generation`, or nullopt when some slice
// has a newer one (the driver is replacing the pool: ignore it).
std::optional<std::vector<const ResourceSlice*>> AllSlicesOfGeneration(const Inventory& inventory,
                                                                       const PoolKey& key,
                                                                       int64_t generation) {
  std::vector<const ResourceSlice*> found;
  for (const ResourceSlice& slice : inventory.slices()) {
    if (slice.driver != key.first || slice.pool.name != key.second) continue;
    if (slice.pool.generation > generation) return std::nullopt;
    if (slice.pool.generation == generation) found.push_back(&slice);
  }
  return found;
}

Pool InvalidPool(const PoolKey& key, std::string reason) {
  Pool pool;
  pool.driver = key.first;
  pool.name = key.second;
  pool.invalid = true;
  pool.invalid_reason = std::move(reason);
  return pool;
}

// validateDeviceCounterConsumption.
std::optional<std::string> CheckCounterReferences(const Pool& pool,
                                                  const std::vector<const ResourceSlice*>& slices) {
  for (const ResourceSlice* slice : slices) {
    for (const Device& device : slice->devices) {
      for (const DeviceCounterConsumption& consumption : device.consumes_counters) {
        auto set = pool.counter_sets.find(consumption.counter_set);
        if (set == pool.counter_sets.end()) {
          return "counter set " + consumption.counter_set + " not found";
        }
        for (const auto& [name, amount] : consumption.counters) {
          if (set->second->counters.count(name) == 0) {
            return "counter " + name + " not found in counter set " + set->first;
          }
        }
      }
    }
  }
  return std::nullopt;
}

// buildPool: `gathered` are the slices the node sees, `all` (when they had to be looked
// up) every slice of the pool's generation.
Pool BuildPool(const PoolKey& key, std::vector<const ResourceSlice*> gathered,
               const std::vector<const ResourceSlice*>* all) {
  std::sort(gathered.begin(), gathered.end(),
            [](const ResourceSlice* a, const ResourceSlice* b) { return a->name < b->name; });
  Pool pool;
  pool.driver = key.first;
  pool.name = key.second;
  std::vector<const ResourceSlice*> counter_slices;
  for (const ResourceSlice* slice : gathered) {
    (slice->shared_counters.empty() ? pool.slices_on_node : counter_slices).push_back(slice);
  }
  if (all != nullptr && all->size() > gathered.size()) {
    std::set<std::string_view> seen;
    for (const ResourceSlice* slice : gathered) seen.insert(slice->name);
    for (const ResourceSlice* slice : *all) {
      if (seen.count(slice->name) > 0) continue;
      (slice->shared_counters.empty() ? pool.slices_elsewhere : counter_slices).push_back(slice);
    }
  }
  std::vector<std::string_view> device_names;
  for (const ResourceSlice* slice : pool.slices_on_node) {
    for (const Device& device : slice->devices) device_names.push_back(device.name);
  }
  std::sort(device_names.begin(), device_names.end());
  if (auto twice = std::adjacent_find(device_names.begin(), device_names.end());
      twice != device_names.end()) {
    return InvalidPool(key, "duplicate device name " + std::string(*twice));
  }
  for (const ResourceSlice* slice : counter_slices) {
    for (const CounterSet& set : slice->shared_counters) {
      if (!pool.counter_sets.emplace(set.name, &set).second) {
        return InvalidPool(key, "duplicate counter set name " + set.name);
      }
    }
  }
  for (const auto* slices : {&pool.slices_on_node, &pool.slices_elsewhere}) {
    if (std::optional<std::string> error = CheckCounterReferences(pool, *slices)) {
      return InvalidPool(key, std::move(*error));
    }
  }
  return pool;
}

bool HasBindingConditions(const Pool& pool) {
  for (const ResourceSlice* slice : pool.slices_on_node) {
    for (const Device& device : slice->devices) {
      if (!device.binding_conditions.empty()) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<Pool> GatherPools(const Inventory& inventory, const NodeRef& node) {
  std::map<PoolKey, std::vector<const ResourceSlice*>> gathered;
  inventory.ForEachSliceForNode(node.name, [&](const ResourceSlice& slice) {
    if (Relevant(slice, node).value_or(false)) AddSlice(&gathered, slice);
  });
  // The map is in (driver, pool) order, the order upstream sorts its pools in.
  std::vector<Pool> pools;
  std::vector<Pool> with_binding_conditions;
  for (auto& [key, slices] : gathered) {
    const ResourcePool& first = slices.front()->pool;
    Pool pool;
    if (static_cast<int64_t>(slices.size()) == first.resource_slice_count) {
      pool = BuildPool(key, std::move(slices), nullptr);
    } else {
      // Slices that the node does not see count towards completeness too.
      std::optional<std::vector<const ResourceSlice*>> all =
          AllSlicesOfGeneration(inventory, key, first.generation);
      if (!all) continue;
      if (static_cast<int64_t>(all->size()) != first.resource_slice_count) {
        pool.driver = key.first;
        pool.name = key.second;
        pool.incomplete = true;
      } else {
        pool = BuildPool(key, std::move(slices), &*all);
      }
    }
    (HasBindingConditions(pool) ? with_binding_conditions : pools).push_back(std::move(pool));
  }
  for (Pool& pool : with_binding_conditions) pools.push_back(std::move(pool));
  return pools;
}

}  // namespace gantry::dra

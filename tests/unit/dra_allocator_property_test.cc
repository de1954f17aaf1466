// A property test of the DRA structured allocator: random small inventories and claims
// (seeded), each answered by the allocator and by an exhaustive search written here from
// the rules (every choice of subrequest and of device set per request, then the whole
// checked at once). They must agree whether the claims can be allocated, and whatever
// the allocator returns must pass the same check. A failure prints its seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/dra/allocator.h"
#include "engine/random.h"

namespace gantry::dra {
namespace {

constexpr const char* kDriver = "driver-a";
constexpr const char* kMemory = "driver-a/mem";
constexpr Milli kShareCapacity = 4000;

class HashVerdicts : public SelectorVerdicts {
 public:
  // "class" matches every device; "sel-N" a device whose name hashes to N's parity.
  Result<bool> Matches(std::string_view expression, const DeviceRef& device) const override {
    if (expression == "class") return true;
    return Verdict(expression, device.device.name);
  }
  static bool Verdict(std::string_view expression, const std::string& device) {
    return (std::hash<std::string>{}(std::string(expression) + "|" + device) >> 3) % 3 != 0;
  }
};

struct Case {
  std::vector<ResourceSlice> slices;
  std::vector<ResourceClaim> claims;
  std::vector<ResourceClaim> allocated;
  std::vector<const Device*> usable;             // by construction: complete pools node-1 sees
  std::map<std::string, std::string> pool_of;    // device name -> pool
  std::map<std::string, Counters> counter_sets;  // pool -> the one set's counters
};

class CaseMaker {
 public:
  explicit CaseMaker(uint64_t seed) : rng_(seed) {}

  int Between(int lo, int hi) { return lo + static_cast<int>(rng_.Uniform(hi - lo + 1)); }
  bool OneIn(int n) { return Between(1, n) == 1; }

  Case Make() {
    Case c;
    const bool allow_incomplete = OneIn(2);
    const int pools = Between(1, 3);
    int device_number = 0;
    for (int p = 0; p < pools; ++p) {
      const std::string pool = "pool-" + std::to_string(p);
      const bool visible = !OneIn(5);
      const bool incomplete = allow_incomplete && OneIn(4);
      const bool partitioned = OneIn(3);
      std::vector<ResourceSlice> slices;
      const int device_slices = Between(1, 2);
      for (int s = 0; s < device_slices; ++s) {
        ResourceSlice slice;
        slice.name = pool + "-slice-" + std::to_string(s);
        slice.driver = kDriver;
        slice.pool = {pool, 2, 0};
        slice.node_selection = NodeSelection{};
        if (visible && OneIn(3)) {
          slice.node_selection->all_nodes = true;
        } else {
          slice.node_selection->node_name = visible ? "node-1" : "node-2";
        }
        const int devices = Between(0, 2);
        for (int d = 0; d < devices; ++d) {
          slice.devices.push_back(
              MakeDevice("dev-" + std::to_string(device_number++), partitioned));
        }
        slices.push_back(std::move(slice));
      }
      if (partitioned) {
        ResourceSlice counters = slices.front();
        counters.name = pool + "-counters";
        counters.devices.clear();
        counters.shared_counters.push_back({"set", {{"units", Between(1, 4) * 1000}}});
        c.counter_sets[pool] = counters.shared_counters[0].counters;
        slices.push_back(std::move(counters));
      }
      if (OneIn(4)) {  // an older generation, never to be used
        ResourceSlice old = slices.front();
        old.name = pool + "-old";
        old.pool.generation = 1;
        old.devices = {MakeDevice("old-" + std::to_string(device_number++), false)};
        old.shared_counters.clear();
        // Before or after the newer ones: either order must leave it out.
        slices.insert(OneIn(2) ? slices.begin() : slices.end(), std::move(old));
      }
      const int current =
          static_cast<int>(std::count_if(slices.begin(), slices.end(), [](const ResourceSlice& s) {
            return s.pool.generation == 2;
          }));
      for (ResourceSlice& slice : slices) {
        slice.pool.resource_slice_count = current + (incomplete ? 1 : 0);
      }
      for (ResourceSlice& slice : slices) c.slices.push_back(std::move(slice));
      (void)visible;
    }
    for (const ResourceSlice& slice : c.slices) {
      for (const Device& device : slice.devices) c.pool_of[device.name] = slice.pool.name;
    }
    // Usable: devices of the current generation of complete pools visible from node-1.
    std::map<std::string, int> present, declared;
    std::map<std::string, bool> seen;
    for (const ResourceSlice& slice : c.slices) {
      if (slice.pool.generation != 2) continue;
      ++present[slice.pool.name];
      declared[slice.pool.name] = static_cast<int>(slice.pool.resource_slice_count);
      if (slice.node_selection->all_nodes || slice.node_selection->node_name == "node-1") {
        seen[slice.pool.name] = true;
      }
    }
    for (const ResourceSlice& slice : c.slices) {
      const std::string& pool = slice.pool.name;
      if (slice.pool.generation != 2 || !seen[pool] || present[pool] != declared[pool]) continue;
      if (!slice.node_selection->all_nodes && slice.node_selection->node_name != "node-1") continue;
      for (const Device& device : slice.devices) c.usable.push_back(&device);
    }
    const bool any_incomplete = std::any_of(present.begin(), present.end(), [&](const auto& entry) {
      return seen[entry.first] && entry.second != declared[entry.first];
    });
    const int claims = Between(1, 2);
    int requests_left = 3;
    for (int i = 0; i < claims && requests_left > 0; ++i) {
      ResourceClaim claim;
      claim.name_space = "default";
      claim.name = "claim-" + std::to_string(i);
      claim.uid = "uid-" + std::to_string(i);
      const int requests = std::min(requests_left, Between(1, 2));
      requests_left -= requests;
      for (int r = 0; r < requests; ++r) {
        DeviceRequest request;
        request.name = "req-" + std::to_string(r);
        if (OneIn(3)) {
          for (int s = 0; s < 2; ++s) {
            request.first_available.push_back({"sub-" + std::to_string(s), MakeSpec(false)});
          }
        } else {
          request.exactly = MakeSpec(!any_incomplete && OneIn(6));
        }
        claim.spec.requests.push_back(std::move(request));
      }
      if (OneIn(3)) {
        DeviceConstraint constraint;
        if (requests > 1 && OneIn(2)) constraint.requests = {"req-1"};
        (OneIn(2) ? constraint.match_attribute : constraint.distinct_attribute) = "driver-a/numa";
        claim.spec.constraints.push_back(constraint);
      }
      c.claims.push_back(std::move(claim));
    }
    // Devices already allocated: whole, or shares of capacity.
    for (const ResourceSlice& slice : c.slices) {
      for (const Device& device : slice.devices) {
        if (!OneIn(4)) continue;
        ResourceClaim holder;
        holder.name = "holder-" + device.name;
        holder.allocation = Allocation{};
        AllocationResult& result = holder.allocation->results.emplace_back();
        result.request = "req-0";
        result.driver = kDriver;
        result.pool = slice.pool.name;
        result.device = device.name;
        if (device.allow_multiple_allocations) {
          result.share_id = "00000000-0000-4000-8000-00000000000" + std::to_string(Between(0, 9));
          result.consumed_capacity[kMemory] = Between(1, 4) * 1000;
        }
        c.allocated.push_back(std::move(holder));
      }
    }
    return c;
  }

 private:
  Device MakeDevice(const std::string& name, bool partitioned) {
    Device device;
    device.name = name;
    if (!OneIn(4)) device.attributes["driver-a/numa"] = int64_t{Between(0, 1)};
    if (OneIn(5)) device.taints.push_back({"bad", "", DeviceTaintEffect::kNoSchedule, {}});
    if (partitioned) device.consumes_counters.push_back({"set", {{"units", Between(1, 2) * 1000}}});
    if (OneIn(3)) {
      device.allow_multiple_allocations = true;
      CapacityRequestPolicy policy;
      policy.default_value = 1000;
      policy.valid_range = CapacityRequestPolicy::Range{1000, kShareCapacity, 1000};
      device.capacity[kMemory] = {kShareCapacity, policy};
    }
    return device;
  }

  DeviceRequestSpec MakeSpec(bool all) {
    DeviceRequestSpec spec;
    spec.device_class_name = "class";
    spec.count = Between(1, 2);
    if (all) spec.allocation_mode = AllocationMode::kAll;
    if (OneIn(2)) spec.selectors.push_back("sel-" + std::to_string(Between(0, 1)));
    if (OneIn(4)) spec.tolerations.push_back({"", DeviceToleration::Op::kExists, "", {}, {}});
    if (OneIn(3)) spec.capacity_requests[kMemory] = Between(1, 3) * 1000;
    return spec;
  }

  Rng rng_;
};

// One device taken for one request (or subrequest).
struct Use {
  const Device* device;
  const DeviceRequestSpec* spec;
  std::string request;  // the request's own name (constraints name it)
  std::string full_name;
};

// The rules, checked on a whole choice: devices free, selectors, taints, capacity,
// counters, constraints.
class Checker {
 public:
  Checker(const Case& c) : case_(c) {
    for (const ResourceClaim& holder : c.allocated) {
      for (const AllocationResult& result : holder.allocation->results) {
        if (result.share_id) {
          shared_.insert(result.device);
          for (const auto& [name, amount] : result.consumed_capacity)
            consumed_[result.device] += amount;
        } else {
          dedicated_.insert(result.device);
        }
      }
    }
  }

  bool Selectable(const Device& device, const DeviceRequestSpec& spec) const {
    for (const std::string& selector : spec.selectors) {
      if (!HashVerdicts::Verdict(selector, device.name)) return false;
    }
    for (const auto& [name, amount] : spec.capacity_requests) {
      if (device.capacity.count(name) == 0 || amount > kShareCapacity) return false;
    }
    return true;
  }

  bool Valid(const std::vector<std::vector<Use>>& claims) const {
    std::set<std::string> whole;
    std::map<std::string, Milli> consumed = consumed_;
    std::set<const Device*> new_devices;
    for (const std::vector<Use>& uses : claims) {
      for (const Use& use : uses) {
        const Device& device = *use.device;
        if (dedicated_.count(device.name) > 0) return false;
        if (!Selectable(device, *use.spec)) return false;
        for (const DeviceTaint& taint : device.taints) {
          if (use.spec->tolerations.empty()) return false;
          (void)taint;
        }
        if (device.allow_multiple_allocations) {
          auto it = use.spec->capacity_requests.find(kMemory);
          consumed[device.name] += it == use.spec->capacity_requests.end() ? 1000 : it->second;
          if (consumed[device.name] > kShareCapacity) return false;
          if (shared_.count(device.name) == 0) new_devices.insert(&device);
        } else {
          if (!whole.insert(device.name).second) return false;
          new_devices.insert(&device);
        }
      }
    }
    // Counters: what allocated devices and the new ones consume, per pool.
    std::map<std::string, Milli> used;
    std::set<std::string> checked_pools;
    for (const ResourceSlice& slice : case_.slices) {
      if (slice.pool.generation != 2) continue;
      for (const Device& device : slice.devices) {
        const bool allocated = dedicated_.count(device.name) > 0 || shared_.count(device.name) > 0;
        const bool added = new_devices.count(&device) > 0;
        if (!allocated && !added) continue;
        for (const auto& consumption : device.consumes_counters) {
          used[slice.pool.name] += consumption.counters.at("units");
          if (added) checked_pools.insert(slice.pool.name);
        }
      }
    }
    for (const std::string& pool : checked_pools) {
      if (used[pool] > case_.counter_sets.at(pool).at("units")) return false;
    }
    return ConstraintsHold(claims);
  }

 private:
  bool ConstraintsHold(const std::vector<std::vector<Use>>& claims) const {
    for (size_t i = 0; i < claims.size(); ++i) {
      for (const DeviceConstraint& constraint : case_.claims[i].spec.constraints) {
        std::vector<const AttributeValue*> values;
        for (const Use& use : claims[i]) {
          if (!constraint.requests.empty() &&
              std::find(constraint.requests.begin(), constraint.requests.end(), use.request) ==
                  constraint.requests.end()) {
            continue;
          }
          auto it = use.device->attributes.find("driver-a/numa");
          if (it == use.device->attributes.end()) return false;
          values.push_back(&it->second);
        }
        for (size_t a = 0; a < values.size(); ++a) {
          for (size_t b = a + 1; b < values.size(); ++b) {
            const bool same = *values[a] == *values[b];
            if (constraint.match_attribute ? !same : same) return false;
          }
        }
      }
    }
    return true;
  }

  const Case& case_;
  std::set<std::string> dedicated_, shared_;
  std::map<std::string, Milli> consumed_;
};

// Every choice of subrequest and device set, per request of every claim.
bool ExhaustivelyFeasible(const Case& c, const Checker& checker) {
  struct Slot {
    size_t claim;
    const DeviceRequest* request;
  };
  std::vector<Slot> slots;
  for (size_t i = 0; i < c.claims.size(); ++i) {
    for (const DeviceRequest& request : c.claims[i].spec.requests) slots.push_back({i, &request});
  }
  std::vector<std::vector<Use>> chosen(c.claims.size());
  std::function<bool(size_t)> choose = [&](size_t slot) -> bool {
    if (slot == slots.size()) return checker.Valid(chosen);
    const DeviceRequest& request = *slots[slot].request;
    std::vector<std::pair<const DeviceRequestSpec*, std::string>> alternatives;
    if (request.exactly) {
      alternatives.push_back({&*request.exactly, request.name});
    } else {
      for (const DeviceSubRequest& sub : request.first_available) {
        alternatives.push_back({&sub.spec, request.name + "/" + sub.name});
      }
    }
    std::vector<Use>& uses = chosen[slots[slot].claim];
    for (const auto& [spec, full_name] : alternatives) {
      std::vector<const Device*> candidates;
      for (const Device* device : c.usable) {
        if (checker.Selectable(*device, *spec)) candidates.push_back(device);
      }
      if (spec->allocation_mode == AllocationMode::kAll) {
        if (candidates.empty()) continue;
        for (const Device* device : candidates)
          uses.push_back({device, spec, request.name, full_name});
        if (choose(slot + 1)) return true;
        uses.resize(uses.size() - candidates.size());
        continue;
      }
      const size_t count = static_cast<size_t>(spec->count);
      if (candidates.size() < count) continue;
      std::vector<bool> pick(candidates.size(), false);
      std::fill(pick.begin(), pick.begin() + static_cast<long>(count), true);
      do {
        for (size_t k = 0; k < candidates.size(); ++k) {
          if (pick[k]) uses.push_back({candidates[k], spec, request.name, full_name});
        }
        if (choose(slot + 1)) return true;
        uses.resize(uses.size() - count);
      } while (std::prev_permutation(pick.begin(), pick.end()));
    }
    return false;
  };
  return choose(0);
}

void RunSeed(uint64_t seed, int* feasible, int* infeasible, int* errors) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  CaseMaker maker(seed);
  const Case c = maker.Make();
  const Inventory inventory(c.slices, {DeviceClass{"class", {"class"}, {}, {}}});
  const AllocatedState state = AllocatedState::FromClaims(c.allocated);
  const HashVerdicts verdicts;
  const Labels labels;
  auto result = Allocate(inventory, NodeRef{"node-1", labels}, c.claims, state, verdicts);
  const Checker checker(c);
  const bool exhaustive = ExhaustivelyFeasible(c, checker);
  if (!result.ok()) {
    // Upstream's one error here: a request for all devices that a constraint refuses
    // (it gives up on the claims, even where other choices would have done).
    EXPECT_NE(result.status().message().find("claim constraint would not be satisfied"),
              std::string::npos)
        << result.status().message();
    ++*errors;
    return;
  }
  EXPECT_EQ(result->has_value(), exhaustive);
  if (!result->has_value()) {
    ++*infeasible;
    return;
  }
  ++*feasible;
  // What the allocator chose passes the check too.
  std::vector<std::vector<Use>> chosen(c.claims.size());
  for (size_t i = 0; i < c.claims.size(); ++i) {
    for (const AllocationResult& r : (**result)[i].results) {
      const Device* device = nullptr;
      for (const Device* d : c.usable) {
        if (d->name == r.device && c.pool_of.at(d->name) == r.pool) device = d;
      }
      ASSERT_NE(device, nullptr) << r.device << " is not a usable device";
      const std::string base = r.request.substr(0, r.request.find('/'));
      const DeviceRequestSpec* spec = nullptr;
      for (const DeviceRequest& request : c.claims[i].spec.requests) {
        if (request.name != base) continue;
        if (request.exactly) spec = &*request.exactly;
        for (const DeviceSubRequest& sub : request.first_available) {
          if (base + "/" + sub.name == r.request) spec = &sub.spec;
        }
      }
      ASSERT_NE(spec, nullptr) << r.request;
      chosen[i].push_back({device, spec, base, r.request});
    }
  }
  EXPECT_TRUE(checker.Valid(chosen));
}

TEST(DraAllocatorPropertyTest, AgreesWithAnExhaustiveSearch) {
  int feasible = 0, infeasible = 0, errors = 0;
  for (uint64_t seed = 1; seed <= 20000; ++seed) {
    RunSeed(seed, &feasible, &infeasible, &errors);
    if (HasFailure()) break;
  }
  // The cases must exercise both answers.
  EXPECT_GT(feasible, 2000);
  EXPECT_GT(infeasible, 2000);
  RecordProperty("feasible", feasible);
  RecordProperty("infeasible", infeasible);
  RecordProperty("errors", errors);
  std::printf("feasible %d, infeasible %d, errors %d\n", feasible, infeasible, errors);
}

}  // namespace
}  // namespace gantry::dra

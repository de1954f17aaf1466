#include "model/numa.h"

#include <algorithm>

namespace gantry {
namespace {

struct PolicyName {
  NumaPolicy policy;
  std::string_view name;
};
constexpr PolicyName kPolicyNames[] = {
    {NumaPolicy::kNone, "none"},
    {NumaPolicy::kBestEffort, "best-effort"},
    {NumaPolicy::kRestricted, "restricted"},
    {NumaPolicy::kSingleNumaNode, "single-numa-node"},
};

bool IsHugePages(ResourceId id) {
  return ResourceName(id).starts_with("hugepages-");
}

// What `unit` asks of resource `id` that a zone aligns, GPUs included.
Milli Aligned(const NodeNuma& numa, bool guaranteed, ResourceId id, Milli amount) {
  if (id == kGpu) return 0;  // counted from gpu_milli
  if (amount <= 0 || !numa.Lists(id) || !NumaAligns(id, guaranteed)) return 0;
  return amount;
}

bool ZoneHolds(const NodeNuma& numa, const NumaUnit& unit, bool guaranteed,
               const ResourceVector& room) {
  for (const auto& e : unit.requests->entries()) {
    const Milli want = Aligned(numa, guaranteed, e.id, e.amount);
    if (want > 0 && room.Get(e.id) < want) return false;
  }
  return unit.gpu_milli == 0 || !numa.Lists(kGpu) || room.Get(kGpu) >= unit.gpu_milli;
}

}  // namespace

std::string_view NumaPolicyName(NumaPolicy policy) {
  for (const PolicyName& p : kPolicyNames) {
    if (p.policy == policy) return p.name;
  }
  return "none";
}

Result<NumaPolicy> ParseNumaPolicy(std::string_view name) {
  for (const PolicyName& p : kPolicyNames) {
    if (p.name == name) return p.policy;
  }
  return Status::Invalid("unknown topology manager policy \"" + std::string(name.substr(0, 64)) +
                         "\" (known: none, best-effort, restricted, single-numa-node)");
}

std::string_view NumaScopeName(NumaScope scope) {
  return scope == NumaScope::kPod ? "pod" : "container";
}

Result<NumaScope> ParseNumaScope(std::string_view name) {
  if (name == "pod") return NumaScope::kPod;
  if (name == "container") return NumaScope::kContainer;
  return Status::Invalid("unknown topology manager scope \"" + std::string(name.substr(0, 64)) +
                         "\" (known: container, pod)");
}

bool NodeNuma::Lists(ResourceId id) const {
  return std::binary_search(listed.begin(), listed.end(), id);
}

std::vector<NumaUnit> NumaUnitsOf(const NumaDemand& demand, const ResourceVector& pod_requests,
                                  int32_t pod_whole_gpus, NumaScope scope) {
  std::vector<NumaUnit> units;
  if (scope == NumaScope::kContainer && !demand.containers.empty()) {
    for (const NumaContainer& c : demand.containers) {
      // Whole GPUs only: a share of one is not a device the kubelet hands out.
      const Milli gpus = c.requests.Get(kGpu) / kMilliPerUnit * kMilliPerUnit;
      units.push_back(NumaUnit{&c.requests, gpus, c.holds});
    }
    return units;
  }
  units.push_back(NumaUnit{&pod_requests, Milli{pod_whole_gpus} * kMilliPerUnit, true});
  return units;
}

bool NumaAligns(ResourceId id, bool guaranteed) {
  if (guaranteed) return true;
  return id != kCpu && id != kMemory && !IsHugePages(id);
}

bool NeedsAlignment(const NodeNuma& numa, std::span<const NumaUnit> units, bool guaranteed) {
  for (const NumaUnit& unit : units) {
    if (unit.gpu_milli > 0 && numa.Lists(kGpu)) return true;
    for (const auto& e : unit.requests->entries()) {
      if (Aligned(numa, guaranteed, e.id, e.amount) > 0) return true;
    }
  }
  return false;
}

bool FitZones(const NodeNuma& numa, std::span<const NumaUnit> units, bool guaranteed,
              ZoneRoom* room, std::vector<int32_t>* zones) {
  zones->assign(units.size(), -1);
  bool all = true;
  for (size_t u = 0; u < units.size(); ++u) {
    const NumaUnit& unit = units[u];
    for (size_t z = 0; z < numa.zones.size(); ++z) {
      if (!ZoneHolds(numa, unit, guaranteed, (*room)[z])) continue;
      (*zones)[u] = static_cast<int32_t>(z);
      if (unit.holds) {
        ResourceVector taken = ZoneCharge(numa, unit, guaranteed);
        if (unit.gpu_milli > 0 && numa.Lists(kGpu)) taken.Set(kGpu, unit.gpu_milli);
        (*room)[z].Subtract(taken);
      }
      break;
    }
    all = all && (*zones)[u] >= 0;
  }
  return all;
}

ResourceVector ZoneCharge(const NodeNuma& numa, const NumaUnit& unit, bool guaranteed) {
  ResourceVector charge;
  for (const auto& e : unit.requests->entries()) {
    const Milli amount = Aligned(numa, guaranteed, e.id, e.amount);
    if (amount > 0) charge.Set(e.id, amount);
  }
  return charge;
}

Status PrepareNodeNuma(const std::string& node_name, size_t gpu_devices, NodeNuma* numa,
                       std::vector<int32_t>* device_zones) {
  device_zones->clear();
  const std::string where = "node \"" + node_name + "\": NUMA";
  if (numa->zones.size() > kMaxNumaZones) {
    return Status::OutOfRange(where + ": " + std::to_string(numa->zones.size()) +
                              " zones; the limit is " + std::to_string(kMaxNumaZones));
  }
  std::sort(numa->zones.begin(), numa->zones.end(),
            [](const NumaZone& a, const NumaZone& b) { return a.id < b.id; });
  numa->listed.clear();
  for (size_t z = 0; z < numa->zones.size(); ++z) {
    const NumaZone& zone = numa->zones[z];
    const std::string at = where + " node " + std::to_string(zone.id);
    if (zone.id < 0) return Status::Invalid(at + ": a NUMA node's number is not negative");
    if (z > 0 && numa->zones[z - 1].id == zone.id) {
      return Status::Invalid(at + " is listed twice");
    }
    for (const auto& e : zone.allocatable.entries()) {
      if (e.amount < 0) {
        return Status::Invalid(at + ": " + ResourceName(e.id) + " is negative");
      }
      numa->listed.push_back(e.id);
    }
  }
  std::sort(numa->listed.begin(), numa->listed.end());
  numa->listed.erase(std::unique(numa->listed.begin(), numa->listed.end()), numa->listed.end());
  if (!numa->Lists(kGpu)) return Status::Ok();
  Milli total = 0;
  for (const NumaZone& zone : numa->zones) {
    const Milli gpus = zone.allocatable.Get(kGpu);
    if (gpus % kMilliPerUnit != 0) {
      return Status::Invalid(where + " node " + std::to_string(zone.id) +
                             ": nvidia.com/gpu must be a whole number of devices");
    }
    total += gpus;
  }
  if (total != static_cast<Milli>(gpu_devices) * kMilliPerUnit) {
    return Status::Invalid(
        where + ": its NUMA nodes hold " + std::to_string(total / kMilliPerUnit) +
        " GPUs (nvidia.com/gpu), but the node has " + std::to_string(gpu_devices));
  }
  for (const NumaZone& zone : numa->zones) {
    for (Milli k = 0; k < zone.allocatable.Get(kGpu) / kMilliPerUnit; ++k) {
      device_zones->push_back(zone.id);
    }
  }
  return Status::Ok();
}

}  // namespace gantry

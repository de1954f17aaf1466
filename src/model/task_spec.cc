#include "model/task_spec.h"

#include <algorithm>
#include <limits>

#include "model/hash.h"

namespace gantry {
namespace {

void AddGpuRequest(const GpuRequest& gpu, Hasher* h) {
  h->Add(static_cast<uint64_t>(gpu.count))
      .Add(static_cast<uint64_t>(gpu.milli))
      .Add(static_cast<uint64_t>(gpu.memory_mib));
  h->Add(static_cast<uint64_t>(gpu.models.size()));
  for (GpuModelId m : gpu.models) h->Add(static_cast<uint64_t>(m));
}

}  // namespace

bool GpuRequest::AllowsListedModel(GpuModelId model) const {
  return std::find(models.begin(), models.end(), model) != models.end();
}

size_t TaskSpecHash::operator()(const TaskSpec& spec) const {
  Hasher h;
  h.Add(spec.role).Add(spec.requests);
  AddGpuRequest(spec.gpu, &h);
  h.Add(static_cast<uint64_t>(spec.priority))
      .Add(static_cast<uint64_t>(spec.preemption_policy))
      .Add(spec.node_selector)
      .Add(spec.tolerations)
      .Add(spec.affinity)
      .Add(spec.namespace_)
      .Add(spec.labels)
      .Add(spec.volume_node_affinity)
      .Add(spec.rwop_claims);
  h.Add(static_cast<uint64_t>(spec.delayed_claims.size()));
  for (const DelayedClaim& claim : spec.delayed_claims) h.Add(claim.claim);
  h.Add(static_cast<uint64_t>(spec.volume_zones.size()));
  for (const VolumeTopology& zone : spec.volume_zones) h.Add(zone.key).Add(zone.values);
  h.Add(static_cast<uint64_t>(spec.attachable_volumes.size()));
  for (const AttachableVolume& v : spec.attachable_volumes) h.Add(v.driver).Add(v.handle);
  h.Add(static_cast<uint64_t>(spec.inline_disks.size()));
  for (const InlineDisk& d : spec.inline_disks) h.Add(d.key);
  h.Add(spec.resource_claims).Add(spec.device_requests);
  h.Add(static_cast<uint64_t>(spec.device_backed.size()));
  for (const DeviceBackedResource& r : spec.device_backed) {
    h.Add(static_cast<uint64_t>(r.resource))
        .Add(r.device_class)
        .Add(static_cast<uint64_t>(r.count));
  }
  h.Add(static_cast<uint64_t>(spec.numa.guaranteed));
  h.Add(static_cast<uint64_t>(spec.numa.containers.size()));
  for (const NumaContainer& c : spec.numa.containers) {
    h.Add(c.requests).Add(static_cast<uint64_t>(c.holds));
  }
  h.Add(spec.datasets);
  h.Add(spec.required_features);
  // The pod rules are left out: specs that differ only there are rare, and equality
  // tells them apart.
  return h.value();
}

TaskShape TaskShape::Of(const TaskSpec& spec) {
  TaskShape shape{spec.requests, spec.gpu};
  const Milli claimed = spec.device_requests.Get(kGpu);
  if (claimed <= 0 || spec.gpu.wants_gpu()) return shape;
  constexpr Milli kWhole = 1000;  // kGpuMilliWhole, which model/node.h holds
  if (claimed < kWhole) {
    shape.gpu.milli = static_cast<int32_t>(claimed);
  } else {
    shape.gpu.count = static_cast<int32_t>(
        std::min<Milli>((claimed + kWhole - 1) / kWhole, std::numeric_limits<int32_t>::max()));
  }
  return shape;
}

size_t TaskShapeHash::operator()(const TaskShape& shape) const {
  Hasher h;
  h.Add(shape.requests);
  AddGpuRequest(shape.gpu, &h);
  return h.value();
}

// Out of line: inlined, GCC 12 warns that an empty optional's selector "may be used
// uninitialized" (a false -Wmaybe-uninitialized).
bool TaskSpec::default_spreading() const {
  return spread.empty() && default_spread_selector.has_value() && !default_spread_selector->empty();
}

bool TaskSpec::placements_can_unblock() const {
  return !pod_affinity.required_affinity.empty() ||
         std::any_of(spread.begin(), spread.end(),
                     [](const TopologySpreadConstraint& c) { return c.filters(); });
}

std::vector<std::string> LabelKeysOf(const TaskSpec& spec) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : spec.node_selector.pairs()) keys.push_back(key);
  for (const auto& term : spec.affinity.terms) {
    for (const SelectorRequirement& r : term) keys.push_back(r.key);
  }
  for (const PreferredNodeTerm& p : spec.affinity.preferred) {
    for (const SelectorRequirement& r : p.term) keys.push_back(r.key);
  }
  for (const NodeAffinity& volume : spec.volume_node_affinity) {
    for (const auto& term : volume.terms) {
      for (const SelectorRequirement& r : term) {
        // Volumes' matchFields compare with no name: the node's is not read.
        if (r.key != kNodeNameField) keys.push_back(r.key);
      }
    }
  }
  if (!spec.volume_zones.empty()) {
    // Whether the node has any of them decides, not just the volumes' own keys.
    for (std::string_view key : kVolumeTopologyKeys) keys.emplace_back(key);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace gantry

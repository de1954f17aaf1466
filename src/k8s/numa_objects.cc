#include "k8s/numa_objects.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/resource_list.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// "node-3" -> 3.
bool ZoneNumber(const std::string& name, int32_t* out) {
  if (!name.starts_with("node-") || name.size() == 5 || name.size() > 8) return false;
  const char* begin = name.data() + 5;
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end && *out >= 0;
}

// requests and limits of one container (or of the pod, `resources` being spec.resources),
// requests absent taking the limits. False when some amount cannot be read.
bool ReadResources(const json& resources, ResourceVector* requests, ResourceVector* limits) {
  const json& given = Field(resources, "requests");
  if (!ParseResourceList(given, "", NameSource::kWorkload, requests).ok() ||
      !ParseResourceList(Field(resources, "limits"), "", NameSource::kWorkload, limits).ok()) {
    return false;
  }
  for (const auto& e : limits->entries()) {
    if (!given.is_object() || !given.contains(ResourceName(e.id))) requests->Set(e.id, e.amount);
  }
  return true;
}

}  // namespace

Result<NodeResourceTopologyInfo> ParseNodeResourceTopology(const json& object) {
  auto meta = NamedMeta(object, "noderesourcetopology");
  if (!meta.ok()) return meta.status();
  NodeResourceTopologyInfo info;
  info.meta = std::move(meta).value();
  const std::string where = "noderesourcetopology " + info.meta.name;
  std::string policy, scope;
  const json& attributes = Field(object, "attributes");
  for (size_t i = 0; attributes.is_array() && i < attributes.size(); ++i) {
    const std::string name = String(attributes[i], "name");
    if (name == "topologyManagerPolicy") policy = String(attributes[i], "value");
    if (name == "topologyManagerScope") scope = String(attributes[i], "value");
  }
  if (policy.empty()) {
    const json& policies = Field(object, "topologyPolicies");
    const std::string old =
        policies.is_array() && !policies.empty() && policies[0].is_string() ? policies[0] : "";
    if (old == "SingleNUMANodeContainerLevel") {
      policy = "single-numa-node", scope = "container";
    } else if (old == "SingleNUMANodePodLevel") {
      policy = "single-numa-node", scope = "pod";
    } else if (old == "BestEffort") {
      policy = "best-effort";
    } else if (old == "Restricted") {
      policy = "restricted";
    } else if (old == "None" || old.empty()) {
      policy = "none";
    } else {
      return Status::Invalid(where + ": topologyPolicies[0]: unknown policy \"" +
                             old.substr(0, 64) + "\"");
    }
  }
  auto parsed_policy = ParseNumaPolicy(policy);
  if (!parsed_policy.ok()) {
    return Status::Invalid(
        where + ": attributes.topologyManagerPolicy: " + parsed_policy.status().message());
  }
  info.numa.policy = *parsed_policy;
  if (!scope.empty()) {
    auto parsed_scope = ParseNumaScope(scope);
    if (!parsed_scope.ok()) {
      return Status::Invalid(
          where + ": attributes.topologyManagerScope: " + parsed_scope.status().message());
    }
    info.numa.scope = *parsed_scope;
  }
  const json& zones = Field(object, "zones");
  if (!zones.is_array() || zones.size() > kMaxNumaZones * 4) {
    return Status::Invalid(where + ": zones: expected a list of at most " +
                           std::to_string(kMaxNumaZones * 4) + " zones");
  }
  for (size_t z = 0; z < zones.size(); ++z) {
    if (String(zones[z], "type") != "Node") continue;
    const std::string at = where + ": zones[" + std::to_string(z) + "]";
    NumaZone zone;
    const std::string name = String(zones[z], "name");
    if (!ZoneNumber(name, &zone.id)) {
      return Status::Invalid(at + ".name: \"" + name.substr(0, 64) +
                             "\" is not a NUMA node's name (node-<number>)");
    }
    const json& resources = Field(zones[z], "resources");
    if (!resources.is_null() && (!resources.is_array() || resources.size() > kMaxZoneResources)) {
      return Status::Invalid(at + ".resources: expected a list of at most " +
                             std::to_string(kMaxZoneResources) + " resources");
    }
    for (size_t k = 0; !resources.is_null() && k < resources.size(); ++k) {
      const std::string rat = at + ".resources[" + std::to_string(k) + "]";
      const std::string rname = String(resources[k], "name");
      ResourceVector one;
      Status st = ParseResourceList(json{{rname, Field(resources[k], "allocatable")}}, rat,
                                    NameSource::kTrusted, &one);
      if (!st.ok()) return st;
      auto id = InternResourceName(rname, NameSource::kTrusted);
      if (!id.ok()) return Status::Invalid(rat + ".name: " + id.status().message());
      zone.allocatable.Set(*id, one.Get(*id));
    }
    info.numa.zones.push_back(std::move(zone));
  }
  if (info.numa.zones.size() > kMaxNumaZones) {
    return Status::OutOfRange(where + ": zones: " + std::to_string(info.numa.zones.size()) +
                              " NUMA nodes; the limit is " + std::to_string(kMaxNumaZones));
  }
  return info;
}

NumaDemand NumaDemandOf(const json& spec) {
  NumaDemand demand;
  std::vector<NumaContainer> containers;
  // GetPodQOS: cpu and memory, summed over every container.
  ResourceVector requests, limits;
  bool limited = true;  // every container has cpu and memory limits
  bool readable = true;
  for (const char* list : {"initContainers", "containers"}) {
    const json& cs = Field(spec, list);
    for (size_t i = 0; cs.is_array() && i < cs.size(); ++i) {
      ResourceVector r, l;
      if (!ReadResources(Field(cs[i], "resources"), &r, &l)) {
        readable = false;
        continue;
      }
      for (ResourceId id : {kCpu, kMemory}) {
        requests.Set(id, SaturatingAdd(requests.Get(id), r.Get(id)));
        limits.Set(id, SaturatingAdd(limits.Get(id), l.Get(id)));
        limited = limited && l.Get(id) > 0;
      }
      const bool holds =
          std::string(list) == "containers" || String(cs[i], "restartPolicy") == "Always";
      containers.push_back(NumaContainer{std::move(r), holds});
    }
  }
  const json& pod_level = Field(spec, "resources");
  if (!pod_level.is_null()) {
    ResourceVector r, l;
    if (!ReadResources(pod_level, &r, &l)) return {};
    requests = ResourceVector(), limits = ResourceVector();
    limited = true;
    for (ResourceId id : {kCpu, kMemory}) {
      requests.Set(id, r.Get(id));
      limits.Set(id, l.Get(id));
      limited = limited && l.Get(id) > 0;
    }
  }
  if (!readable) return {};
  demand.guaranteed = limited && requests == limits && !limits.empty();
  if (containers.size() > 1) demand.containers = std::move(containers);
  return demand;
}

}  // namespace gantry::k8s

#include "daemon/extended_claims.h"

#include <algorithm>
#include <optional>
#include <set>
#include <span>

#include "engine/dra/extended_resources.h"
#include "model/quantity.h"

namespace gantry {
namespace {

using json = nlohmann::json;

struct Request {
  std::string name;
  int64_t count = 0;
};

// createResourceRequestAndMappings: the request container `index` adds for `resource`
// (none where `reusable` covers its amount), and its mappings.
std::optional<Request> RequestOf(size_t index, const ContainerAsks& container,
                                 const std::string& resource,
                                 std::span<const std::optional<Request>> reusable,
                                 std::vector<ExtendedResourceMapping>* mappings) {
  auto it = container.counts.find(resource);
  if (it == container.counts.end() || it->second == 0) return std::nullopt;
  const int64_t wanted = it->second;
  int64_t covered = 0;
  for (const std::optional<Request>& r : reusable) {
    if (!r) continue;
    covered += r->count;
    mappings->push_back({container.name, resource, r->name});
    if (covered >= wanted) return std::nullopt;
  }
  const auto& names = container.request_names;
  const size_t position =
      static_cast<size_t>(std::find(names.begin(), names.end(), resource) - names.begin());
  Request request;
  request.name = "container-" + std::to_string(index) + "-request-" +
                 std::to_string(position < names.size() ? position : 0);
  request.count = wanted - covered;
  mappings->push_back({container.name, resource, request.name});
  return request;
}

}  // namespace

std::vector<ContainerAsks> ContainersOf(const json& pod) {
  std::vector<ContainerAsks> out;
  const json& spec = pod.value("spec", json::object());
  for (const char* field : {"initContainers", "containers"}) {
    auto list = spec.find(field);
    if (list == spec.end() || !list->is_array()) continue;
    const bool init = std::string_view(field) == "initContainers";
    for (const json& c : *list) {
      if (!c.is_object()) continue;
      ContainerAsks asks;
      asks.name = c.value("name", "");
      asks.short_lived = init && c.value("restartPolicy", "") != "Always";
      const json& resources = c.value("resources", json::object());
      const json& requests = resources.value("requests", json::object());
      if (requests.is_object()) {
        for (const auto& [name, value] : requests.items()) {
          asks.request_names.push_back(name);
          if (!value.is_string()) continue;
          auto milli = ParseQuantity(value.get<std::string>());
          if (milli.ok() && *milli % kMilliPerUnit == 0) asks.counts[name] = *milli / kMilliPerUnit;
        }
      }
      std::sort(asks.request_names.begin(), asks.request_names.end());
      out.push_back(std::move(asks));
    }
  }
  return out;
}

ExtendedClaimShape ShapeExtendedClaim(const std::vector<ContainerAsks>& containers,
                                      const std::vector<ExtendedResourceClass>& resources) {
  struct Made {
    dra::DeviceRequest request;
    std::string resource;
  };
  std::vector<Made> made;
  ExtendedClaimShape shape;
  for (const ExtendedResourceClass& resource : resources) {
    std::vector<ExtendedResourceMapping> long_mappings;
    std::vector<ExtendedResourceMapping> short_mappings;
    std::vector<std::optional<Request>> long_requests(containers.size());
    for (size_t i = 0; i < containers.size(); ++i) {
      if (containers[i].short_lived) continue;
      long_requests[i] = RequestOf(i, containers[i], resource.resource, {}, &long_mappings);
    }
    std::optional<Request> largest_short;
    std::set<std::string> short_names;
    for (size_t i = 0; i < containers.size(); ++i) {
      if (!containers[i].short_lived) continue;
      std::optional<Request> r = RequestOf(
          i, containers[i], resource.resource,
          std::span<const std::optional<Request>>(long_requests).subspan(i), &short_mappings);
      if (!r) continue;
      short_names.insert(r->name);
      if (!largest_short || largest_short->count < r->count) largest_short = r;
    }
    if (largest_short && short_names.size() > 1) {
      for (ExtendedResourceMapping& m : short_mappings) {
        if (short_names.count(m.request) > 0) m.request = largest_short->name;
      }
    }
    auto add = [&](const Request& r) {
      Made m;
      m.request.name = r.name;
      m.request.exactly.emplace();
      m.request.exactly->device_class_name = resource.device_class;
      m.request.exactly->allocation_mode = dra::AllocationMode::kExactCount;
      m.request.exactly->count = r.count;
      m.resource = resource.resource;
      made.push_back(std::move(m));
    };
    if (largest_short) add(*largest_short);
    for (const std::optional<Request>& r : long_requests) {
      if (r) add(*r);
    }
    shape.mappings.insert(shape.mappings.end(), long_mappings.begin(), long_mappings.end());
    shape.mappings.insert(shape.mappings.end(), short_mappings.begin(), short_mappings.end());
  }
  std::stable_sort(made.begin(), made.end(),
                   [](const Made& a, const Made& b) { return a.request.name < b.request.name; });
  for (Made& m : made) {
    shape.requests.push_back(std::move(m.request));
    shape.request_resources.push_back(std::move(m.resource));
  }
  return shape;
}

Result<dra::Allocation> AllocationForShape(const dra::Allocation& engine,
                                           const std::vector<ExtendedResourceClass>& resources,
                                           const ExtendedClaimShape& shape) {
  dra::Allocation out;
  out.node_selector = engine.node_selector;
  out.allocation_timestamp = engine.allocation_timestamp;
  // Per resource, its engine results not yet handed out, and its requests' names.
  std::vector<std::vector<const dra::AllocationResult*>> results(resources.size());
  std::vector<std::vector<std::string>> names(resources.size());
  for (const dra::AllocationResult& r : engine.results) {
    const std::optional<size_t> k = dra::ExtendedRequestIndex(r.request);
    if (!k || *k >= resources.size()) {
      return Status::Invalid("the allocation names a request \"" + r.request +
                             "\" of no extended resource");
    }
    results[*k].push_back(&r);
  }
  std::vector<size_t> next(resources.size(), 0);
  for (size_t i = 0; i < shape.requests.size(); ++i) {
    size_t k = 0;
    while (k < resources.size() && resources[k].resource != shape.request_resources[i]) ++k;
    if (k == resources.size()) return Status::Invalid("a request of no extended resource");
    names[k].push_back(shape.requests[i].name);
    for (int64_t n = 0; n < shape.requests[i].exactly->count; ++n) {
      if (next[k] >= results[k].size()) {
        return Status::Invalid("the pod's containers ask more " + resources[k].resource +
                               " than was allocated");
      }
      dra::AllocationResult result = *results[k][next[k]++];
      result.request = shape.requests[i].name;
      out.results.push_back(std::move(result));
    }
  }
  for (size_t k = 0; k < resources.size(); ++k) {
    if (next[k] != results[k].size()) {
      return Status::Invalid("the pod's containers ask less " + resources[k].resource +
                             " than was allocated");
    }
  }
  // The class's configuration, for the requests of the resources it was copied for.
  for (const dra::AllocationConfig& c : engine.config) {
    dra::AllocationConfig config = c;
    if (!c.requests.empty()) {
      config.requests.clear();
      for (const std::string& request : c.requests) {
        const std::optional<size_t> k = dra::ExtendedRequestIndex(request);
        if (!k || *k >= resources.size()) continue;
        config.requests.insert(config.requests.end(), names[*k].begin(), names[*k].end());
      }
      if (config.requests.empty()) continue;
    }
    out.config.push_back(std::move(config));
  }
  return out;
}

json ExtendedClaimObject(const std::string& pod_namespace, const std::string& pod_name,
                         const std::string& pod_uid, const ExtendedClaimShape& shape) {
  json requests = json::array();
  for (const dra::DeviceRequest& r : shape.requests) {
    requests.push_back({{"name", r.name},
                        {"exactly",
                         {{"deviceClassName", r.exactly->device_class_name},
                          {"allocationMode", "ExactCount"},
                          {"count", r.exactly->count}}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata",
           {{"generateName", pod_name + "-extended-resources-"},
            {"namespace", pod_namespace},
            {"annotations", {{std::string(dra::kExtendedResourceClaimAnnotation), "true"}}},
            {"ownerReferences", json::array({{{"apiVersion", "v1"},
                                              {"kind", "Pod"},
                                              {"name", pod_name},
                                              {"uid", pod_uid},
                                              {"controller", true}}})}}},
          {"spec", {{"devices", {{"requests", std::move(requests)}}}}}};
}

json ExtendedClaimStatusPatch(const std::string& claim_name, const ExtendedClaimShape& shape) {
  json mappings = json::array();
  for (const ExtendedResourceMapping& m : shape.mappings) {
    mappings.push_back(
        {{"containerName", m.container}, {"resourceName", m.resource}, {"requestName", m.request}});
  }
  return {{"status",
           {{"extendedResourceClaimStatus",
             {{"requestMappings", std::move(mappings)}, {"resourceClaimName", claim_name}}}}}};
}

}  // namespace gantry

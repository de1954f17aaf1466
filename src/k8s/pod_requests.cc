#include "k8s/pod_requests.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/objects.h"
#include "model/pod_requests.h"
#include "model/quantity.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// What one container asks for: its requests, with limits standing in for requests that
// are missing.
void ContainerRequests(const json& c, const std::string& at, ResourceVector* out,
                       UnreadableRequests* unreadable, Status* problem) {
  const json& resources = Field(c, "resources");
  const json& given = Field(resources, "requests");
  ResourceVector requests, limits;
  UnreadableRequests unread_requests, unread_limits;
  ReadResourceList(Field(resources, "limits"), at + ".resources.limits", NameSource::kWorkload,
                   &limits, &unread_limits, problem);
  ReadResourceList(given, at + ".resources.requests", NameSource::kWorkload, &requests,
                   &unread_requests, problem);
  // Only a request that is absent takes the limit; an explicit "0" stays 0.
  auto absent = [&](const std::string& name) {
    return !given.is_object() || !given.contains(name);
  };
  for (const auto& e : limits.entries()) {
    if (absent(ResourceName(e.id))) requests.Set(e.id, e.amount);
  }
  unread_limits.all = unread_limits.all && !unread_requests.all;
  if (unread_limits.all) unread_requests.all = true;
  for (ResourceId id : unread_limits.ids) {
    if (absent(ResourceName(id))) unread_requests.AddId(id);
  }
  for (const std::string& name : unread_limits.names) {
    if (absent(name)) unread_requests.AddName(name);
  }
  // Whole GPUs per container (two containers of 0.5 are not one GPU).
  for (const auto& [list, name] : {std::pair{&limits, "limits"}, {&requests, "requests"}}) {
    if (list->Get(kGpu) % kMilliPerUnit == 0) continue;
    unread_requests.AddId(kGpu);
    if (problem->ok()) {
      *problem = Status::Invalid(at + ".resources." + name + "." + std::string(kGpuResourceName) +
                                 ": " + FormatQuantity(list->Get(kGpu)) +
                                 " is not a whole number of GPUs; ask for a share of one with "
                                 "the annotation " +
                                 std::string(kGpuFractionAnnotation));
    }
  }
  for (ResourceId id : unread_requests.ids) requests.Set(id, 0);
  *out = std::move(requests);
  unreadable->Merge(unread_requests);
}

const json* ContainerStatus(const json& status, const std::string& name) {
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const json& statuses = Field(status, list);
    for (size_t i = 0; statuses.is_array() && i < statuses.size(); ++i) {
      if (String(statuses[i], "name") == name) return &statuses[i];
    }
  }
  return nullptr;
}

// A resource list of the status, where it is an object.
std::optional<ResourceVector> StatusList(const json& list, const std::string& where,
                                         UnreadableRequests* unreadable, Status* problem) {
  if (!list.is_object()) return std::nullopt;
  ResourceVector out;
  ReadResourceList(list, where, NameSource::kWorkload, &out, unreadable, problem);
  return out;
}

// The containers of one list of the spec, with what the status reports of each.
std::vector<ContainerResources> Containers(const json& list, const json& status,
                                           const std::string& where, UnreadableRequests* unreadable,
                                           Status* problem) {
  std::vector<ContainerResources> out;
  for (size_t i = 0; list.is_array() && i < list.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    ContainerResources c;
    ContainerRequests(list[i], at, &c.spec, unreadable, problem);
    c.sidecar = String(list[i], "restartPolicy") == "Always";
    if (const json* cs = ContainerStatus(status, String(list[i], "name")); cs != nullptr) {
      c.allocated = StatusList(Field(*cs, "allocatedResources"), at + " status.allocatedResources",
                               unreadable, problem);
      c.actuated = StatusList(Field(Field(*cs, "resources"), "requests"),
                              at + " status.resources.requests", unreadable, problem);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// Whether the kubelet says a resize of the pod cannot be done (PodResizePending, reason
// Infeasible): then what the spec asks does not count, only what was given.
bool ResizeInfeasible(const json& status) {
  const json& conditions = Field(status, "conditions");
  for (size_t i = 0; conditions.is_array() && i < conditions.size(); ++i) {
    if (String(conditions[i], "type") == "PodResizePending") {
      return String(conditions[i], "reason") == "Infeasible";
    }
  }
  return false;
}

// Whether the kubelet reported what it allocated or actuated for any container, or the pod.
bool HasStatusResources(const json& status) {
  if (Field(status, "allocatedResources").is_object() || Field(status, "resources").is_object()) {
    return true;
  }
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const json& statuses = Field(status, list);
    for (size_t i = 0; statuses.is_array() && i < statuses.size(); ++i) {
      if (Field(statuses[i], "allocatedResources").is_object() ||
          Field(statuses[i], "resources").is_object()) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

void PodRequests(const json& spec, const json& status, const std::string& where,
                 ResourceVector* out, UnreadableRequests* unreadable, Status* problem) {
  PodResources pod;
  pod.containers =
      Containers(Field(spec, "containers"), status, where + ".containers", unreadable, problem);
  pod.init_containers = Containers(Field(spec, "initContainers"), status, where + ".initContainers",
                                   unreadable, problem);
  const json& pod_resources = Field(spec, "resources");
  if (!pod_resources.is_null()) {
    ResourceVector pod_level;
    ContainerRequests(json{{"resources", pod_resources}}, where, &pod_level, unreadable, problem);
    for (const auto& e : pod_level.entries()) {
      if (!PodLevelResource(e.id) && problem->ok()) {
        *problem = Status::Invalid(where + ".resources.requests." + KeyText(ResourceName(e.id)) +
                                   ": pod-level resources may only set cpu, memory and hugepages");
      }
    }
    pod.pod_level = std::move(pod_level);
  }
  ReadResourceList(Field(spec, "overhead"), where + ".overhead", NameSource::kWorkload,
                   &pod.overhead, unreadable, problem);
  pod.status_reported = HasStatusResources(status);
  pod.pod_status_resources = Field(status, "resources").is_object();
  pod.pod_allocated = StatusList(Field(status, "allocatedResources"),
                                 where + " status.allocatedResources", unreadable, problem);
  pod.pod_actuated = StatusList(Field(Field(status, "resources"), "requests"),
                                where + " status.resources.requests", unreadable, problem);
  pod.resize_infeasible = ResizeInfeasible(status);
  std::vector<RequestOverflow> overflowed;
  ResourceVector sum = gantry::PodRequests(pod, &overflowed);
  for (const RequestOverflow& o : overflowed) {
    unreadable->AddId(o.id);
    if (!problem->ok()) continue;
    const std::string index = "[" + std::to_string(o.index) + "].resources";
    const std::string at = o.part == RequestOverflow::Part::kOverhead ? where + ".overhead"
                           : o.part == RequestOverflow::Part::kContainer
                               ? where + ".containers" + index
                               : where + ".initContainers" + index;
    *problem = Status::OutOfRange(at + "." + ResourceName(o.id) +
                                  ": the sum of the pod's requests overflows (more than " +
                                  FormatQuantity(kMilliMax) + ")");
  }
  for (ResourceId id : unreadable->ids) sum.Set(id, 0);
  *out = std::move(sum);
}

}  // namespace gantry::k8s

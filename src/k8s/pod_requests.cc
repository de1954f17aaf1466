#include "k8s/pod_requests.h"

#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/objects.h"
#include "model/quantity.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// *peak = the larger of *peak and `r`, resource by resource.
void RaiseTo(const ResourceVector& r, ResourceVector* peak) {
  for (const auto& e : r.entries()) {
    if (e.amount > peak->Get(e.id)) peak->Set(e.id, e.amount);
  }
}

// *sum += add, resource by resource; a sum that overflows makes that resource unreadable.
void AddChecked(const ResourceVector& add, const std::string& where, ResourceVector* sum,
                UnreadableRequests* unreadable, Status* problem) {
  for (const auto& e : add.entries()) {
    Milli total = 0;
    if (CheckedAdd(sum->Get(e.id), e.amount, &total)) {
      sum->Set(e.id, total);
      continue;
    }
    unreadable->AddId(e.id);
    if (problem->ok()) {
      *problem = Status::OutOfRange(where + "." + ResourceName(e.id) +
                                    ": the sum of the pod's requests overflows (more than " +
                                    FormatQuantity(kMilliMax) + ")");
    }
  }
}

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

// Which requests of a container the pod's sum is taken over (component-helpers'
// containerSpecRequests, containerAllocatedRequests, containerActuatedRequests).
enum class Source { kSpec, kAllocated, kActuated };

const json* ContainerStatus(const json& status, const std::string& name) {
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const json& statuses = Field(status, list);
    for (size_t i = 0; statuses.is_array() && i < statuses.size(); ++i) {
      if (String(statuses[i], "name") == name) return &statuses[i];
    }
  }
  return nullptr;
}

// One container's requests as `source` takes them: the actuated ones (status.resources)
// else the allocated ones else the spec's; none for a resize found infeasible.
void SourceRequests(const json& container, const json& status, Source source, bool infeasible,
                    const std::string& at, ResourceVector* out, UnreadableRequests* unreadable,
                    Status* problem) {
  *out = ResourceVector();
  const json* cs =
      source == Source::kSpec ? nullptr : ContainerStatus(status, String(container, "name"));
  if (cs != nullptr && source == Source::kActuated) {
    const json& actuated = Field(Field(*cs, "resources"), "requests");
    if (actuated.is_object()) {
      return ReadResourceList(actuated, at + " status.resources.requests", NameSource::kWorkload,
                              out, unreadable, problem);
    }
  }
  if (cs != nullptr) {
    const json& allocated = Field(*cs, "allocatedResources");
    if (allocated.is_object()) {
      return ReadResourceList(allocated, at + " status.allocatedResources", NameSource::kWorkload,
                              out, unreadable, problem);
    }
  }
  if (source != Source::kSpec && infeasible) return;
  ContainerRequests(container, at, out, unreadable, problem);
}

// The sum of the pod's containers, each as `source` takes it: the app containers and the
// sidecars (init containers with restartPolicy Always), or, if more, the most any init
// container's moment takes (it runs alone beside the sidecars started before it).
ResourceVector Aggregate(const json& spec, const json& status, Source source, bool infeasible,
                         const std::string& where, UnreadableRequests* unreadable,
                         Status* problem) {
  ResourceVector sum;
  const json& containers = Field(spec, "containers");
  for (size_t i = 0; containers.is_array() && i < containers.size(); ++i) {
    const std::string at = where + ".containers[" + std::to_string(i) + "]";
    ResourceVector r;
    SourceRequests(containers[i], status, source, infeasible, at, &r, unreadable, problem);
    AddChecked(r, at + ".resources", &sum, unreadable, problem);
  }
  const json& inits = Field(spec, "initContainers");
  ResourceVector sidecars, init_peak;
  for (size_t i = 0; inits.is_array() && i < inits.size(); ++i) {
    const std::string at = where + ".initContainers[" + std::to_string(i) + "]";
    ResourceVector r;
    SourceRequests(inits[i], status, source, infeasible, at, &r, unreadable, problem);
    if (String(inits[i], "restartPolicy") == "Always") {
      AddChecked(r, at + ".resources", &sum, unreadable, problem);
      AddChecked(r, at + ".resources", &sidecars, unreadable, problem);
      RaiseTo(sidecars, &init_peak);
    } else {
      ResourceVector moment = sidecars;
      AddChecked(r, at + ".resources", &moment, unreadable, problem);
      RaiseTo(moment, &init_peak);
    }
  }
  RaiseTo(init_peak, &sum);
  return sum;
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

bool PodLevelResource(ResourceId id) {
  return id == kCpu || id == kMemory || ResourceName(id).rfind("hugepages-", 0) == 0;
}

}  // namespace

void PodRequests(const json& spec, const json& status, const std::string& where,
                 ResourceVector* out, UnreadableRequests* unreadable, Status* problem) {
  const bool infeasible = ResizeInfeasible(status);
  ResourceVector sum =
      Aggregate(spec, status, Source::kSpec, infeasible, where, unreadable, problem);
  if (HasStatusResources(status)) {
    // The pod-level status holds the containers' totals where the kubelet writes it.
    const json& pod_allocated = Field(status, "allocatedResources");
    const json& pod_actuated = Field(Field(status, "resources"), "requests");
    ResourceVector allocated, actuated;
    const std::string at = where + " status";
    if (pod_allocated.is_object() && pod_actuated.is_object()) {
      ReadResourceList(pod_allocated, at + ".allocatedResources", NameSource::kWorkload, &allocated,
                       unreadable, problem);
      ReadResourceList(pod_actuated, at + ".resources.requests", NameSource::kWorkload, &actuated,
                       unreadable, problem);
    } else {
      allocated =
          Aggregate(spec, status, Source::kAllocated, infeasible, where, unreadable, problem);
      actuated = Aggregate(spec, status, Source::kActuated, infeasible, where, unreadable, problem);
    }
    if (infeasible) sum = ResourceVector();
    RaiseTo(allocated, &sum);
    RaiseTo(actuated, &sum);
  }
  // Pod-level resources (spec.resources) replace the containers' sum for the resources
  // they may set: cpu, memory and hugepages; a request absent takes the limit. Resized,
  // the largest of the spec's (unless infeasible) and the pod's status.
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
    ResourceVector effective = pod_level;
    if (Field(status, "resources").is_object()) {
      ResourceVector given;
      if (infeasible) effective = ResourceVector();
      ReadResourceList(Field(Field(status, "resources"), "requests"),
                       where + " status.resources.requests", NameSource::kWorkload, &given,
                       unreadable, problem);
      RaiseTo(given, &effective);
      given = ResourceVector();
      ReadResourceList(Field(status, "allocatedResources"), where + " status.allocatedResources",
                       NameSource::kWorkload, &given, unreadable, problem);
      RaiseTo(given, &effective);
    }
    if (!pod_level.empty()) {
      for (const auto& e : effective.entries()) {
        if (PodLevelResource(e.id)) sum.Set(e.id, e.amount);
      }
    }
  }
  ResourceVector overhead;
  ReadResourceList(Field(spec, "overhead"), where + ".overhead", NameSource::kWorkload, &overhead,
                   unreadable, problem);
  AddChecked(overhead, where + ".overhead", &sum, unreadable, problem);
  for (ResourceId id : unreadable->ids) sum.Set(id, 0);
  *out = std::move(sum);
}

}  // namespace gantry::k8s

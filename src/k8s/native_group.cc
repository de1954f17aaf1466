// Kubernetes' own gang API (scheduling.k8s.io/v1beta1 PodGroup, Kubernetes 1.37 with the
// GenericWorkload gate): what a PodGroup asks of the scheduler, decoded as Gantry's other
// PodGroups are, into PodGroupInfo.
#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/objects.h"
#include "model/limits.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// spec.schedulingPolicy: exactly one of basic and gang (the API server's rule).
// spec.schedulingPolicy.gang.<key> (minCount, minGroupCount): 1 to 1000000.
Status ReadGangMinimum(const json& gang, const char* key, const std::string& where,
                       PodGroupInfo* group) {
  auto min = ReadInteger(gang, key, where + ": spec.schedulingPolicy.gang", 0);
  if (!min.ok()) return min.status();
  if (*min < 1 || *min > 1000000) {
    return Status::Invalid(where + ": spec.schedulingPolicy.gang." + key + ": " +
                           std::to_string(*min) + " is out of range (1..1000000)");
  }
  group->min_member = static_cast<int32_t>(*min);
  return Status::Ok();
}

// spec.schedulingPolicy, of either kind: exactly one of basic and gang. Basic: placed pod by
// pod (a PodGroup), or ready with one child (a CompositePodGroup, as kube-scheduler reads
// it); gang: the minimum `minimum_key` (minCount, minGroupCount).
Status ReadSchedulingPolicy(const json& spec, const std::string& where, const char* minimum_key,
                            PodGroupInfo* group) {
  const json& policy = Field(spec, "schedulingPolicy");
  const json& gang = Field(policy, "gang");
  const bool basic = !Field(policy, "basic").is_null();
  if (basic == !gang.is_null()) {
    return Status::Invalid(where + ": spec.schedulingPolicy: exactly one of basic and gang " +
                           "must be set");
  }
  group->gang = !basic;
  group->min_member = 1;
  if (basic) return Status::Ok();
  return ReadGangMinimum(gang, minimum_key, where, group);
}

Status ReadDisruptionAndPreemption(const json& spec, const std::string& where,
                                   PodGroupInfo* group) {
  const json& mode = Field(spec, "disruptionMode");
  if (!mode.is_null()) {
    const bool all = !Field(mode, "all").is_null();
    if (all == !Field(mode, "single").is_null()) {
      return Status::Invalid(where + ": spec.disruptionMode: exactly one of single and all " +
                             "must be set");
    }
    group->disrupt_whole = all;
  }
  const json& preemption = Field(spec, "preemptionPolicy");
  if (!preemption.is_null()) {
    const std::string value = preemption.is_string() ? preemption.get<std::string>() : "";
    if (value != "Never" && value != "PreemptLowerPriority") {
      return Status::Invalid(where + ": spec.preemptionPolicy: " + JsonPrefix(preemption, 64) +
                             " is not PreemptLowerPriority or Never");
    }
    group->preempt_never = value == "Never";
  }
  if (!Field(spec, "priority").is_null()) {
    auto priority = ReadInt32(spec, "priority", where + ": spec", 0);
    if (!priority.ok()) return priority.status();
    group->priority = *priority;
  }
  group->priority_class_name = String(spec, "priorityClassName");
  return Status::Ok();
}

Status ReadTopology(const json& spec, const std::string& where, PodGroupInfo* group) {
  const json& topology = Field(Field(spec, "schedulingConstraints"), "topology");
  if (topology.is_null()) return Status::Ok();
  if (!topology.is_array() || topology.size() > 1) {
    return Status::Invalid(where + ": spec.schedulingConstraints.topology: expected at most " +
                           "one constraint, got " + JsonPrefix(topology, 128));
  }
  if (topology.empty()) return Status::Ok();
  const std::string key = String(topology[0], "key");
  if (key.empty() || key.size() > kMaxNameLength) {
    return Status::Invalid(where + ": spec.schedulingConstraints.topology[0].key: expected a " +
                           "node label key, got " + JsonPrefix(Field(topology[0], "key"), 64));
  }
  group->topology_key = key;
  return Status::Ok();
}

// status.conditions: whether `condition` (PodGroupInitiallyScheduled, or
// CompositePodGroupInitiallyScheduled) is True (terminal once it is).
bool InitiallyScheduled(const json& object, std::string_view condition) {
  const json& conditions = Field(Field(object, "status"), "conditions");
  for (size_t i = 0; conditions.is_array() && i < conditions.size(); ++i) {
    if (String(conditions[i], "type") == condition) {
      return String(conditions[i], "status") == "True";
    }
  }
  return false;
}

// The queue annotation, metadata.generation and the status condition.
Status ReadMetadataAndStatus(const json& object, const std::string& where,
                             std::string_view condition, PodGroupInfo* group) {
  const json& metadata = Field(object, "metadata");
  group->queue = String(Field(metadata, "annotations"), kQueueAnnotation);
  auto generation = ReadInteger(metadata, "generation", where + ": metadata", 0);
  if (!generation.ok()) return generation.status();
  group->generation = *generation;
  group->initially_scheduled = InitiallyScheduled(object, condition);
  return Status::Ok();
}

// spec.parentCompositePodGroupName: a name in the same namespace.
Status ReadParent(const json& spec, const std::string& where, PodGroupInfo* group) {
  const json& parent = Field(spec, "parentCompositePodGroupName");
  if (parent.is_null()) return Status::Ok();
  if (!parent.is_string() || parent.get<std::string>().empty() ||
      parent.get<std::string>().size() > kMaxNameLength) {
    return Status::Invalid(where + ": spec.parentCompositePodGroupName: expected a name, got " +
                           JsonPrefix(parent, 64));
  }
  group->parent = parent.get<std::string>();
  return Status::Ok();
}

// The two kinds' common reading: metadata, creation time, parent, disruption and
// preemption, topology; its scheduling policy with the kind's minimum (`minimum_key`);
// `extra` (when given) the rest of its spec; then metadata and status with the kind's
// condition.
Result<PodGroupInfo> ParseGroupObject(const json& object, GroupApi api, const char* kind,
                                      std::string_view condition, const char* minimum_key,
                                      Status (*extra)(const json& spec, const std::string& where,
                                                      PodGroupInfo* group)) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  PodGroupInfo group;
  group.meta = std::move(meta).value();
  group.api = api;
  const std::string where = DescribeObject(group.meta, kind);
  GANTRY_RETURN_IF_ERROR(ReadCreationTimestamp(object, where, &group.meta));
  const json& spec = Field(object, "spec");
  GANTRY_RETURN_IF_ERROR(ReadParent(spec, where, &group));
  GANTRY_RETURN_IF_ERROR(ReadSchedulingPolicy(spec, where, minimum_key, &group));
  GANTRY_RETURN_IF_ERROR(ReadDisruptionAndPreemption(spec, where, &group));
  GANTRY_RETURN_IF_ERROR(ReadTopology(spec, where, &group));
  if (extra != nullptr) GANTRY_RETURN_IF_ERROR(extra(spec, where, &group));
  GANTRY_RETURN_IF_ERROR(ReadMetadataAndStatus(object, where, condition, &group));
  return group;
}

// spec.resourceClaims: the claims the group's pods share (DRAWorkloadResourceClaims).
Status ReadResourceClaims(const json& spec, const std::string& where, PodGroupInfo* group) {
  auto claims = DecodeClaimRefList(spec, where + ": spec");
  if (!claims.ok()) return claims.status();
  group->resource_claims = std::move(claims).value();
  return Status::Ok();
}

}  // namespace

Result<PodGroupInfo> ParseNativePodGroup(const json& object) {
  return ParseGroupObject(object, GroupApi::kNative, "podgroup", kInitiallyScheduledCondition,
                          "minCount", ReadResourceClaims);
}

Result<PodGroupInfo> ParseCompositePodGroup(const json& object) {
  return ParseGroupObject(object, GroupApi::kComposite, "compositepodgroup",
                          kCompositeInitiallyScheduledCondition, "minGroupCount", nullptr);
}

std::string SchedulingGroupOf(const json& spec) {
  return String(Field(spec, "schedulingGroup"), "podGroupName");
}

}  // namespace gantry::k8s

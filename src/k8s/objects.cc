// PodGroups (Volcano's and scheduler-plugins'), Volcano's Queues and PriorityClasses decoded
// from the API's JSON; pods are in pod_object.cc, nodes in node_object.cc.
#include "k8s/objects.h"

#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "model/limits.h"

namespace gantry::k8s {

using json = nlohmann::json;

Result<PodGroupInfo> ParsePodGroup(const json& object, GroupApi api) {
  if (api == GroupApi::kNative) return ParseNativePodGroup(object);
  if (api == GroupApi::kComposite) return ParseCompositePodGroup(object);
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  PodGroupInfo group;
  group.meta = std::move(meta).value();
  group.api = api;
  const std::string where = DescribeObject(group.meta, "podgroup");
  GANTRY_RETURN_IF_ERROR(ReadCreationTimestamp(object, where, &group.meta));
  const json& spec = Field(object, "spec");
  auto min_member = ReadInteger(spec, "minMember", where + ": spec", 1);
  if (!min_member.ok()) return min_member.status();
  if (*min_member < 0 || *min_member > 1000000) {
    return Status::Invalid(where + ": spec.minMember: " + std::to_string(*min_member) +
                           " is out of range (0..1000000)");
  }
  group.min_member = static_cast<int32_t>(std::max<int64_t>(*min_member, 1));
  group.queue = String(spec, "queue");
  group.priority_class_name = String(spec, "priorityClassName");
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(spec, "minResources"),
                                           where + ": spec.minResources", NameSource::kWorkload,
                                           &group.min_resources));
  group.phase = String(Field(object, "status"), "phase");
  if (const json& topology = Field(spec, "networkTopology"); topology.is_object()) {
    const std::string mode = String(topology, "mode");
    if (mode != "hard" && mode != "soft") {
      return Status::Invalid(where + ": spec.networkTopology.mode: \"" + mode.substr(0, 64) +
                             "\" is not hard or soft");
    }
    auto tier = ReadInteger(topology, "highestTierAllowed", where + ": spec.networkTopology", 1);
    if (!tier.ok()) return tier.status();
    if (*tier < 1 || *tier > kMaxTopologyLevels) {
      return Status::Invalid(where +
                             ": spec.networkTopology.highestTierAllowed: " + std::to_string(*tier) +
                             " is out of range (1.." + std::to_string(kMaxTopologyLevels) + ")");
    }
    group.network_topology_tier = static_cast<int32_t>(*tier);
    group.network_topology_hard = mode == "hard";
  }
  return group;
}

Result<QueueInfo> ParseQueue(const json& object) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  QueueInfo queue;
  queue.meta = std::move(meta).value();
  const std::string where = DescribeObject(queue.meta, "queue");
  const json& spec = Field(object, "spec");
  auto weight = ReadInteger(spec, "weight", where + ": spec", 1);
  if (!weight.ok()) return weight.status();
  // An int32 in Volcano's API: larger weights would overflow their sum in the engine.
  if (*weight < 1 || *weight > INT32_MAX) {
    return Status::Invalid(where + ": spec.weight: " + std::to_string(*weight) +
                           " is out of range (1.." + std::to_string(INT32_MAX) + ")");
  }
  queue.weight = *weight;
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(spec, "capability"), where + ": spec.capability",
                                           NameSource::kTrusted, &queue.capability));
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(Field(spec, "guarantee"), "resource"),
                                           where + ": spec.guarantee.resource",
                                           NameSource::kTrusted, &queue.guarantee));
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(spec, "deserved"), where + ": spec.deserved",
                                           NameSource::kTrusted, &queue.deserved));
  const json& parent = Field(spec, "parent");
  if (!parent.is_null()) {
    if (!parent.is_string() || parent.get<std::string>().size() > kMaxNameLength) {
      return Status::Invalid(where + ": spec.parent: expected a queue name, got " +
                             JsonPrefix(parent, 64));
    }
    queue.parent = parent.get<std::string>();
  }
  const json& reclaimable = Field(spec, "reclaimable");
  if (!reclaimable.is_null()) {
    if (!reclaimable.is_boolean()) {
      return Status::Invalid(where + ": spec.reclaimable: expected true or false, got " +
                             JsonPrefix(reclaimable, 64));
    }
    queue.reclaimable = reclaimable.get<bool>();
  }
  const json& half_life =
      Field(Field(Field(object, "metadata"), "annotations"), kUsageHalfLifeAnnotation);
  if (!half_life.is_null()) {
    const std::string at = where + ": metadata.annotations[" + kUsageHalfLifeAnnotation + "]";
    int64_t seconds = -1;
    if (half_life.is_string()) {
      const std::string& text = half_life.get_ref<const std::string&>();
      if (!text.empty() && text.size() <= 12 &&
          std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        seconds = std::stoll(text);
      }
    }
    if (seconds < 0 || seconds > kMaxConfiguredSeconds) {
      return Status::Invalid(at + ": expected whole seconds (0.." +
                             std::to_string(kMaxConfiguredSeconds) + "), got " +
                             JsonPrefix(half_life, 64));
    }
    if (!queue.parent.empty() && queue.parent != "root" && seconds > 0) {
      return Status::Invalid(at +
                             ": set on the top-level queue of a tree, for the whole tree "
                             "(this queue's parent is " +
                             queue.parent + ")");
    }
    queue.usage_half_life_s = seconds;
  }
  auto movable = ParseMovableAnnotation(Field(Field(object, "metadata"), "annotations"), where);
  if (!movable.ok()) return movable.status();
  queue.movable = *movable;
  return queue;
}

Result<bool> ParseMovableAnnotation(const json& annotations, const std::string& where) {
  const json& value = Field(annotations, kMovableAnnotation);
  if (value.is_null()) return false;
  if (value.is_string() && value.get_ref<const std::string&>() == "true") return true;
  if (value.is_string() && value.get_ref<const std::string&>() == "false") return false;
  const std::string text =
      value.is_string() ? "\"" + KeyText(value.get<std::string>()) + "\"" : JsonPrefix(value, 64);
  return Status::Invalid(where + ": metadata.annotations[" + kMovableAnnotation + "]: " + text +
                         " is not \"true\" or \"false\"");
}

Result<PriorityClassInfo> ParsePriorityClass(const json& object) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  PriorityClassInfo pc;
  pc.meta = std::move(meta).value();
  auto value = ReadInt32(object, "value", "priorityclass " + pc.meta.name, 0);
  if (!value.ok()) return value.status();
  pc.value = *value;
  return pc;
}

}  // namespace gantry::k8s

#include "k8s/workloads.h"

#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/pod_rules.h"
#include "model/limits.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// A map of strings (a Service's or a ReplicationController's spec.selector): absent or
// null is empty; keys and values held to the limits on labels.
Status StringMap(const json& object, const char* key, const std::string& at, Labels* out) {
  const json& map = Field(object, key);
  const std::string here = at + "." + key;
  if (map.is_null()) return Status::Ok();
  if (!map.is_object()) {
    return Status::Invalid(here + ": expected a map of strings, got " + JsonPrefix(map, 64));
  }
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it.key().empty() || it.key().size() > kMaxLabelKeyLength) {
      return Status::Invalid(here + ": a key of " + std::to_string(it.key().size()) + " bytes (\"" +
                             KeyText(it.key()) + "\"); keys are 1 to " +
                             std::to_string(kMaxLabelKeyLength) + " bytes");
    }
    if (!it.value().is_string()) {
      return Status::Invalid(here + "." + KeyText(it.key()) + ": expected a string, got " +
                             JsonPrefix(it.value(), 64));
    }
    const std::string value = it.value().get<std::string>();
    if (value.size() > kMaxLabelValueLength) {
      return Status::Invalid(here + "." + KeyText(it.key()) + ": a value of " +
                             std::to_string(value.size()) + " bytes; the limit is " +
                             std::to_string(kMaxLabelValueLength));
    }
    out->Set(it.key(), value);
  }
  return Status::Ok();
}

// Keys and values of a parsed selector held to the limits on labels, as StringMap holds
// a map's.
Status BoundedSelector(const LabelSelector& selector, const std::string& at) {
  auto check = [&](const std::string& key, const std::string* value) -> Status {
    if (key.size() > kMaxLabelKeyLength) {
      return Status::Invalid(at + ": a key of " + std::to_string(key.size()) + " bytes (\"" +
                             KeyText(key) + "\"); the limit is " +
                             std::to_string(kMaxLabelKeyLength));
    }
    if (value != nullptr && value->size() > kMaxLabelValueLength) {
      return Status::Invalid(at + ": a value of " + std::to_string(value->size()) +
                             " bytes for key \"" + KeyText(key) + "\"; the limit is " +
                             std::to_string(kMaxLabelValueLength));
    }
    return Status::Ok();
  };
  for (const auto& [key, value] : selector.match_labels.pairs()) {
    GANTRY_RETURN_IF_ERROR(check(key, &value));
  }
  for (const SelectorRequirement& r : selector.match_expressions) {
    GANTRY_RETURN_IF_ERROR(check(r.key, nullptr));
    for (const std::string& v : r.values) GANTRY_RETURN_IF_ERROR(check(r.key, &v));
  }
  return Status::Ok();
}

}  // namespace

const char* SpreadOwnerKindName(SpreadOwnerKind kind) {
  switch (kind) {
    case SpreadOwnerKind::kReplicationController:
      return "replicationcontroller";
    case SpreadOwnerKind::kReplicaSet:
      return "replicaset";
    case SpreadOwnerKind::kStatefulSet:
      return "statefulset";
    case SpreadOwnerKind::kNone:
      break;
  }
  return "owner";
}

const char* SpreadOwnerApiVersion(SpreadOwnerKind kind) {
  return kind == SpreadOwnerKind::kReplicationController ? "v1" : "apps/v1";
}

const char* SpreadOwnerKindTitle(SpreadOwnerKind kind) {
  switch (kind) {
    case SpreadOwnerKind::kReplicationController:
      return "ReplicationController";
    case SpreadOwnerKind::kReplicaSet:
      return "ReplicaSet";
    case SpreadOwnerKind::kStatefulSet:
      return "StatefulSet";
    case SpreadOwnerKind::kNone:
      break;
  }
  return "";
}

Result<ServiceInfo> ParseService(const json& object) {
  auto meta = NamedMeta(object, "service");
  if (!meta.ok()) return meta.status();
  ServiceInfo service;
  service.meta = std::move(meta).value();
  const std::string where = "service " + service.meta.Key() + ": spec";
  GANTRY_RETURN_IF_ERROR(StringMap(Field(object, "spec"), "selector", where, &service.selector));
  return service;
}

Result<SpreadOwnerInfo> ParseSpreadOwner(const json& object, SpreadOwnerKind kind) {
  const char* name = SpreadOwnerKindName(kind);
  auto meta = NamedMeta(object, name);
  if (!meta.ok()) return meta.status();
  SpreadOwnerInfo owner;
  owner.meta = std::move(meta).value();
  owner.kind = kind;
  const std::string where = std::string(name) + " " + owner.meta.Key() + ": spec";
  const json& spec = Field(object, "spec");
  if (kind == SpreadOwnerKind::kReplicationController) {
    Labels selector;
    GANTRY_RETURN_IF_ERROR(StringMap(spec, "selector", where, &selector));
    if (!selector.empty()) owner.selector = LabelSelector{std::move(selector), {}};
    return owner;
  }
  GANTRY_RETURN_IF_ERROR(ParseLabelSelector(spec, "selector", where, &owner.selector));
  if (owner.selector) GANTRY_RETURN_IF_ERROR(BoundedSelector(*owner.selector, where + ".selector"));
  return owner;
}

}  // namespace gantry::k8s

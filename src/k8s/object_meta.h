// What every Kubernetes object has, as the decoders of objects read it (objects.h,
// numa_objects.h, datasets.h, volumes.h, ...): its metadata, and the strict readers of
// fields that errors name ("pod team-a/train-0.spec.priority: ...").
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "model/status.h"

namespace gantry::k8s {

struct ObjectMeta {
  std::string namespace_;  // empty for cluster-scoped objects
  std::string name;
  std::string uid;
  std::string resource_version;
  bool deleting = false;  // has a deletionTimestamp
  // metadata.creationTimestamp in seconds since 1970 (UTC), for pods and PodGroups (their
  // decoders read it); 0 when absent.
  int64_t created = 0;
  // "namespace/name", or "name" when cluster-scoped: the key informers use.
  std::string Key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
};

Result<ObjectMeta> ParseMeta(const nlohmann::json& object);
// ParseMeta for an object of `kind` (in errors: "persistentvolume: ..."), with its name and
// namespace held to the API server's limit (kMaxNameLength).
Result<ObjectMeta> NamedMeta(const nlohmann::json& object, const char* kind);

// "KIND NAMESPACE/NAME", how errors name an object.
std::string DescribeObject(const ObjectMeta& meta, const char* kind);
// object[key] as an integer: `fallback` when absent or null, an error naming
// "WHERE.KEY" when it is not an integer.
Result<int64_t> ReadInteger(const nlohmann::json& object, const char* key, const std::string& where,
                            int64_t fallback);
// An int32 field (pod priority, PriorityClass value): a larger number is an error, not
// a wrap.
Result<int32_t> ReadInt32(const nlohmann::json& object, const char* key, const std::string& where,
                          int32_t fallback);
// metadata.creationTimestamp into meta->created: absent (or null) is 0, anything but an
// RFC 3339 string an error naming the field.
Status ReadCreationTimestamp(const nlohmann::json& object, const std::string& where,
                             ObjectMeta* meta);

}  // namespace gantry::k8s

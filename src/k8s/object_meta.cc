#include "k8s/object_meta.h"

#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/timestamp.h"
#include "model/limits.h"

namespace gantry::k8s {

using json = nlohmann::json;

Result<ObjectMeta> ParseMeta(const json& object) {
  const json& m = Field(object, "metadata");
  ObjectMeta meta;
  meta.namespace_ = String(m, "namespace");
  meta.name = String(m, "name");
  meta.uid = String(m, "uid");
  meta.resource_version = String(m, "resourceVersion");
  meta.deleting = !Field(m, "deletionTimestamp").is_null();
  if (meta.name.empty())
    return Status::Invalid("object without metadata.name: " + JsonPrefix(object, 120));
  return meta;
}

Result<ObjectMeta> NamedMeta(const json& object, const char* kind) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return Status::Invalid(std::string(kind) + ": " + meta.status().message());
  if (meta->name.size() > kMaxNameLength || meta->namespace_.size() > kMaxNameLength) {
    return Status::Invalid(std::string(kind) + " " + meta->Key().substr(0, 80) +
                           "...: metadata.name or namespace is longer than " +
                           std::to_string(kMaxNameLength) + " bytes");
  }
  return meta;
}

std::string DescribeObject(const ObjectMeta& meta, const char* kind) {
  return std::string(kind) + " " + meta.Key();
}

Result<int64_t> ReadInteger(const json& object, const char* key, const std::string& where,
                            int64_t fallback) {
  const json& v = Field(object, key);
  if (v.is_null()) return fallback;
  if (!v.is_number_integer()) {
    return Status::Invalid(where + "." + key + ": expected an integer, got " + JsonText(v));
  }
  // Above INT64_MAX (JSON's unsigned numbers), get<int64_t> would wrap to a negative value.
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) {
    return Status::Invalid(where + "." + key + ": " + JsonText(v) + " is out of range");
  }
  return v.get<int64_t>();
}

Result<int32_t> ReadInt32(const json& object, const char* key, const std::string& where,
                          int32_t fallback) {
  auto v = ReadInteger(object, key, where, fallback);
  if (!v.ok()) return v.status();
  if (*v < INT32_MIN || *v > INT32_MAX) {
    return Status::Invalid(where + "." + key + ": " + std::to_string(*v) +
                           " is out of range for an int32");
  }
  return static_cast<int32_t>(*v);
}

Status ReadCreationTimestamp(const json& object, const std::string& where, ObjectMeta* meta) {
  const json& v = Field(Field(object, "metadata"), "creationTimestamp");
  meta->created = 0;
  if (v.is_null()) return Status::Ok();
  const std::string at = where + ": metadata.creationTimestamp: ";
  if (!v.is_string()) {
    return Status::Invalid(at + "expected an RFC 3339 time like 2024-05-01T12:00:00Z, got " +
                           JsonPrefix(v, 64));
  }
  auto seconds = ParseRfc3339(v.get<std::string>());
  if (!seconds.ok()) return Status::Invalid(at + seconds.status().message());
  meta->created = *seconds;
  return Status::Ok();
}

}  // namespace gantry::k8s

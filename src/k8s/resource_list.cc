#include "k8s/resource_list.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "model/limits.h"
#include "model/quantity.h"

namespace gantry::k8s {

using json = nlohmann::json;

Result<Milli> ReadQuantity(const json& value, const std::string& where) {
  if (value.is_string()) {
    auto q = ParseQuantity(value.get<std::string>());
    if (!q.ok()) return Status::Invalid(where + ": " + q.status().message());
    return q;
  }
  if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX}) {
    // Read as int64 it would wrap around to a negative amount.
    return Status::OutOfRange(where + ": " + JsonText(value) + " overflows");
  }
  if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    Milli out = 0;
    if (!CheckedMul(v, kMilliPerUnit, &out))
      return Status::OutOfRange(where + ": " + std::to_string(v) + " overflows");
    return out;
  }
  if (value.is_number()) return ReadQuantity(json(JsonText(value)), where);
  return Status::Invalid(where + ": expected a quantity, got " + std::string(value.type_name()));
}

void UnreadableRequests::AddId(ResourceId id) {
  auto it = std::lower_bound(ids.begin(), ids.end(), id);
  if (it == ids.end() || *it != id) ids.insert(it, id);
}

void UnreadableRequests::AddName(const std::string& name) {
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  if (names.size() >= kMaxNames) {
    all = true;
    return;
  }
  names.push_back(name.substr(0, kMaxLabelKeyLength));
}

void UnreadableRequests::Merge(const UnreadableRequests& other) {
  all = all || other.all;
  gpus = gpus || other.gpus;
  for (ResourceId id : other.ids) AddId(id);
  for (const std::string& name : other.names) AddName(name);
}

std::string UnreadableRequests::ToString() const {
  if (all) return "every resource";
  std::string out;
  auto add = [&](const std::string& name) { out += (out.empty() ? "" : ", ") + KeyText(name); };
  for (ResourceId id : ids) add(ResourceName(id));
  if (gpus) add(std::string(kGpuResourceName));
  for (const std::string& name : names) add(name);
  return out;
}

void ReadResourceList(const json& list, const std::string& where, NameSource source,
                      ResourceVector* out, UnreadableRequests* unreadable, Status* problem) {
  auto fail = [&](Status st) {
    if (problem->ok()) *problem = std::move(st);
  };
  if (list.is_null()) return;
  if (!list.is_object()) {
    unreadable->all = true;
    fail(Status::Invalid(where + ": expected a map of resources, got " +
                         std::string(list.type_name())));
    return;
  }
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string at = where + "." + KeyText(it.key());
    auto id = InternResourceName(it.key(), source);
    if (!id.ok()) {
      unreadable->AddName(it.key());
      std::string message = at + ": " + id.status().message();
      fail(id.status().code() == Status::Code::kOutOfRange ? Status::OutOfRange(message)
                                                           : Status::Invalid(message));
      continue;
    }
    auto q = ReadQuantity(it.value(), at);
    if (q.ok() && *q < 0) q = Status::Invalid(at + ": negative");
    if (!q.ok()) {
      unreadable->AddId(*id);
      fail(q.status());
      continue;
    }
    // Devices are counted in milli-GPUs, so a whole GPU is 1000 either way.
    out->Set(*id, *q);
  }
}

Status ParseResourceList(const json& list, const std::string& where, NameSource source,
                         ResourceVector* out) {
  UnreadableRequests unreadable;
  Status problem = Status::Ok();
  ReadResourceList(list, where, source, out, &unreadable, &problem);
  return problem;
}

}  // namespace gantry::k8s

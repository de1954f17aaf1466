// A ResourceClaim's status.allocation written as the API takes it (dra_objects.h): what the
// daemon writes for an allocation a session made, before it binds the pod.
#include <ctime>
#include <nlohmann/json.hpp>

#include "k8s/dra_objects.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

const char* EffectName(dra::DeviceTaintEffect effect) {
  switch (effect) {
    case dra::DeviceTaintEffect::kNone:
      return "None";
    case dra::DeviceTaintEffect::kNoSchedule:
      return "NoSchedule";
    case dra::DeviceTaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "NoSchedule";
}

std::string Rfc3339(int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

json Tolerations(const std::vector<dra::DeviceToleration>& tolerations) {
  json out = json::array();
  for (const dra::DeviceToleration& t : tolerations) {
    json one = json::object();
    if (!t.key.empty()) one["key"] = t.key;
    one["operator"] = t.op == dra::DeviceToleration::Op::kExists ? "Exists" : "Equal";
    if (!t.value.empty()) one["value"] = t.value;
    if (t.effect) one["effect"] = EffectName(*t.effect);
    if (t.toleration_seconds) one["tolerationSeconds"] = *t.toleration_seconds;
    out.push_back(std::move(one));
  }
  return out;
}

json Result(const dra::AllocationResult& r) {
  json out = {{"request", r.request}, {"driver", r.driver}, {"pool", r.pool}, {"device", r.device}};
  if (r.admin_access) out["adminAccess"] = true;
  if (!r.tolerations.empty()) out["tolerations"] = Tolerations(r.tolerations);
  if (!r.binding_conditions.empty()) out["bindingConditions"] = r.binding_conditions;
  if (!r.binding_failure_conditions.empty()) {
    out["bindingFailureConditions"] = r.binding_failure_conditions;
  }
  if (r.share_id) out["shareID"] = *r.share_id;
  if (!r.consumed_capacity.empty()) {
    json consumed = json::object();
    for (const auto& [name, amount] : r.consumed_capacity) {
      const bool bare = r.consumed_bare.count(name) && name.rfind(r.driver + "/", 0) == 0;
      consumed[bare ? name.substr(r.driver.size() + 1) : name] = FormatQuantity(amount);
    }
    out["consumedCapacity"] = std::move(consumed);
  }
  return out;
}

// A v1 NodeSelector: each term's label requirements as matchExpressions, a node name
// requirement (kNodeNameField) as matchFields on metadata.name.
json NodeSelectorJson(const std::vector<std::vector<SelectorRequirement>>& terms) {
  json out = json::array();
  for (const auto& term : terms) {
    json expressions = json::array();
    json fields = json::array();
    for (const SelectorRequirement& r : term) {
      const bool field = r.key == kNodeNameField;
      json one = {{"key", field ? std::string("metadata.name") : r.key},
                  {"operator", std::string(SelectorOpName(r.op))}};
      if (!r.values.empty()) one["values"] = r.values;
      (field ? fields : expressions).push_back(std::move(one));
    }
    json t = json::object();
    if (!expressions.empty()) t["matchExpressions"] = std::move(expressions);
    if (!fields.empty()) t["matchFields"] = std::move(fields);
    out.push_back(std::move(t));
  }
  return {{"nodeSelectorTerms", std::move(out)}};
}

}  // namespace

json EncodeAllocation(const dra::Allocation& allocation) {
  json results = json::array();
  for (const dra::AllocationResult& r : allocation.results) results.push_back(Result(r));
  json devices = {{"results", std::move(results)}};
  if (!allocation.config.empty()) {
    json config = json::array();
    for (const dra::AllocationConfig& c : allocation.config) {
      json one = {
          {"source", c.from_class ? "FromClass" : "FromClaim"},
          {"opaque",
           {{"driver", c.driver}, {"parameters", json::parse(c.parameters_json, nullptr, false)}}}};
      if (!c.requests.empty()) one["requests"] = c.requests;
      config.push_back(std::move(one));
    }
    devices["config"] = std::move(config);
  }
  json out = {{"devices", std::move(devices)}};
  if (allocation.node_selector) out["nodeSelector"] = NodeSelectorJson(*allocation.node_selector);
  if (allocation.allocation_timestamp) {
    out["allocationTimestamp"] = Rfc3339(*allocation.allocation_timestamp);
  }
  return out;
}

}  // namespace gantry::k8s

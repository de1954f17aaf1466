// ResourceSlices and DeviceTaintRules (dra_objects.h): what the drivers publish of their
// devices, and the taints an administrator puts on them.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "k8s/dra_fields.h"
#include "k8s/dra_objects.h"
#include "k8s/json_fields.h"
#include "k8s/json_text.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;
using namespace drajson;

// Which of the four node selections a slice (or, with perDeviceNodeSelection, a device)
// sets. `per_device` is null for a device.
Status ReadNodeSelection(const json& object, const std::string& at, bool* per_device, bool slice,
                         dra::NodeSelection* out) {
  std::vector<std::string> set;
  std::optional<std::string> node_name;
  GANTRY_RETURN_IF_ERROR(OptionalString(object, "nodeName", at, kMaxDnsSubdomain, &node_name));
  if (node_name) {
    if (node_name->empty()) {
      return Status::Invalid(Child(at, "nodeName") + ": must be unset or a node's name");
    }
    set.push_back("nodeName");
    out->node_name = std::move(node_name);
  }
  const json& selector = Field(object, "nodeSelector");
  if (!selector.is_null()) {
    NodeSelectorTerms terms;
    GANTRY_RETURN_IF_ERROR(
        NodeSelector(selector, Child(at, "nodeSelector"), /*exactly_one=*/slice, &terms));
    set.push_back("nodeSelector");
    out->node_selector = std::move(terms);
  }
  std::optional<bool> flag;
  GANTRY_RETURN_IF_ERROR(OptionalBool(object, "allNodes", at, &flag));
  if (flag) {
    if (!*flag) return Status::Invalid(Child(at, "allNodes") + ": must be unset or true");
    set.push_back("allNodes");
    out->all_nodes = true;
  }
  if (per_device != nullptr) {
    GANTRY_RETURN_IF_ERROR(OptionalBool(object, "perDeviceNodeSelection", at, &flag));
    if (flag) {
      if (!*flag) {
        return Status::Invalid(Child(at, "perDeviceNodeSelection") + ": must be unset or true");
      }
      set.push_back("perDeviceNodeSelection");
      *per_device = true;
    }
  }
  const std::string choices = slice ? "nodeName, nodeSelector, allNodes, perDeviceNodeSelection"
                                    : "nodeName, nodeSelector, allNodes";
  if (set.empty()) return Status::Invalid(at + ": exactly one of " + choices + " is required");
  if (set.size() > 1) {
    return Status::Invalid(at + ": exactly one of " + choices + " is allowed, got " + set[0] +
                           " and " + set[1]);
  }
  return Status::Ok();
}

// A map of counters (name -> {"value": quantity}), at least one, at most 32.
Status ReadCounters(const json& object, const std::string& at, dra::Counters* out) {
  const json* map = nullptr;
  GANTRY_RETURN_IF_ERROR(
      Map(object, "counters", at, static_cast<size_t>(dra::kMaxCountersPerSet), &map));
  const std::string here = Child(at, "counters");
  if (map->empty()) return Status::Invalid(here + ": required");
  for (auto it = map->begin(); it != map->end(); ++it) {
    const std::string key_at = MapKey(here, it.key());
    GANTRY_RETURN_IF_ERROR(CheckDnsLabel(it.key(), key_at));
    if (!it.value().is_object()) {
      return Status::Invalid(key_at + ": expected an object, got " + Shown(it.value()));
    }
    Milli value = 0;
    GANTRY_RETURN_IF_ERROR(Quantity(Field(it.value(), "value"), Child(key_at, "value"), &value));
    (*out)[it.key()] = value;
  }
  return Status::Ok();
}

Status ReadAttribute(const json& value, const std::string& at, dra::AttributeValue* out) {
  if (!value.is_object()) {
    return Status::Invalid(at + ": expected an object, got " + Shown(value));
  }
  for (const char* list : {"ints", "bools", "strings", "versions"}) {
    if (!Field(value, list).is_null()) {
      return Status::Invalid(Child(at, list) +
                             ": list-typed attributes need the feature gate "
                             "DRAListTypeAttributes, off by default in Kubernetes 1.37");
    }
  }
  std::vector<const char*> set;
  for (const char* kind : {"int", "bool", "string", "version"}) {
    if (!Field(value, kind).is_null()) set.push_back(kind);
  }
  if (set.size() != 1) {
    return Status::Invalid(
        at + ": exactly one of int, bool, string, version is required" +
        (set.empty() ? std::string() : std::string(", got ") + set[0] + " and " + set[1]));
  }
  const std::string kind = set[0];
  if (kind == "int") {
    std::optional<int64_t> v;
    GANTRY_RETURN_IF_ERROR(OptionalInt(value, "int", at, &v));
    *out = *v;
  } else if (kind == "bool") {
    std::optional<bool> v;
    GANTRY_RETURN_IF_ERROR(OptionalBool(value, "bool", at, &v));
    *out = *v;
  } else {
    std::optional<std::string> v;
    GANTRY_RETURN_IF_ERROR(OptionalString(value, kind.c_str(), at, kMaxAttributeValue, &v));
    if (kind == "string") {
      *out = std::move(*v);
    } else {
      if (!IsSemanticVersion(*v)) {
        return Status::Invalid(Child(at, "version") + ": \"" + KeyText(*v) +
                               "\" is not a semantic version (semver.org 2.0.0)");
      }
      *out = dra::SemanticVersion{std::move(*v)};
    }
  }
  return Status::Ok();
}

Status ReadRequestPolicy(const json& policy, Milli capacity, const std::string& at,
                         dra::CapacityRequestPolicy* out) {
  if (!policy.is_object()) {
    return Status::Invalid(at + ": expected an object, got " + Shown(policy));
  }
  const json& default_value = Field(policy, "default");
  if (!default_value.is_null()) {
    Milli v = 0;
    GANTRY_RETURN_IF_ERROR(Quantity(default_value, Child(at, "default"), &v));
    out->default_value = v;
  }
  const json* values = nullptr;
  GANTRY_RETURN_IF_ERROR(List(policy, "validValues", at, kMaxValidValues, &values));
  for (size_t i = 0; i < values->size(); ++i) {
    const std::string here = Index(Child(at, "validValues"), i);
    Milli v = 0;
    GANTRY_RETURN_IF_ERROR(Quantity((*values)[i], here, &v));
    if (!out->valid_values.empty() && v <= out->valid_values.back()) {
      return Status::Invalid(here + ": values must be in ascending order, without repeats");
    }
    if (v > capacity) return Status::Invalid(here + ": larger than the capacity's value");
    out->valid_values.push_back(v);
  }
  const json* range = nullptr;
  GANTRY_RETURN_IF_ERROR(Object(policy, "validRange", at, &range));
  if (range != nullptr && !out->valid_values.empty()) {
    return Status::Invalid(at + ": validValues and validRange are not allowed together");
  }
  if ((range != nullptr || !out->valid_values.empty()) && !out->default_value) {
    return Status::Invalid(Child(at, "default") + ": required with validValues or validRange");
  }
  if (!out->valid_values.empty() && std::find(out->valid_values.begin(), out->valid_values.end(),
                                              *out->default_value) == out->valid_values.end()) {
    return Status::Invalid(Child(at, "default") + ": not one of validValues");
  }
  if (range == nullptr) return Status::Ok();
  const std::string here = Child(at, "validRange");
  dra::CapacityRequestPolicy::Range r;
  const json& min = Field(*range, "min");
  if (min.is_null()) return Status::Invalid(Child(here, "min") + ": required");
  GANTRY_RETURN_IF_ERROR(Quantity(min, Child(here, "min"), &r.min));
  if (r.min > capacity) return Status::Invalid(Child(here, "min") + ": larger than the capacity");
  if (*out->default_value < r.min) return Status::Invalid(Child(at, "default") + ": less than min");
  for (const auto& [key, field] : {std::pair{"max", &r.max}, std::pair{"step", &r.step}}) {
    const json& v = Field(*range, key);
    if (v.is_null()) continue;
    Milli amount = 0;
    GANTRY_RETURN_IF_ERROR(Quantity(v, Child(here, key), &amount));
    *field = amount;
  }
  if (r.max && (*r.max < r.min || *r.max > capacity || *out->default_value > *r.max)) {
    return Status::Invalid(Child(here, "max") +
                           ": must lie between min and the capacity, and not below default");
  }
  if (r.step && *r.step <= 0) return Status::Invalid(Child(here, "step") + ": must be positive");
  out->valid_range = r;
  return Status::Ok();
}

Status ReadDevice(const json& d, const std::string& at, const dra::ResourceSlice& slice,
                  dra::Device* out) {
  if (!d.is_object()) return Status::Invalid(at + ": expected an object, got " + Shown(d));
  GANTRY_RETURN_IF_ERROR(RequiredString(d, "name", at, kMaxDnsLabel, &out->name));
  GANTRY_RETURN_IF_ERROR(CheckDnsLabel(out->name, Child(at, "name")));
  const json* attributes = nullptr;
  const json* capacity = nullptr;
  constexpr auto kMax = static_cast<size_t>(dra::kMaxAttributesAndCapacitiesPerDevice);
  GANTRY_RETURN_IF_ERROR(Map(d, "attributes", at, kMax, &attributes));
  GANTRY_RETURN_IF_ERROR(Map(d, "capacity", at, kMax, &capacity));
  if (attributes->size() + capacity->size() > kMax) {
    return Status::Invalid(at + ": " + std::to_string(attributes->size() + capacity->size()) +
                           " attributes and capacities, at most " + std::to_string(kMax) +
                           " allowed");
  }
  std::set<dra::QualifiedName> written_qualified;
  for (auto it = attributes->begin(); it != attributes->end(); ++it) {
    const std::string here = MapKey(Child(at, "attributes"), it.key());
    dra::QualifiedName name;
    bool bare = false;
    GANTRY_RETURN_IF_ERROR(QualifyName(it.key(), slice.driver, here, &name, &bare));
    dra::AttributeValue value;
    GANTRY_RETURN_IF_ERROR(ReadAttribute(it.value(), here, &value));
    // Both "id" and "driver/id": the qualified one counts (lookupAttribute tries it first).
    if (bare && written_qualified.count(name) != 0) continue;
    if (!bare) written_qualified.insert(name);
    out->attributes[name] = std::move(value);
  }
  std::optional<bool> flag;
  GANTRY_RETURN_IF_ERROR(OptionalBool(d, "allowMultipleAllocations", at, &flag));
  out->allow_multiple_allocations = flag.value_or(false);
  for (auto it = capacity->begin(); it != capacity->end(); ++it) {
    const std::string here = MapKey(Child(at, "capacity"), it.key());
    dra::QualifiedName name;
    bool bare = false;
    GANTRY_RETURN_IF_ERROR(QualifyName(it.key(), slice.driver, here, &name, &bare));
    if (out->capacity.count(name) != 0) {
      return Status::Invalid(here + ": the capacity " + KeyText(name) +
                             " is given both with and without its domain");
    }
    if (!it.value().is_object()) {
      return Status::Invalid(here + ": expected an object, got " + Shown(it.value()));
    }
    dra::DeviceCapacity c;
    c.bare_name = bare;
    GANTRY_RETURN_IF_ERROR(Quantity(Field(it.value(), "value"), Child(here, "value"), &c.value));
    const json& policy = Field(it.value(), "requestPolicy");
    if (!policy.is_null()) {
      if (!out->allow_multiple_allocations) {
        return Status::Invalid(Child(here, "requestPolicy") +
                               ": only for a device with allowMultipleAllocations");
      }
      dra::CapacityRequestPolicy p;
      GANTRY_RETURN_IF_ERROR(ReadRequestPolicy(policy, c.value, Child(here, "requestPolicy"), &p));
      c.request_policy = std::move(p);
    }
    out->capacity[name] = std::move(c);
  }
  const json* consumes = nullptr;
  GANTRY_RETURN_IF_ERROR(List(d, "consumesCounters", at, kMaxCounterConsumptions, &consumes));
  for (size_t i = 0; i < consumes->size(); ++i) {
    const std::string here = Index(Child(at, "consumesCounters"), i);
    const json& c = (*consumes)[i];
    if (!c.is_object()) return Status::Invalid(here + ": expected an object");
    dra::DeviceCounterConsumption consumption;
    GANTRY_RETURN_IF_ERROR(
        RequiredString(c, "counterSet", here, kMaxDnsLabel, &consumption.counter_set));
    GANTRY_RETURN_IF_ERROR(CheckDnsLabel(consumption.counter_set, Child(here, "counterSet")));
    for (const auto& earlier : out->consumes_counters) {
      if (earlier.counter_set == consumption.counter_set) {
        return Status::Invalid(Child(here, "counterSet") + ": \"" + consumption.counter_set +
                               "\" is given twice");
      }
    }
    GANTRY_RETURN_IF_ERROR(ReadCounters(c, here, &consumption.counters));
    out->consumes_counters.push_back(std::move(consumption));
  }
  if (slice.per_device_node_selection) {
    dra::NodeSelection selection;
    GANTRY_RETURN_IF_ERROR(ReadNodeSelection(d, at, nullptr, /*slice=*/false, &selection));
    out->node_selection = std::move(selection);
  } else {
    for (const char* key : {"nodeName", "nodeSelector", "allNodes"}) {
      if (!Field(d, key).is_null()) {
        return Status::Invalid(Child(at, key) +
                               ": only with perDeviceNodeSelection in the slice's spec");
      }
    }
  }
  const json* taints = nullptr;
  GANTRY_RETURN_IF_ERROR(List(d, "taints", at, kMaxTaints, &taints));
  for (size_t i = 0; i < taints->size(); ++i) {
    dra::DeviceTaint taint;
    GANTRY_RETURN_IF_ERROR(Taint((*taints)[i], Index(Child(at, "taints"), i), &taint));
    out->taints.push_back(std::move(taint));
  }
  GANTRY_RETURN_IF_ERROR(OptionalBool(d, "bindsToNode", at, &flag));
  out->binds_to_node = flag.value_or(false);
  return BindingConditions(d, at, &out->binding_conditions, &out->binding_failure_conditions);
}

}  // namespace

Result<dra::ResourceSlice> DecodeResourceSlice(const json& object) {
  dra::ResourceSlice slice;
  std::string unused_namespace;
  std::string where;
  GANTRY_RETURN_IF_ERROR(ReadMeta(object, "ResourceSlice", /*namespaced=*/false, &unused_namespace,
                                  &slice.name, &where));
  const std::string at = where + ": spec";
  const json* spec = nullptr;
  GANTRY_RETURN_IF_ERROR(RequiredObject(object, "spec", at, &spec));
  GANTRY_RETURN_IF_ERROR(RequiredString(*spec, "driver", at, kMaxDriverName, &slice.driver));
  GANTRY_RETURN_IF_ERROR(CheckDriverName(slice.driver, Child(at, "driver")));
  const std::string pool_at = Child(at, "pool");
  const json* pool = nullptr;
  GANTRY_RETURN_IF_ERROR(RequiredObject(*spec, "pool", pool_at, &pool));
  GANTRY_RETURN_IF_ERROR(
      RequiredString(*pool, "name", pool_at, kMaxDnsSubdomain, &slice.pool.name));
  GANTRY_RETURN_IF_ERROR(CheckPoolName(slice.pool.name, Child(pool_at, "name")));
  std::optional<int64_t> number;
  GANTRY_RETURN_IF_ERROR(OptionalInt(*pool, "generation", pool_at, &number));
  slice.pool.generation = number.value_or(0);
  if (slice.pool.generation < 0) {
    return Status::Invalid(Child(pool_at, "generation") + ": must not be negative");
  }
  GANTRY_RETURN_IF_ERROR(OptionalInt(*pool, "resourceSliceCount", pool_at, &number));
  if (!number || *number <= 0) {
    return Status::Invalid(Child(pool_at, "resourceSliceCount") + ": must be greater than zero");
  }
  slice.pool.resource_slice_count = *number;
  dra::NodeSelection selection;
  GANTRY_RETURN_IF_ERROR(
      ReadNodeSelection(*spec, at, &slice.per_device_node_selection, /*slice=*/true, &selection));
  if (!slice.per_device_node_selection) slice.node_selection = std::move(selection);

  const json* devices = nullptr;
  const json* counter_sets = nullptr;
  GANTRY_RETURN_IF_ERROR(
      List(*spec, "devices", at, static_cast<size_t>(dra::kMaxDevicesPerSlice), &devices));
  GANTRY_RETURN_IF_ERROR(List(*spec, "sharedCounters", at,
                              static_cast<size_t>(dra::kMaxSharedCounterSetsPerSlice),
                              &counter_sets));
  if (!devices->empty() && !counter_sets->empty()) {
    return Status::Invalid(at + ": only one of sharedCounters or devices is allowed");
  }
  const bool advanced = std::any_of(devices->begin(), devices->end(), [](const json& d) {
    return !Field(d, "taints").empty() || !Field(d, "consumesCounters").empty();
  });
  if (advanced && devices->size() > kMaxDevicesWithTaintsOrCounters) {
    return Status::Invalid(Child(at, "devices") + ": " + std::to_string(devices->size()) +
                           " devices, at most " + std::to_string(kMaxDevicesWithTaintsOrCounters) +
                           " allowed when devices have taints or consume counters");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < devices->size(); ++i) {
    const std::string here = Index(Child(at, "devices"), i);
    dra::Device device;
    GANTRY_RETURN_IF_ERROR(ReadDevice((*devices)[i], here, slice, &device));
    if (!names.insert(device.name).second) {
      return Status::Invalid(Child(here, "name") + ": \"" + device.name + "\" is given twice");
    }
    slice.devices.push_back(std::move(device));
  }
  names.clear();
  for (size_t i = 0; i < counter_sets->size(); ++i) {
    const std::string here = Index(Child(at, "sharedCounters"), i);
    const json& c = (*counter_sets)[i];
    if (!c.is_object()) return Status::Invalid(here + ": expected an object");
    dra::CounterSet set;
    GANTRY_RETURN_IF_ERROR(RequiredString(c, "name", here, kMaxDnsLabel, &set.name));
    GANTRY_RETURN_IF_ERROR(CheckDnsLabel(set.name, Child(here, "name")));
    if (!names.insert(set.name).second) {
      return Status::Invalid(Child(here, "name") + ": \"" + set.name + "\" is given twice");
    }
    GANTRY_RETURN_IF_ERROR(ReadCounters(c, here, &set.counters));
    slice.shared_counters.push_back(std::move(set));
  }
  return slice;
}

Result<dra::DeviceTaintRule> DecodeDeviceTaintRule(const json& object) {
  dra::DeviceTaintRule rule;
  std::string unused_namespace;
  std::string where;
  GANTRY_RETURN_IF_ERROR(ReadMeta(object, "DeviceTaintRule", /*namespaced=*/false,
                                  &unused_namespace, &rule.name, &where));
  const std::string at = where + ": spec";
  const json* spec = nullptr;
  GANTRY_RETURN_IF_ERROR(RequiredObject(object, "spec", at, &spec));
  const json* selector = nullptr;
  GANTRY_RETURN_IF_ERROR(Object(*spec, "deviceSelector", at, &selector));
  if (selector != nullptr) {
    const std::string here = Child(at, "deviceSelector");
    GANTRY_RETURN_IF_ERROR(OptionalString(*selector, "driver", here, kMaxDriverName, &rule.driver));
    if (rule.driver) GANTRY_RETURN_IF_ERROR(CheckDriverName(*rule.driver, Child(here, "driver")));
    GANTRY_RETURN_IF_ERROR(OptionalString(*selector, "pool", here, kMaxDnsSubdomain, &rule.pool));
    if (rule.pool) GANTRY_RETURN_IF_ERROR(CheckPoolName(*rule.pool, Child(here, "pool")));
    GANTRY_RETURN_IF_ERROR(OptionalString(*selector, "device", here, kMaxDnsLabel, &rule.device));
    if (rule.device) GANTRY_RETURN_IF_ERROR(CheckDnsLabel(*rule.device, Child(here, "device")));
  }
  const json& taint = Field(*spec, "taint");
  if (taint.is_null()) return Status::Invalid(Child(at, "taint") + ": required");
  GANTRY_RETURN_IF_ERROR(Taint(taint, Child(at, "taint"), &rule.taint));
  return rule;
}

}  // namespace gantry::k8s

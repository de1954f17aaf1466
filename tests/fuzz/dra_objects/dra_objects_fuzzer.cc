// DRA's decoders (k8s/dra_objects.h) on any JSON, as the informers hand it over: bytes ->
// nlohmann::json::parse (no exceptions) -> DecodeDeviceClass, DecodeResourceSlice,
// DecodeResourceClaim, DecodeResourceClaimTemplate, DecodeDeviceTaintRule,
// DecodePodClaimRefs, DecodePodClaimStatuses.
//
// Checks: a refusal names the object's kind (or the pod); what is accepted keeps the API's
// limits (model/dra.h), has fully qualified attribute and capacity names, exactly one node
// selection where one is due, requests of exactly one kind with a count that fits their
// mode, reservations only on an allocated claim, and opaque parameters that read back as
// a JSON object of at most 10 KiB.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "k8s/dra_objects.h"
#include "tests/fuzz/fuzz_check.h"

namespace gantry::fuzz {
namespace {

template <typename T>
void CheckRefusal(const Result<T>& result, const std::string& kind) {
  if (!result.ok()) CheckErrorNamesSource(result.status(), kind);
}

void CheckParameters(const std::string& text, const std::string& where) {
  FUZZ_CHECK(text.size() <= 10240,
             where + ": parameters of " + std::to_string(text.size()) + " bytes");
  const nlohmann::json again = nlohmann::json::parse(text, nullptr, false);
  FUZZ_CHECK(!again.is_discarded() && again.is_object(),
             where + ": parameters do not read back as an object: " + text.substr(0, 200));
}

int NodeSelections(const dra::NodeSelection& s) {
  return int{s.node_name.has_value()} + int{s.node_selector.has_value()} + int{s.all_nodes};
}

void CheckSlice(const dra::ResourceSlice& s) {
  const std::string where = "ResourceSlice " + s.name;
  FUZZ_CHECK(!s.name.empty() && !s.driver.empty() && !s.pool.name.empty(), where + ": a name");
  FUZZ_CHECK(s.pool.resource_slice_count > 0 && s.pool.generation >= 0, where + ": pool");
  FUZZ_CHECK(s.devices.size() <= static_cast<size_t>(dra::kMaxDevicesPerSlice),
             where + ": " + std::to_string(s.devices.size()) + " devices");
  FUZZ_CHECK(s.shared_counters.size() <= static_cast<size_t>(dra::kMaxSharedCounterSetsPerSlice),
             where + ": counter sets");
  FUZZ_CHECK(s.devices.empty() || s.shared_counters.empty(), where + ": devices and counters");
  FUZZ_CHECK(s.per_device_node_selection != s.node_selection.has_value(),
             where + ": slice node selection");
  if (s.node_selection) {
    FUZZ_CHECK(NodeSelections(*s.node_selection) == 1, where + ": not one node selection");
    if (s.node_selection->node_selector) {
      FUZZ_CHECK(s.node_selection->node_selector->size() == 1, where + ": terms");
    }
  }
  for (const dra::CounterSet& set : s.shared_counters) {
    FUZZ_CHECK(!set.counters.empty() &&
                   set.counters.size() <= static_cast<size_t>(dra::kMaxCountersPerSet),
               where + ": counters of " + set.name);
  }
  for (const dra::Device& d : s.devices) {
    const std::string at = where + " device " + d.name;
    FUZZ_CHECK(!d.name.empty(), at + ": no name");
    FUZZ_CHECK(d.attributes.size() + d.capacity.size() <=
                   static_cast<size_t>(dra::kMaxAttributesAndCapacitiesPerDevice),
               at + ": attributes and capacities");
    for (const auto& [name, value] : d.attributes) {
      FUZZ_CHECK(name.find('/') != std::string::npos, at + ": attribute " + name);
      if (const auto* text = std::get_if<std::string>(&value)) {
        FUZZ_CHECK(text->size() <= 64, at + ": attribute " + name + " too long");
      }
    }
    for (const auto& [name, capacity] : d.capacity) {
      FUZZ_CHECK(name.find('/') != std::string::npos, at + ": capacity " + name);
      FUZZ_CHECK(!capacity.request_policy || d.allow_multiple_allocations,
                 at + ": a request policy on an exclusive device");
      if (capacity.request_policy) {
        const auto& values = capacity.request_policy->valid_values;
        for (size_t i = 1; i < values.size(); ++i) {
          FUZZ_CHECK(values[i - 1] < values[i], at + ": valid values out of order");
        }
        if (capacity.request_policy->valid_range && capacity.request_policy->valid_range->step) {
          FUZZ_CHECK(*capacity.request_policy->valid_range->step > 0, at + ": step");
        }
      }
    }
    FUZZ_CHECK(d.consumes_counters.size() <= 2, at + ": counter consumptions");
    FUZZ_CHECK(d.node_selection.has_value() == s.per_device_node_selection,
               at + ": device node selection");
    if (d.node_selection) FUZZ_CHECK(NodeSelections(*d.node_selection) == 1, at + ": selection");
    FUZZ_CHECK(d.taints.size() <= 16, at + ": taints");
    FUZZ_CHECK(d.binding_conditions.empty() == d.binding_failure_conditions.empty(),
               at + ": binding conditions");
    if (!d.taints.empty() || !d.consumes_counters.empty()) {
      FUZZ_CHECK(s.devices.size() <= 64, where + ": more than 64 devices with taints/counters");
    }
  }
}

void CheckRequestSpec(const dra::DeviceRequestSpec& spec, const std::string& at) {
  FUZZ_CHECK(!spec.device_class_name.empty(), at + ": no class");
  FUZZ_CHECK(spec.selectors.size() <= static_cast<size_t>(dra::kMaxSelectors), at + ": selectors");
  FUZZ_CHECK(spec.tolerations.size() <= static_cast<size_t>(dra::kMaxTolerations),
             at + ": tolerations");
  if (spec.allocation_mode == dra::AllocationMode::kExactCount) {
    FUZZ_CHECK(spec.count >= 1, at + ": count " + std::to_string(spec.count));
  } else {
    FUZZ_CHECK(spec.count == 0, at + ": count with All");
  }
  for (const dra::DeviceToleration& t : spec.tolerations) {
    FUZZ_CHECK(t.op == dra::DeviceToleration::Op::kEqual || t.value.empty(),
               at + ": Exists with a value");
  }
}

void CheckClaimSpec(const dra::ResourceClaimSpec& spec, const std::string& where) {
  FUZZ_CHECK(spec.requests.size() <= static_cast<size_t>(dra::kMaxRequestsPerClaim),
             where + ": requests");
  FUZZ_CHECK(spec.constraints.size() <= static_cast<size_t>(dra::kMaxConstraintsPerClaim),
             where + ": constraints");
  for (const dra::DeviceRequest& r : spec.requests) {
    const std::string at = where + " request " + r.name;
    FUZZ_CHECK(r.exactly.has_value() == r.first_available.empty(), at + ": kind");
    FUZZ_CHECK(r.first_available.size() <= static_cast<size_t>(dra::kMaxSubRequests),
               at + ": subrequests");
    if (r.exactly) CheckRequestSpec(*r.exactly, at);
    for (const dra::DeviceSubRequest& sub : r.first_available) {
      FUZZ_CHECK(!sub.spec.admin_access, at + ": admin access on a subrequest");
      CheckRequestSpec(sub.spec, at + "/" + sub.name);
    }
  }
  for (const dra::DeviceConstraint& c : spec.constraints) {
    FUZZ_CHECK(c.match_attribute.has_value() != c.distinct_attribute.has_value(),
               where + ": constraint kind");
    const std::string& name = c.match_attribute ? *c.match_attribute : *c.distinct_attribute;
    FUZZ_CHECK(name.find('/') != std::string::npos, where + ": constraint on " + name);
  }
  for (const dra::ClaimConfig& c : spec.config) CheckParameters(c.parameters_json, where);
}

void CheckClaim(const dra::ResourceClaim& c) {
  const std::string where = "ResourceClaim " + c.name_space + "/" + c.name;
  FUZZ_CHECK(!c.name.empty() && !c.name_space.empty(), where + ": a name");
  FUZZ_CHECK(c.resource_version >= 0, where + ": resource version");
  CheckClaimSpec(c.spec, where);
  FUZZ_CHECK(c.reserved_for.size() <= static_cast<size_t>(dra::kMaxReservedFor),
             where + ": reservedFor");
  FUZZ_CHECK(c.reserved_for.empty() || c.allocation.has_value(),
             where + ": reserved while not allocated");
  if (c.allocation) {
    FUZZ_CHECK(c.allocation->results.size() <= static_cast<size_t>(dra::kMaxAllocationResults),
               where + ": results");
    for (const dra::AllocationResult& r : c.allocation->results) {
      FUZZ_CHECK(!r.driver.empty() && !r.pool.empty() && !r.device.empty(), where + ": result");
      for (const auto& [name, amount] : r.consumed_capacity) {
        FUZZ_CHECK(name.find('/') != std::string::npos, where + ": consumed " + name);
      }
    }
    if (c.allocation->node_selector) {
      FUZZ_CHECK(!c.allocation->node_selector->empty(), where + ": allocation without terms");
    }
  }
}

}  // namespace
}  // namespace gantry::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const nlohmann::json object = nlohmann::json::parse(data, data + size, nullptr, false);
  if (object.is_discarded()) return 0;
  Result<dra::DeviceClass> device_class = k8s::DecodeDeviceClass(object);
  fuzz::CheckRefusal(device_class, "DeviceClass");
  if (device_class.ok()) {
    FUZZ_CHECK(device_class->selectors.size() <= static_cast<size_t>(dra::kMaxSelectors),
               "DeviceClass selectors");
    for (const auto& config : device_class->config) {
      fuzz::CheckParameters(config.parameters_json, "DeviceClass " + device_class->name);
    }
  }
  Result<dra::ResourceSlice> slice = k8s::DecodeResourceSlice(object);
  fuzz::CheckRefusal(slice, "ResourceSlice");
  if (slice.ok()) fuzz::CheckSlice(*slice);
  Result<dra::ResourceClaim> claim = k8s::DecodeResourceClaim(object);
  fuzz::CheckRefusal(claim, "ResourceClaim");
  if (claim.ok()) fuzz::CheckClaim(*claim);
  Result<dra::ResourceClaimTemplate> claim_template = k8s::DecodeResourceClaimTemplate(object);
  fuzz::CheckRefusal(claim_template, "ResourceClaimTemplate");
  if (claim_template.ok()) fuzz::CheckClaimSpec(claim_template->spec, "ResourceClaimTemplate");
  fuzz::CheckRefusal(k8s::DecodeDeviceTaintRule(object), "DeviceTaintRule");
  Result<std::vector<dra::PodClaimRef>> refs = k8s::DecodePodClaimRefs(object);
  fuzz::CheckRefusal(refs, "pod");
  if (refs.ok()) {
    for (const dra::PodClaimRef& ref : *refs) {
      FUZZ_CHECK(
          ref.resource_claim_name.has_value() != ref.resource_claim_template_name.has_value(),
          "pod claim " + ref.name + ": not exactly one source");
    }
  }
  fuzz::CheckRefusal(k8s::DecodePodClaimStatuses(object), "pod");
  return 0;
}

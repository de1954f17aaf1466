// DeviceClasses, ResourceClaims (with their allocation), ResourceClaimTemplates and a
// pod's claims (dra_objects.h).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "k8s/dra_fields.h"
#include "k8s/dra_objects.h"
#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/object_meta.h"
#include "model/limits.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;
using namespace drajson;

// The names a claim's constraints, config and results may refer to: "request", or
// "request/subrequest" for a request with firstAvailable.
class RequestNames {
 public:
  explicit RequestNames(const std::vector<dra::DeviceRequest>& requests) : requests_(requests) {}
  bool Has(const std::string& ref) const {
    const size_t slash = ref.find('/');
    const std::string request = ref.substr(0, slash);
    for (const dra::DeviceRequest& r : requests_) {
      if (r.name != request) continue;
      if (slash == std::string::npos) return true;
      const std::string sub = ref.substr(slash + 1);
      return std::any_of(r.first_available.begin(), r.first_available.end(),
                         [&](const dra::DeviceSubRequest& s) { return s.name == sub; });
    }
    return false;
  }

 private:
  const std::vector<dra::DeviceRequest>& requests_;
};

// object[key]: names of the claim's requests (or request/subrequest), each once.
Status ReadRequestRefs(const json& object, const char* key, const std::string& at,
                       const RequestNames& names, std::vector<std::string>* out) {
  GANTRY_RETURN_IF_ERROR(Strings(object, key, at, static_cast<size_t>(dra::kMaxRequestsPerClaim),
                                 2 * kMaxDnsLabel + 1, out));
  for (size_t i = 0; i < out->size(); ++i) {
    const std::string here = Index(Child(at, key), i);
    const std::string& ref = (*out)[i];
    if (!names.Has(ref)) {
      return Status::Invalid(here + ": \"" + KeyText(ref) +
                             "\" is not a request of the claim (a request's name, or a request's "
                             "and a subrequest's separated by '/')");
    }
    if (std::find(out->begin(), out->begin() + static_cast<std::ptrdiff_t>(i), ref) !=
        out->begin() + static_cast<std::ptrdiff_t>(i)) {
      return Status::Invalid(here + ": \"" + KeyText(ref) + "\" is given twice");
    }
  }
  return Status::Ok();
}

// An ExactDeviceRequest, or a DeviceSubRequest (no adminAccess), with the API server's
// defaults: allocationMode ExactCount, count 1.
Status ReadRequestSpec(const json& r, const std::string& at, bool subrequest,
                       dra::DeviceRequestSpec* out) {
  if (!r.is_object()) return Status::Invalid(at + ": expected an object, got " + Shown(r));
  GANTRY_RETURN_IF_ERROR(
      RequiredString(r, "deviceClassName", at, kMaxDnsSubdomain, &out->device_class_name));
  GANTRY_RETURN_IF_ERROR(
      CheckDnsSubdomain(out->device_class_name, Child(at, "deviceClassName"), kMaxDnsSubdomain));
  GANTRY_RETURN_IF_ERROR(CelSelectors(r, "selectors", at, &out->selectors));
  std::optional<std::string> mode;
  GANTRY_RETURN_IF_ERROR(OptionalString(r, "allocationMode", at, kMaxDnsLabel, &mode));
  std::optional<int64_t> count;
  GANTRY_RETURN_IF_ERROR(OptionalInt(r, "count", at, &count));
  if (!mode || mode->empty() || *mode == "ExactCount") {
    out->allocation_mode = dra::AllocationMode::kExactCount;
    // The API server writes 1 for an unset count (its zero value).
    out->count = count.value_or(0) == 0 ? 1 : *count;
    if (out->count < 0) {
      return Status::Invalid(Child(at, "count") + ": " + std::to_string(out->count) +
                             " must be greater than zero");
    }
  } else if (*mode == "All") {
    out->allocation_mode = dra::AllocationMode::kAll;
    out->count = 0;
    if (count.value_or(0) != 0) {
      return Status::Invalid(Child(at, "count") + ": must not be set with allocationMode All");
    }
  } else {
    return Status::Invalid(Child(at, "allocationMode") + ": \"" + KeyText(*mode) +
                           "\" is not ExactCount or All");
  }
  if (!subrequest) {
    std::optional<bool> admin;
    GANTRY_RETURN_IF_ERROR(OptionalBool(r, "adminAccess", at, &admin));
    out->admin_access = admin.value_or(false);
  }
  GANTRY_RETURN_IF_ERROR(Tolerations(r, "tolerations", at, &out->tolerations));
  const json* capacity = nullptr;
  GANTRY_RETURN_IF_ERROR(Object(r, "capacity", at, &capacity));
  if (capacity == nullptr) return Status::Ok();
  const std::string here = Child(at, "capacity");
  const json* requests = nullptr;
  GANTRY_RETURN_IF_ERROR(Map(*capacity, "requests", here,
                             static_cast<size_t>(dra::kMaxAttributesAndCapacitiesPerDevice),
                             &requests));
  for (auto it = requests->begin(); it != requests->end(); ++it) {
    const std::string key_at = MapKey(Child(here, "requests"), it.key());
    dra::QualifiedName checked;
    bool bare = false;
    // Kept as written: upstream matches it with the device's capacity key as written.
    GANTRY_RETURN_IF_ERROR(QualifyName(it.key(), "", key_at, &checked, &bare));
    Milli amount = 0;
    GANTRY_RETURN_IF_ERROR(Quantity(it.value(), key_at, &amount));
    out->capacity_requests[it.key()] = amount;
  }
  return Status::Ok();
}

Status ReadRequest(const json& r, const std::string& at, dra::DeviceRequest* out) {
  if (!r.is_object()) return Status::Invalid(at + ": expected an object, got " + Shown(r));
  GANTRY_RETURN_IF_ERROR(RequiredString(r, "name", at, kMaxDnsLabel, &out->name));
  GANTRY_RETURN_IF_ERROR(CheckDnsLabel(out->name, Child(at, "name")));
  const json* subrequests = nullptr;
  GANTRY_RETURN_IF_ERROR(
      List(r, "firstAvailable", at, static_cast<size_t>(dra::kMaxSubRequests), &subrequests));
  const bool exactly = !Field(r, "exactly").is_null();
  if (exactly == !subrequests->empty()) {
    return Status::Invalid(at + ": exactly one of exactly, firstAvailable is required" +
                           std::string(exactly ? ", got both" : ""));
  }
  if (exactly) {
    dra::DeviceRequestSpec spec;
    GANTRY_RETURN_IF_ERROR(
        ReadRequestSpec(Field(r, "exactly"), Child(at, "exactly"), /*subrequest=*/false, &spec));
    out->exactly = std::move(spec);
    return Status::Ok();
  }
  for (size_t i = 0; i < subrequests->size(); ++i) {
    const std::string here = Index(Child(at, "firstAvailable"), i);
    const json& s = (*subrequests)[i];
    dra::DeviceSubRequest sub;
    if (!s.is_object()) return Status::Invalid(here + ": expected an object");
    GANTRY_RETURN_IF_ERROR(RequiredString(s, "name", here, kMaxDnsLabel, &sub.name));
    GANTRY_RETURN_IF_ERROR(CheckDnsLabel(sub.name, Child(here, "name")));
    for (const dra::DeviceSubRequest& earlier : out->first_available) {
      if (earlier.name == sub.name) {
        return Status::Invalid(Child(here, "name") + ": \"" + sub.name + "\" is given twice");
      }
    }
    GANTRY_RETURN_IF_ERROR(ReadRequestSpec(s, here, /*subrequest=*/true, &sub.spec));
    out->first_available.push_back(std::move(sub));
  }
  return Status::Ok();
}

// A ResourceClaimSpec; `at` is its path ("ResourceClaim \"ns/a\": spec").
Status ReadClaimSpec(const json& object, const char* key, const std::string& at,
                     dra::ResourceClaimSpec* out) {
  const json* spec = nullptr;
  GANTRY_RETURN_IF_ERROR(RequiredObject(object, key, at, &spec));
  const std::string devices_at = Child(at, "devices");
  const json* devices = nullptr;
  GANTRY_RETURN_IF_ERROR(RequiredObject(*spec, "devices", devices_at, &devices));
  const json* list = nullptr;
  GANTRY_RETURN_IF_ERROR(List(*devices, "requests", devices_at,
                              static_cast<size_t>(dra::kMaxRequestsPerClaim), &list));
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string here = Index(Child(devices_at, "requests"), i);
    dra::DeviceRequest request;
    GANTRY_RETURN_IF_ERROR(ReadRequest((*list)[i], here, &request));
    for (const dra::DeviceRequest& earlier : out->requests) {
      if (earlier.name == request.name) {
        return Status::Invalid(Child(here, "name") + ": \"" + request.name + "\" is given twice");
      }
    }
    out->requests.push_back(std::move(request));
  }
  const RequestNames names(out->requests);
  GANTRY_RETURN_IF_ERROR(List(*devices, "constraints", devices_at,
                              static_cast<size_t>(dra::kMaxConstraintsPerClaim), &list));
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string here = Index(Child(devices_at, "constraints"), i);
    const json& c = (*list)[i];
    if (!c.is_object()) return Status::Invalid(here + ": expected an object");
    dra::DeviceConstraint constraint;
    GANTRY_RETURN_IF_ERROR(ReadRequestRefs(c, "requests", here, names, &constraint.requests));
    constexpr size_t kMaxName = kMaxDomainLength + 1 + kMaxIdLength;
    GANTRY_RETURN_IF_ERROR(
        OptionalString(c, "matchAttribute", here, kMaxName, &constraint.match_attribute));
    GANTRY_RETURN_IF_ERROR(
        OptionalString(c, "distinctAttribute", here, kMaxName, &constraint.distinct_attribute));
    if (constraint.match_attribute.has_value() == constraint.distinct_attribute.has_value()) {
      return Status::Invalid(here +
                             ": exactly one of matchAttribute, distinctAttribute is required" +
                             std::string(constraint.match_attribute ? ", got both" : ""));
    }
    const char* which = constraint.match_attribute ? "matchAttribute" : "distinctAttribute";
    GANTRY_RETURN_IF_ERROR(CheckFullyQualifiedName(
        constraint.match_attribute ? *constraint.match_attribute : *constraint.distinct_attribute,
        Child(here, which)));
    out->constraints.push_back(std::move(constraint));
  }
  GANTRY_RETURN_IF_ERROR(List(*devices, "config", devices_at, kMaxConfigs, &list));
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string here = Index(Child(devices_at, "config"), i);
    dra::ClaimConfig config;
    GANTRY_RETURN_IF_ERROR(OpaqueConfig((*list)[i], here, &config.driver, &config.parameters_json));
    GANTRY_RETURN_IF_ERROR(ReadRequestRefs((*list)[i], "requests", here, names, &config.requests));
    out->config.push_back(std::move(config));
  }
  return Status::Ok();
}

// A shareID: a UUID in RFC 4122's normalized form (lowercase, 36 bytes).
bool IsNormalizedUuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status ReadResult(const json& r, const std::string& at, const RequestNames& names,
                  dra::AllocationResult* out) {
  if (!r.is_object()) return Status::Invalid(at + ": expected an object, got " + Shown(r));
  GANTRY_RETURN_IF_ERROR(RequiredString(r, "request", at, 2 * kMaxDnsLabel + 1, &out->request));
  if (!names.Has(out->request)) {
    return Status::Invalid(Child(at, "request") + ": \"" + KeyText(out->request) +
                           "\" is not a request of the claim");
  }
  GANTRY_RETURN_IF_ERROR(RequiredString(r, "driver", at, kMaxDriverName, &out->driver));
  GANTRY_RETURN_IF_ERROR(CheckDriverName(out->driver, Child(at, "driver")));
  GANTRY_RETURN_IF_ERROR(RequiredString(r, "pool", at, kMaxDnsSubdomain, &out->pool));
  GANTRY_RETURN_IF_ERROR(CheckPoolName(out->pool, Child(at, "pool")));
  GANTRY_RETURN_IF_ERROR(RequiredString(r, "device", at, kMaxDnsLabel, &out->device));
  GANTRY_RETURN_IF_ERROR(CheckDnsLabel(out->device, Child(at, "device")));
  std::optional<bool> admin;
  GANTRY_RETURN_IF_ERROR(OptionalBool(r, "adminAccess", at, &admin));
  out->admin_access = admin.value_or(false);
  GANTRY_RETURN_IF_ERROR(Tolerations(r, "tolerations", at, &out->tolerations));
  GANTRY_RETURN_IF_ERROR(
      BindingConditions(r, at, &out->binding_conditions, &out->binding_failure_conditions));
  GANTRY_RETURN_IF_ERROR(OptionalString(r, "shareID", at, 36, &out->share_id));
  if (out->share_id && !IsNormalizedUuid(*out->share_id)) {
    return Status::Invalid(Child(at, "shareID") + ": \"" + KeyText(*out->share_id) +
                           "\" is not a lowercase UUID");
  }
  const json* consumed = nullptr;
  GANTRY_RETURN_IF_ERROR(Map(r, "consumedCapacity", at,
                             static_cast<size_t>(dra::kMaxAttributesAndCapacitiesPerDevice),
                             &consumed));
  for (auto it = consumed->begin(); it != consumed->end(); ++it) {
    const std::string here = MapKey(Child(at, "consumedCapacity"), it.key());
    dra::QualifiedName name;
    bool bare = false;
    GANTRY_RETURN_IF_ERROR(QualifyName(it.key(), out->driver, here, &name, &bare));
    if (out->consumed_capacity.count(name) != 0) {
      return Status::Invalid(here + ": given both with and without its domain");
    }
    GANTRY_RETURN_IF_ERROR(Quantity(it.value(), here, &out->consumed_capacity[name]));
    if (bare) out->consumed_bare.insert(name);
  }
  return Status::Ok();
}

Status ReadStatus(const json& object, const std::string& where, const RequestNames& names,
                  dra::ResourceClaim* claim) {
  const std::string at = where + ": status";
  const json& status_field = Field(object, "status");
  if (status_field.is_null()) return Status::Ok();
  if (!status_field.is_object()) {
    return Status::Invalid(at + ": expected an object, got " + Shown(status_field));
  }
  const json* status = &status_field;
  const json* allocation = nullptr;
  GANTRY_RETURN_IF_ERROR(Object(*status, "allocation", at, &allocation));
  if (allocation != nullptr) {
    const std::string here = Child(at, "allocation");
    dra::Allocation a;
    const json* devices = nullptr;
    GANTRY_RETURN_IF_ERROR(Object(*allocation, "devices", here, &devices));
    // Without devices, no results (List reads a null as an empty list).
    const json& devices_or_null = devices == nullptr ? Field(*allocation, "devices") : *devices;
    const json* results = nullptr;
    GANTRY_RETURN_IF_ERROR(List(devices_or_null, "results", Child(here, "devices"),
                                static_cast<size_t>(dra::kMaxAllocationResults), &results));
    for (size_t i = 0; i < results->size(); ++i) {
      dra::AllocationResult result;
      GANTRY_RETURN_IF_ERROR(
          ReadResult((*results)[i], Index(Child(here, "devices.results"), i), names, &result));
      a.results.push_back(std::move(result));
    }
    // The configuration copied from the classes and the claim (source FromClass,
    // FromClaim), for the requests each names.
    const json* configs = nullptr;
    GANTRY_RETURN_IF_ERROR(
        List(devices_or_null, "config", Child(here, "devices"), 2 * kMaxConfigs, &configs));
    for (size_t i = 0; i < configs->size(); ++i) {
      const std::string at_config = Index(Child(here, "devices.config"), i);
      const json& c = (*configs)[i];
      dra::AllocationConfig config;
      GANTRY_RETURN_IF_ERROR(OpaqueConfig(c, at_config, &config.driver, &config.parameters_json));
      std::string source;
      GANTRY_RETURN_IF_ERROR(RequiredString(c, "source", at_config, kMaxDnsLabel, &source));
      if (source != "FromClass" && source != "FromClaim") {
        return Status::Invalid(Child(at_config, "source") + ": \"" + KeyText(source) +
                               "\" is not FromClass or FromClaim");
      }
      config.from_class = source == "FromClass";
      GANTRY_RETURN_IF_ERROR(ReadRequestRefs(c, "requests", at_config, names, &config.requests));
      a.config.push_back(std::move(config));
    }
    const json& selector = Field(*allocation, "nodeSelector");
    if (!selector.is_null()) {
      NodeSelectorTerms terms;
      GANTRY_RETURN_IF_ERROR(
          NodeSelector(selector, Child(here, "nodeSelector"), /*exactly_one=*/false, &terms));
      a.node_selector = std::move(terms);
    }
    GANTRY_RETURN_IF_ERROR(
        OptionalTime(*allocation, "allocationTimestamp", here, &a.allocation_timestamp));
    claim->allocation = std::move(a);
  }
  const json* reserved = nullptr;
  GANTRY_RETURN_IF_ERROR(
      List(*status, "reservedFor", at, static_cast<size_t>(dra::kMaxReservedFor), &reserved));
  if (!reserved->empty() && !claim->allocation) {
    return Status::Invalid(Child(at, "reservedFor") + ": set while the claim is not allocated");
  }
  std::set<std::string> uids;
  for (size_t i = 0; i < reserved->size(); ++i) {
    const std::string here = Index(Child(at, "reservedFor"), i);
    const json& r = (*reserved)[i];
    if (!r.is_object()) return Status::Invalid(here + ": expected an object");
    dra::ConsumerReference ref;
    std::optional<std::string> group;
    GANTRY_RETURN_IF_ERROR(OptionalString(r, "apiGroup", here, kMaxDnsSubdomain, &group));
    ref.api_group = group.value_or("");
    GANTRY_RETURN_IF_ERROR(RequiredString(r, "resource", here, kMaxDnsSubdomain, &ref.resource));
    GANTRY_RETURN_IF_ERROR(RequiredString(r, "name", here, kMaxDnsSubdomain, &ref.name));
    GANTRY_RETURN_IF_ERROR(RequiredString(r, "uid", here, kMaxDnsSubdomain, &ref.uid));
    if (!uids.insert(ref.uid).second) {
      return Status::Invalid(Child(here, "uid") + ": \"" + KeyText(ref.uid) + "\" is given twice");
    }
    claim->reserved_for.push_back(std::move(ref));
  }
  return Status::Ok();
}

// A pod's "pod NAMESPACE/NAME", what its errors start with.
Result<std::string> PodWhere(const json& pod) {
  ObjectMeta meta;
  const json& metadata = Field(pod, "metadata");
  meta.name = String(metadata, "name");
  meta.namespace_ = String(metadata, "namespace");
  if (meta.name.empty()) return Status::Invalid("pod: metadata.name: required");
  return DescribeObject(meta, "pod").substr(0, 2 * kMaxNameLength);
}

}  // namespace

Result<dra::DeviceClass> DecodeDeviceClass(const json& object) {
  dra::DeviceClass device_class;
  std::string unused_namespace;
  std::string where;
  GANTRY_RETURN_IF_ERROR(ReadMeta(object, "DeviceClass", /*namespaced=*/false, &unused_namespace,
                                  &device_class.name, &where));
  const std::string at = where + ": spec";
  const json* spec = nullptr;
  GANTRY_RETURN_IF_ERROR(RequiredObject(object, "spec", at, &spec));
  GANTRY_RETURN_IF_ERROR(CelSelectors(*spec, "selectors", at, &device_class.selectors));
  const json* configs = nullptr;
  GANTRY_RETURN_IF_ERROR(List(*spec, "config", at, kMaxConfigs, &configs));
  for (size_t i = 0; i < configs->size(); ++i) {
    dra::DeviceClass::Config config;
    GANTRY_RETURN_IF_ERROR(OpaqueConfig((*configs)[i], Index(Child(at, "config"), i),
                                        &config.driver, &config.parameters_json));
    device_class.config.push_back(std::move(config));
  }
  GANTRY_RETURN_IF_ERROR(OptionalString(*spec, "extendedResourceName", at, kMaxLabelKeyLength,
                                        &device_class.extended_resource_name));
  if (const auto& name = device_class.extended_resource_name) {
    // IsExtendedResourceName: a domain-qualified name outside kubernetes.io, whose
    // "requests."-prefixed form is a qualified name (a name part of at most 63 bytes).
    const size_t slash = name->find('/');
    const bool ok = slash != std::string::npos && slash > 0 && slash + 1 < name->size() &&
                    name->size() - slash - 1 <= kMaxDnsLabel &&
                    name->find('/', slash + 1) == std::string::npos &&
                    name->find("kubernetes.io/") == std::string::npos &&
                    name->rfind("requests.", 0) != 0;
    if (!ok) {
      return Status::Invalid(Child(at, "extendedResourceName") + ": \"" + KeyText(*name) +
                             "\" is not an extended resource name (domain/name, outside "
                             "kubernetes.io)");
    }
  }
  return device_class;
}

Result<dra::ResourceClaim> DecodeResourceClaim(const json& object) {
  dra::ResourceClaim claim;
  std::string where;
  GANTRY_RETURN_IF_ERROR(ReadMeta(object, "ResourceClaim", /*namespaced=*/true, &claim.name_space,
                                  &claim.name, &where));
  const json& metadata = Field(object, "metadata");
  claim.uid = String(metadata, "uid");
  const json& version = Field(metadata, "resourceVersion");
  if (!version.is_null()) {
    const std::string text = version.is_string() ? version.get<std::string>() : "";
    const bool digits =
        !text.empty() && text.size() <= 18 &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
      return Status::Invalid(where + ": metadata.resourceVersion: expected a decimal number, got " +
                             Shown(version));
    }
    claim.resource_version = std::stoll(text);
  }
  claim.deleting = !Field(metadata, "deletionTimestamp").is_null();
  std::vector<std::string> finalizers;
  GANTRY_RETURN_IF_ERROR(
      Strings(metadata, "finalizers", where + ": metadata", 256, kMaxLabelKeyLength, &finalizers));
  claim.has_finalizer =
      std::find(finalizers.begin(), finalizers.end(), dra::kClaimFinalizer) != finalizers.end();
  claim.any_finalizer = !finalizers.empty();
  GANTRY_RETURN_IF_ERROR(ReadClaimSpec(object, "spec", where + ": spec", &claim.spec));
  GANTRY_RETURN_IF_ERROR(ReadStatus(object, where, RequestNames(claim.spec.requests), &claim));
  return claim;
}

Result<dra::ResourceClaimTemplate> DecodeResourceClaimTemplate(const json& object) {
  dra::ResourceClaimTemplate claim_template;
  std::string where;
  GANTRY_RETURN_IF_ERROR(ReadMeta(object, "ResourceClaimTemplate", /*namespaced=*/true,
                                  &claim_template.name_space, &claim_template.name, &where));
  const json* spec = nullptr;
  GANTRY_RETURN_IF_ERROR(RequiredObject(object, "spec", where + ": spec", &spec));
  GANTRY_RETURN_IF_ERROR(ReadClaimSpec(*spec, "spec", where + ": spec.spec", &claim_template.spec));
  return claim_template;
}

Result<std::vector<dra::PodClaimRef>> DecodePodClaimRefs(const json& pod) {
  auto where = PodWhere(pod);
  if (!where.ok()) return where.status();
  return DecodeClaimRefList(Field(pod, "spec"), *where + ": spec");
}

Result<std::vector<dra::PodClaimRef>> DecodeClaimRefList(const json& spec, const std::string& at) {
  const json* list = nullptr;
  GANTRY_RETURN_IF_ERROR(List(spec, "resourceClaims", at, SIZE_MAX, &list));
  std::vector<dra::PodClaimRef> refs;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string here = Index(Child(at, "resourceClaims"), i);
    const json& c = (*list)[i];
    if (!c.is_object()) return Status::Invalid(here + ": expected an object");
    dra::PodClaimRef ref;
    GANTRY_RETURN_IF_ERROR(RequiredString(c, "name", here, kMaxDnsLabel, &ref.name));
    GANTRY_RETURN_IF_ERROR(CheckDnsLabel(ref.name, Child(here, "name")));
    for (const dra::PodClaimRef& earlier : refs) {
      if (earlier.name == ref.name) {
        return Status::Invalid(Child(here, "name") + ": \"" + ref.name + "\" is given twice");
      }
    }
    GANTRY_RETURN_IF_ERROR(
        OptionalString(c, "resourceClaimName", here, kMaxDnsSubdomain, &ref.resource_claim_name));
    GANTRY_RETURN_IF_ERROR(OptionalString(c, "resourceClaimTemplateName", here, kMaxDnsSubdomain,
                                          &ref.resource_claim_template_name));
    if (ref.resource_claim_name.has_value() == ref.resource_claim_template_name.has_value()) {
      return Status::Invalid(here +
                             ": exactly one of resourceClaimName, resourceClaimTemplateName is "
                             "required" +
                             std::string(ref.resource_claim_name ? ", got both" : ""));
    }
    const bool named = ref.resource_claim_name.has_value();
    GANTRY_RETURN_IF_ERROR(CheckDnsSubdomain(
        named ? *ref.resource_claim_name : *ref.resource_claim_template_name,
        Child(here, named ? "resourceClaimName" : "resourceClaimTemplateName"), kMaxDnsSubdomain));
    refs.push_back(std::move(ref));
  }
  return refs;
}

Result<std::vector<PodClaimStatus>> DecodePodClaimStatuses(const json& pod) {
  auto where = PodWhere(pod);
  if (!where.ok()) return where.status();
  const std::string at = *where + ": status";
  const json* list = nullptr;
  GANTRY_RETURN_IF_ERROR(List(Field(pod, "status"), "resourceClaimStatuses", at, SIZE_MAX, &list));
  std::vector<PodClaimStatus> statuses;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string here = Index(Child(at, "resourceClaimStatuses"), i);
    const json& s = (*list)[i];
    if (!s.is_object()) return Status::Invalid(here + ": expected an object");
    PodClaimStatus status;
    GANTRY_RETURN_IF_ERROR(RequiredString(s, "name", here, kMaxDnsLabel, &status.name));
    for (const PodClaimStatus& earlier : statuses) {
      if (earlier.name == status.name) {
        return Status::Invalid(Child(here, "name") + ": \"" + status.name + "\" is given twice");
      }
    }
    GANTRY_RETURN_IF_ERROR(OptionalString(s, "resourceClaimName", here, kMaxDnsSubdomain,
                                          &status.resource_claim_name));
    if (status.resource_claim_name) {
      GANTRY_RETURN_IF_ERROR(CheckDnsSubdomain(*status.resource_claim_name,
                                               Child(here, "resourceClaimName"), kMaxDnsSubdomain));
    }
    statuses.push_back(std::move(status));
  }
  return statuses;
}

Result<std::optional<std::string>> DecodePodExtendedClaimName(const json& pod) {
  auto where = PodWhere(pod);
  if (!where.ok()) return where.status();
  const json& status = Field(Field(pod, "status"), "extendedResourceClaimStatus");
  if (status.is_null()) return std::optional<std::string>();
  const std::string here = *where + ": status.extendedResourceClaimStatus";
  if (!status.is_object()) return Status::Invalid(here + ": expected an object");
  std::optional<std::string> name;
  GANTRY_RETURN_IF_ERROR(
      OptionalString(status, "resourceClaimName", here, kMaxDnsSubdomain, &name));
  if (name) {
    GANTRY_RETURN_IF_ERROR(
        CheckDnsSubdomain(*name, Child(here, "resourceClaimName"), kMaxDnsSubdomain));
  }
  return name;
}

}  // namespace gantry::k8s

// The readers the DRA decoders (dra_objects.h) share: fields of resource.k8s.io/v1 objects
// read strictly, with the API server's validation where the allocator relies on it (names,
// list sizes, exactly-one fields), each error naming the object and the field path
// (`ResourceSlice "node-1-gpu": spec.devices[3].name: ...`). `at` is always that path so
// far, object included; the readers append ".key", "[i]" or "[\"key\"]".
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/dra.h"
#include "model/status.h"

namespace gantry::k8s::drajson {

// Limits of the API that model/dra.h does not hold (validation of resource.k8s.io/v1).
inline constexpr size_t kMaxDnsLabel = 63;
inline constexpr size_t kMaxDnsSubdomain = 253;
inline constexpr size_t kMaxDriverName = 63;           // DriverNameMaxLength
inline constexpr size_t kMaxIdLength = 32;             // DeviceMaxIDLength
inline constexpr size_t kMaxDomainLength = 63;         // DeviceMaxDomainLength
inline constexpr size_t kMaxAttributeValue = 64;       // DeviceAttributeMaxValueLength
inline constexpr size_t kMaxCelExpression = 10240;     // CELSelectorExpressionMaxLength
inline constexpr size_t kMaxOpaqueParameters = 10240;  // OpaqueParametersMaxLength
inline constexpr size_t kMaxConfigs = 32;              // DeviceConfigMaxSize
inline constexpr size_t kMaxTaints = 16;               // DeviceTaintsMaxLength
inline constexpr size_t kMaxBindingConditions = 4;     // BindingConditionsMaxSize
inline constexpr size_t kMaxDevicesWithTaintsOrCounters = 64;
inline constexpr size_t kMaxCounterConsumptions = 2;  // per device
inline constexpr size_t kMaxValidValues = 10;         // CapacityRequestPolicyDiscreteMaxOptions
inline constexpr size_t kMaxLabelValue = 63;
// How deep opaque parameters may nest: deeper is refused before it is written out (the
// writer recurses).
inline constexpr int kMaxParametersDepth = 64;

// A value as errors quote it: its first 64 bytes as JSON (a deeply nested one by its type).
std::string Shown(const nlohmann::json& value);
std::string Index(const std::string& at, size_t i);
// at["key"], the key quoted printably and shortened (KeyText).
std::string MapKey(const std::string& at, const std::string& key);
// "at.key".
std::string Child(const std::string& at, const char* key);

// The API's metadata of a DRA object: name (required, at most 253 bytes), namespace
// (required when namespaced). `kind` starts errors; *where gets `KIND "NAME"` or
// `KIND "NAMESPACE/NAME"`, what every later error starts with.
Status ReadMeta(const nlohmann::json& object, const char* kind, bool namespaced,
                std::string* name_space, std::string* name, std::string* where);

// object[key] as a list: absent or null is empty; anything but a list, or more than `max`
// entries, is an error.
Status List(const nlohmann::json& object, const char* key, const std::string& at, size_t max,
            const nlohmann::json** out);
// object[key] as a map (a JSON object): absent or null is empty; at most `max` entries.
Status Map(const nlohmann::json& object, const char* key, const std::string& at, size_t max,
           const nlohmann::json** out);
// object[key] as an object: absent or null is nullptr; anything else but an object an error.
Status Object(const nlohmann::json& object, const char* key, const std::string& at,
              const nlohmann::json** out);
// object[key] as an object that must be there; `path` is the field's own path
// (`ResourceSlice "a": spec`).
Status RequiredObject(const nlohmann::json& object, const char* key, const std::string& path,
                      const nlohmann::json** out);

// object[key] as a string of at most `max_len` bytes: absent or null leaves *out unset.
Status OptionalString(const nlohmann::json& object, const char* key, const std::string& at,
                      size_t max_len, std::optional<std::string>* out);
// The same, and absent, null or "" is an error ("required").
Status RequiredString(const nlohmann::json& object, const char* key, const std::string& at,
                      size_t max_len, std::string* out);
// object[key] as true or false: absent or null leaves *out unset.
Status OptionalBool(const nlohmann::json& object, const char* key, const std::string& at,
                    std::optional<bool>* out);
// object[key] as an int64: absent or null leaves *out unset.
Status OptionalInt(const nlohmann::json& object, const char* key, const std::string& at,
                   std::optional<int64_t>* out);
// object[key] as a list of at most `max` strings of at most `max_len` bytes each.
Status Strings(const nlohmann::json& object, const char* key, const std::string& at, size_t max,
               size_t max_len, std::vector<std::string>* out);
// object[key] as an RFC 3339 time, in Unix seconds; absent or null leaves *out unset.
Status OptionalTime(const nlohmann::json& object, const char* key, const std::string& at,
                    std::optional<int64_t>* out);

// Name formats (Kubernetes' IsDNS1123Label, IsDNS1123Subdomain); `at` names the field.
Status CheckDnsLabel(const std::string& text, const std::string& at);
Status CheckDnsSubdomain(const std::string& text, const std::string& at, size_t max_len);
// A driver name (a CSI driver's rules: at most 63 bytes of alphanumerics, '-', '_', '.',
// starting and ending alphanumeric).
Status CheckDriverName(const std::string& text, const std::string& at);
// A pool name: at most 253 bytes, each '/'-separated part a DNS subdomain.
Status CheckPoolName(const std::string& text, const std::string& at);

// An attribute's or capacity's name as a slice writes it ("memory", "gpu.nvidia.com/memory")
// into its fully qualified form: a bare C identifier (at most 32 bytes) gets `driver`'s
// domain. *bare says which it was.
Status QualifyName(const std::string& name, const std::string& driver, const std::string& at,
                   dra::QualifiedName* out, bool* bare);
// semver.org 2.0.0 (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]), as upstream's semverRe.
bool IsSemanticVersion(std::string_view text);
// A FullyQualifiedName (matchAttribute, distinctAttribute): "domain/id", both parts valid.
Status CheckFullyQualifiedName(const std::string& name, const std::string& at);

// A quantity (a string like "80Gi", or a JSON number of units) in milli-units.
Status Quantity(const nlohmann::json& value, const std::string& at, Milli* out);

// A DeviceTaint (key and effect required).
Status Taint(const nlohmann::json& taint, const std::string& at, dra::DeviceTaint* out);
// object[key] as a list of DeviceTolerations (operator Equal when unset).
Status Tolerations(const nlohmann::json& object, const char* key, const std::string& at,
                   std::vector<dra::DeviceToleration>* out);
// bindingConditions and bindingFailureConditions of a device or an allocation result:
// at most 4 each, no duplicates, no overlap, and both or neither.
Status BindingConditions(const nlohmann::json& object, const std::string& at,
                         std::vector<std::string>* conditions,
                         std::vector<std::string>* failure_conditions);

// A v1 NodeSelector (object[key]) into its terms, read as pods' node affinity is
// (pod_rules.h): at least one term; `exactly_one`: exactly one, as a ResourceSlice's.
using NodeSelectorTerms = std::vector<std::vector<SelectorRequirement>>;
Status NodeSelector(const nlohmann::json& selector, const std::string& at, bool exactly_one,
                    NodeSelectorTerms* out);

// A DeviceConfiguration ({"opaque": {"driver": ..., "parameters": {...}}}): the driver and
// the parameters (a JSON object of at most 10 KiB) written out as JSON text.
Status OpaqueConfig(const nlohmann::json& config, const std::string& at, std::string* driver,
                    std::string* parameters_json);

// object[key] as a list of CEL selectors ({"cel": {"expression": ...}}), at most 32.
Status CelSelectors(const nlohmann::json& object, const char* key, const std::string& at,
                    std::vector<std::string>* out);

}  // namespace gantry::k8s::drajson

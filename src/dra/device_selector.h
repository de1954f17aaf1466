// DRA device selectors (CEL) evaluated exactly as kube-scheduler evaluates them.
//
// The expressions of a DeviceClass's and a ResourceClaim request's `selectors[].cel` are
// compiled and evaluated by upstream's own library, k8s.io/dynamic-resource-allocation/cel
// (v0.37.2, Kubernetes 1.37's feature-gate defaults), linked in as a Go C archive
// (src/dra/dracel/, built by scripts/dra/build-cel.sh). So the functions (quantity, semver,
// strings, regex, lists, sets, cel.bind), the errors (a missing attribute domain is an empty
// map, a missing key is a runtime error) and the cost limit are upstream's by construction.
//
// Layer: `dra` depends on `model` only. The engine must not include this (it stays free of
// Go and of I/O); the daemon and the simulator decide with it before the engine runs.
//
// Thread-safe: a compiled selector and a prepared device may be used from any number of
// threads at once. Each call crosses into Go; compile once per expression (~0.25 ms) and
// prepare each device once (CelDevice), then Matches costs one evaluation: 3-6 us, nearly
// all of it upstream's DeviceMatches rebuilding the device's maps, as in kube-scheduler
// (bench/dra_selector_bench.cc). Keep results per (device, expression) where it matters.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "model/dra.h"
#include "model/status.h"

namespace gantry::dra {

// SemanticVersion and AttributeValue are the model's (model/dra.h).

// One device as a selector sees it (`device.*` in CEL).
struct DeviceDescription {
  std::string driver;  // the ResourceSlice's spec.driver
  // Device.allowMultipleAllocations (consumable capacity); unset reads as false.
  std::optional<bool> allow_multiple_allocations;
  // Qualified name ("gpu.nvidia.com/productName", or "productName" in the driver's domain)
  // to value.
  std::map<std::string, AttributeValue> attributes;
  // Qualified name to a Kubernetes quantity ("40Gi"), Device.capacity[name].value.
  std::map<std::string, std::string> capacity;
};

// An opaque handle owned by the Go side; released when the owner goes.
class GoHandle {
 public:
  GoHandle() = default;
  explicit GoHandle(uintptr_t value) : value_(value) {}
  GoHandle(GoHandle&& other) noexcept : value_(other.value_) { other.value_ = 0; }
  GoHandle& operator=(GoHandle&& other) noexcept;
  GoHandle(const GoHandle&) = delete;
  GoHandle& operator=(const GoHandle&) = delete;
  ~GoHandle();

  uintptr_t value() const { return value_; }

 private:
  uintptr_t value_ = 0;
};

// A device decoded once on the Go side, ready for any number of evaluations.
class CelDevice {
 public:
  static Result<CelDevice> Prepare(const DeviceDescription& device);
  // The same from JSON in resource.k8s.io/v1's shape: {"driver": ..., "allowMultipleAllocations":
  // ..., "attributes": {name: {"int"|"bool"|"string"|"version": v}}, "capacity": {name:
  // {"value": quantity}}}; an unknown field is an error.
  static Result<CelDevice> FromJson(std::string_view json);

 private:
  friend class DeviceSelector;
  explicit CelDevice(GoHandle handle) : handle_(std::move(handle)) {}
  GoHandle handle_;
};

class DeviceSelector {
 public:
  // Compiles as kube-scheduler does (the environment for stored expressions, no cost
  // estimate; the runtime cost limit, CELSelectorExpressionMaxCost, applies in Matches).
  // A syntax or type error (the result must be a bool) is InvalidArgument with upstream's
  // message, e.g. "compilation failed: ERROR: <input>:1:1: Syntax error: ...".
  static Result<DeviceSelector> Compile(std::string_view expression);

  // Checks an expression as the API server does when an object holding it is created: the
  // length limit, the environment for new expressions, and the estimated worst-case cost
  // ("too complex, exceeds cost limit"). The message is the field error's without its path.
  static Status Validate(std::string_view expression);

  // Whether the device matches. A runtime error (a missing key, a type mismatch, the cost
  // limit exceeded) is Failed with upstream's message, as the scheduler reports it; the
  // scheduler treats it as an error of the claim, not as "no match".
  Result<bool> Matches(const CelDevice& device) const;
  // Prepares the device for this one call (slower: decodes the device every time).
  Result<bool> Matches(const DeviceDescription& device) const;

  const std::string& expression() const { return expression_; }

 private:
  DeviceSelector(std::string expression, GoHandle handle)
      : expression_(std::move(expression)), handle_(std::move(handle)) {}
  std::string expression_;
  GoHandle handle_;
};

// The JSON that CelDevice::Prepare hands to Go (see CelDevice::FromJson).
std::string DeviceJson(const DeviceDescription& device);

}  // namespace gantry::dra

// The verdicts of DRA CEL selectors on devices, each computed once.
//
// kube-scheduler evaluates every class and request selector against every candidate device
// of every node, for every pod; it caches the compiled expressions but not the verdicts. A
// verdict depends only on the expression and the device (its driver, attributes, capacity
// and allowMultipleAllocations), never on the pod or the node, and the same few expressions
// (a DeviceClass's, a claim template's) come back for thousands of pods. So Gantry asks each
// (expression, device) once and remembers the answer until the device changes: the engine
// then reads verdicts, never CEL (it cannot link Go, see docs/architecture.md).
//
// Not thread-safe: one owner (the daemon's loop, a simulator run) asks and forgets.
// Memory: one compiled selector per distinct expression, one prepared device per device
// and one verdict per pair asked; Forget* drops them as claims and slices go.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "dra/device_selector.h"
#include "model/dra.h"
#include "model/dra_verdicts.h"
#include "model/status.h"

namespace gantry::dra {

// A device's name in the cluster: the same triple an allocation result names.
struct DeviceName {
  std::string driver;
  std::string pool;
  std::string device;
  auto operator<=>(const DeviceName&) const = default;
};

// The description CEL sees of a device of a slice whose driver is `driver` (attribute and
// capacity names as the model keeps them, qualified; quantities written exactly).
DeviceDescription DescribeDevice(std::string_view driver, const Device& device);

class SelectorCache {
 public:
  // Whether `device` (named `key`) matches `expression`: true, false, or an error, which is
  // the expression's compile error (Invalid, upstream's message) or a runtime error of this
  // device (Failed, upstream's message) — kube-scheduler fails the allocation on either.
  // A device whose description differs from the one seen before under `key` (a new slice
  // generation) is prepared again and its old verdicts dropped.
  Result<bool> Matches(std::string_view expression, const DeviceName& key, std::string_view driver,
                       const Device& device);

  // Drops a device and its verdicts (its slice went away).
  void ForgetDevice(const DeviceName& key);
  // Drops an expression and its verdicts (no class or claim holds it any more).
  void ForgetExpression(std::string_view expression);

  size_t expression_count() const { return expressions_.size(); }
  size_t device_count() const { return devices_.size(); }
  // How many times CEL ran (a verdict not found cached), for tests and metrics.
  int64_t evaluations() const { return evaluations_; }

 private:
  struct CompiledExpression {
    Result<DeviceSelector> selector;  // or the compile error, kept: it never changes
    std::map<DeviceName, Result<bool>> verdicts;
  };
  struct PreparedDevice {
    std::string driver;
    Device device;                                   // what it was prepared from
    Result<CelDevice> cel;                           // or why it could not be read
    std::set<std::string, std::less<>> expressions;  // those with a verdict cached
  };
  CompiledExpression& Compiled(std::string_view expression);
  PreparedDevice& Prepared(const DeviceName& key, std::string_view driver, const Device& device);
  void DropVerdicts(const DeviceName& key, PreparedDevice& prepared);

  std::map<std::string, std::unique_ptr<CompiledExpression>, std::less<>> expressions_;
  std::map<DeviceName, PreparedDevice> devices_;
  int64_t evaluations_ = 0;
};

// The allocator's SelectorVerdicts (model/dra_verdicts.h) answered through a SelectorCache:
// what the daemon and the simulator hand to the engine's DRA allocator.
class CelVerdicts : public SelectorVerdicts {
 public:
  // REQUIRES: `cache` outlives this.
  explicit CelVerdicts(SelectorCache& cache) : cache_(cache) {}
  Result<bool> Matches(std::string_view expression, const DeviceRef& device) const override;

 private:
  SelectorCache& cache_;
};

}  // namespace gantry::dra

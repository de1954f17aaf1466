// What Allocate asks of its caller: the CEL verdicts on devices, and its options.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/dra.h"
#include "model/status.h"

namespace gantry::dra {

// A device as a selector sees it: its driver (device.driver in CEL), pool, and the device
// with its attributes and capacity.
struct DeviceRef {
  std::string_view driver;
  std::string_view pool;
  const Device& device;
};

// The verdict of a CEL selector on a device. An error is upstream's: an expression that
// does not compile is Status::Invalid; any other code is a runtime error. Either aborts
// the allocation, as in kube-scheduler.
class SelectorVerdicts {
 public:
  virtual ~SelectorVerdicts() = default;
  virtual Result<bool> Matches(std::string_view expression, const DeviceRef& device) const = 0;
};

struct AllocateOptions {
  // The claims' namespace has the resource.kubernetes.io/admin-access label set to "true".
  // Upstream's API server refuses a claim asking for admin access elsewhere, so such a
  // claim never reaches kube-scheduler's allocator; here it is an error.
  bool admin_access_allowed = true;
  // Upstream bounds a search by time (the filter timeout, off by default); Gantry counts
  // the steps (allocateOne calls) of one Allocate, deterministically. Past it: an error.
  int64_t max_steps = 1'000'000;
};

}  // namespace gantry::dra

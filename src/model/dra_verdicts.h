// What DRA's allocator asks of whoever evaluates CEL: the verdict of a selector on a device.
//
// An interface in the model so that the engine (which asks, and must not link Go) and
// src/dra/ (which answers with upstream's CEL library, see dra/selector_cache.h) both
// depend on it and not on each other.
#pragma once

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

}  // namespace gantry::dra

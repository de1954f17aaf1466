// What Allocate asks of its caller: the CEL verdicts on devices (model/dra_verdicts.h), and
// its options.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/dra_verdicts.h"

namespace gantry::dra {
class DevicePreference;
}  // namespace gantry::dra

namespace gantry::dra {

struct AllocateOptions {
  // The claims' namespace has the resource.kubernetes.io/admin-access label set to "true".
  // Upstream's API server refuses a claim asking for admin access elsewhere, so such a
  // claim never reaches kube-scheduler's allocator; here it is an error.
  bool admin_access_allowed = true;
  // Upstream bounds a search by time (the filter timeout, off by default); Gantry counts
  // the steps (allocateOne calls) of one Allocate, deterministically. Past it: an error.
  int64_t max_steps = 1'000'000;
  // The order to try a request's devices in (engine/dra/preference.h); null: upstream's
  // (exact kube-scheduler parity). Requests for all devices take them all, in any order.
  const DevicePreference* preference = nullptr;
  // Best fit among devices that are shared (partitions of one GPU through shared counters,
  // shares of one device through consumable capacity): within a rank of the preference,
  // the device whose counter sets or capacity have least left is tried first, so that a
  // partly used GPU is filled before a free one is started. Off: upstream's order.
  bool pack_shared = false;
};

}  // namespace gantry::dra

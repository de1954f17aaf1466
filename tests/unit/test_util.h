// Helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>

#include "model/status.h"

namespace gantry {

// The value of a Result that the test needs to go on; fails the test loudly otherwise.
template <typename T>
T Must(Result<T> r) {
  if (!r.ok()) {
    ADD_FAILURE() << r.status().message();
    std::abort();
  }
  return std::move(r).value();
}

}  // namespace gantry

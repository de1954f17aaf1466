// Actions: the steps of a scheduling session (enqueue, allocate, backfill, ...).
#pragma once

#include <string_view>

namespace gantry {

class Session;

class Action {
 public:
  virtual ~Action() = default;
  virtual std::string_view name() const = 0;
  virtual void Execute(Session& session) = 0;
};

}  // namespace gantry

// Actions: the steps of a scheduling session (enqueue, allocate, backfill, ...).
//
// An action is made once by a Policy and run by every session of it, so it keeps no
// state of its own: what it learns lives in the session's working state.
#pragma once

#include <string_view>

namespace gantry {

class Session;

class Action {
 public:
  virtual ~Action() = default;
  virtual std::string_view name() const = 0;
  // True for an action that admits jobs (enqueue): when a policy has one, a pending job
  // waits for it before any action places its tasks; without one, every job is admitted.
  virtual bool admits_jobs() const { return false; }
  // Changes the session's state only through Statements and the session's job notes.
  virtual void Execute(Session& session) const = 0;
};

}  // namespace gantry

// A Statement is a transaction of placements for one job (a gang). Each placement is
// applied to the session's working state at once, so that the next member of the gang
// sees the room the earlier ones took; Commit() turns them into bind decisions, and
// Discard() (or destruction without Commit) takes them all back. A partly placed gang
// never leaves the engine.
#pragma once

#include <vector>

#include "engine/session.h"

namespace gantry {

class Statement {
 public:
  explicit Statement(Session* session)
      : session_(session), unschedulable_mark_(session->UnschedulableMark()) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  void Allocate(TaskId task, Placement placement);
  void Commit();
  void Discard();
  size_t size() const { return ops_.size(); }

 private:
  struct Op {
    TaskId task;
    Placement placement;
  };
  Session* session_;
  size_t unschedulable_mark_;
  std::vector<Op> ops_;
};

}  // namespace gantry

// A Statement is a log of changes to a session's working state, as in KAI-Scheduler's
// framework/statement.go: each operation (Allocate, Pipeline, Evict) is applied at once,
// so that the next one sees it, and recorded with what undoes it. Checkpoint() is the
// log's length and Rollback(checkpoint) undoes back to it, so that an action can try a
// set of nodes or of victims and take back exactly that much; Discard() (or destruction
// without Commit) undoes everything; Commit() turns the log into decisions (binds,
// pipelined tasks with the node they wait for, evictions with their reason).
//
// Every cache a change can make wrong is kept right both ways: the node index by the
// working state, plugin state through PlacementListener, and the search's "fits nowhere"
// verdicts, forgotten when room comes back (an eviction, or undoing a placement). The
// session does that (Session::ApplyChange); a statement reaches the session only through
// the functions that take a Session::StatementKey, which only a Statement can make.
#pragma once

#include <string>
#include <vector>

#include "engine/session.h"

namespace gantry {

class Statement {
 public:
  explicit Statement(Session* session) : session_(session) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  // Places a pending task on room free now. Refused (nothing changes) when the task is
  // not pending or does not fit there.
  Status Allocate(TaskId task, Placement placement);
  // Places a pending task on room that is being released; it binds in a later session.
  // Refused when the task is not pending or does not fit the node's future room.
  Status Pipeline(TaskId task, Placement placement);
  // Evicts a running task: its room comes free once it has terminated. Refused when the
  // task is not running. `for_job`: the job the room is for (kNone: none named).
  Status Evict(TaskId task, std::string reason, JobId for_job = kNone,
               EvictionCause cause = EvictionCause::kPreempt);
  // Takes room free now on a node for a running or evicted task, as if it ran there too:
  // the place a moved task would get (the defragment action's check that its victims fit
  // elsewhere). Only the node's room changes; plugins are told of it as an allocation.
  // Refused when the task is neither running nor evicted, or does not fit there.
  // REQUIRES: rolled back before Commit (a hold is a check, never a decision).
  Status Hold(TaskId task, Placement placement);

  size_t Checkpoint() const { return ops_.size(); }
  // Undoes the operations after `checkpoint`, newest first. REQUIRES: checkpoint <= size.
  void Rollback(size_t checkpoint);
  void Discard() { Rollback(0); }
  // Records the operations as decisions; the statement is empty afterwards.
  void Commit();
  size_t size() const { return ops_.size(); }

 private:
  using Kind = Session::Change;
  struct Op {
    Kind kind;
    TaskId task;
    Placement placement;  // for an eviction: where the task runs
    std::string reason;   // evictions only
    JobId for_job;        // evictions only: the preemptor, or kNone
    EvictionCause cause;  // evictions only
    // The search's "fits nowhere" log length before this op: verdicts after it may rest on
    // the room the op took.
    uint64_t unschedulable_mark;
  };
  void Apply(const Op& op, int sign);
  // Appends the operation and applies it.
  void Record(Kind kind, TaskId task, Placement placement, std::string reason,
              JobId for_job = kNone, EvictionCause cause = EvictionCause::kPreempt);

  Session* session_;
  std::vector<Op> ops_;
};

}  // namespace gantry

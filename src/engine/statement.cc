#include "engine/statement.h"

#include <algorithm>
#include <cassert>

namespace gantry {

Statement::Statement(Statement&& other) noexcept
    : session_(other.session_), ops_(std::move(other.ops_)) {
  other.ops_.clear();
}

Statement::~Statement() {
  Discard();
}

namespace {

std::string TaskText(const Session& s, TaskId task) {
  const ClusterState& c = s.cluster();
  return "task " + c.task(task).name + " of job " + c.job(c.task(task).job).name;
}

std::string NodeText(const Session& s, NodeId node) {
  return node < s.cluster().nodes().size() ? "node " + s.cluster().node(node).name
                                           : "node #" + std::to_string(node);
}

// An error unless the task is `wanted`; `what`: the operation, for the message.
Status RequireStatus(const Session& s, TaskId task, TaskStatus wanted, const char* what) {
  if (s.task_status(task) == wanted) return Status::Ok();
  return Status::Invalid(TaskText(s, task) + " is " +
                         std::string(TaskStatusName(s.task_status(task))) + ", not " +
                         std::string(TaskStatusName(wanted)) + ": it cannot be " + what);
}

}  // namespace

void Statement::Apply(const Op& op, int sign) {
  session_->ApplyChange(Session::StatementKey(), op.kind, op.task, op.placement,
                        op.unschedulable_mark, sign);
}

void Statement::Record(Kind kind, TaskId task, Placement placement, std::string reason,
                       JobId for_job, EvictionCause cause) {
  ops_.push_back(Op{kind, task, std::move(placement), std::move(reason), for_job, cause,
                    session_->UnschedulableMark(Session::StatementKey())});
  Apply(ops_.back(), +1);
}

Status Statement::Allocate(TaskId task, Placement placement) {
  GANTRY_RETURN_IF_ERROR(RequireStatus(*session_, task, TaskStatus::kPending, "allocated"));
  if (!session_->state().Fits(task, placement, /*future=*/false)) {
    return Status::Invalid(TaskText(*session_, task) + " does not fit the free room of " +
                           NodeText(*session_, placement.node));
  }
  Record(Kind::kAllocate, task, std::move(placement), {});
  return Status::Ok();
}

Status Statement::Pipeline(TaskId task, Placement placement) {
  GANTRY_RETURN_IF_ERROR(RequireStatus(*session_, task, TaskStatus::kPending, "pipelined"));
  if (!session_->state().Fits(task, placement, /*future=*/true)) {
    return Status::Invalid(TaskText(*session_, task) + " does not fit the room " +
                           NodeText(*session_, placement.node) +
                           " will have once releasing tasks end");
  }
  Record(Kind::kPipeline, task, std::move(placement), {});
  return Status::Ok();
}

Status Statement::Evict(TaskId task, std::string reason, JobId for_job, EvictionCause cause) {
  GANTRY_RETURN_IF_ERROR(RequireStatus(*session_, task, TaskStatus::kRunning, "evicted"));
  Record(Kind::kEvict, task, session_->state().placement_of(task), std::move(reason), for_job,
         cause);
  return Status::Ok();
}

Status Statement::Hold(TaskId task, Placement placement) {
  const TaskStatus status = session_->task_status(task);
  if (status != TaskStatus::kRunning && status != TaskStatus::kReleasing) {
    return RequireStatus(*session_, task, TaskStatus::kReleasing, "held room for");
  }
  if (!session_->state().Fits(task, placement, /*future=*/false)) {
    return Status::Invalid(TaskText(*session_, task) + " does not fit the free room of " +
                           NodeText(*session_, placement.node));
  }
  Record(Kind::kHold, task, std::move(placement), {});
  return Status::Ok();
}

void Statement::Rollback(size_t checkpoint) {
  while (ops_.size() > checkpoint) {
    Apply(ops_.back(), -1);
    ops_.pop_back();
  }
}

void Statement::Commit() {
  if (ops_.empty()) return;
  const ClusterState& c = session_->cluster();
  Decisions& out = session_->committed(Session::StatementKey());
  // Jobs whose tasks were placed: usually one, so the list is made only for a second.
  JobId first_job = kNone;
  std::vector<JobId> more_jobs;
  auto placed = [&](JobId job) {
    if (first_job == kNone || first_job == job) {
      first_job = job;
    } else {
      more_jobs.push_back(job);
    }
  };
  for (Op& op : ops_) {
    const JobId job = c.task(op.task).job;
    switch (op.kind) {
      case Kind::kAllocate:
        out.binds.push_back(
            BindDecision{job, op.task, op.placement.node, op.placement.gpus.devices});
        placed(job);
        break;
      case Kind::kPipeline:
        out.pipelined.push_back(
            PipelineDecision{job, op.task, op.placement.node, op.placement.gpus.devices});
        placed(job);
        break;
      case Kind::kEvict:
        out.evictions.push_back(EvictDecision{job, op.task, op.placement.node, std::move(op.reason),
                                              op.for_job, op.cause});
        break;
      case Kind::kHold:  // a check, never a decision: see Hold
        assert(false && "a statement with a hold was committed");
        break;
    }
  }
  // The placed tasks leave their jobs' unplaced lists: one pass per job, not one per
  // operation.
  auto drop_placed = [&](JobId job) { session_->DropPlaced(Session::StatementKey(), job); };
  if (first_job != kNone) drop_placed(first_job);
  std::sort(more_jobs.begin(), more_jobs.end());
  more_jobs.erase(std::unique(more_jobs.begin(), more_jobs.end()), more_jobs.end());
  for (JobId job : more_jobs) drop_placed(job);
  ops_.clear();
}

Statement Session::NewStatement() {
  return Statement(this);
}

}  // namespace gantry

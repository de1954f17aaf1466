#include "engine/statement.h"

#include <algorithm>

namespace gantry {

Statement::Statement(Statement&& other) noexcept
    : session_(other.session_),
      unschedulable_mark_(other.unschedulable_mark_),
      ops_(std::move(other.ops_)) {
  other.ops_.clear();
}

Statement::~Statement() { Discard(); }

void Statement::Allocate(TaskId task, Placement placement) {
  session_->ApplyPlacement(task, placement, +1);
  ops_.push_back(Op{task, std::move(placement)});
}

void Statement::Commit() {
  if (ops_.empty()) return;
  std::vector<TaskId> committed;
  committed.reserve(ops_.size());
  for (const Op& op : ops_) {
    session_->RecordBind(op.task, op.placement);
    committed.push_back(op.task);
  }
  std::sort(committed.begin(), committed.end());
  // Every op of a statement belongs to one job in practice, but nothing requires it.
  for (const Op& op : ops_) {
    JobWork& job = session_->mutable_job(session_->cluster().task(op.task).job);
    auto& unplaced = job.unplaced;
    unplaced.erase(std::remove_if(unplaced.begin(), unplaced.end(),
                                  [&](TaskId t) {
                                    return std::binary_search(committed.begin(), committed.end(), t);
                                  }),
                   unplaced.end());
  }
  ops_.clear();
}

void Statement::Discard() {
  if (ops_.empty()) return;
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
    session_->ApplyPlacement(it->task, it->placement, -1);
  }
  ops_.clear();
  // Room came back: what failed while this statement held it may fit now.
  session_->ForgetUnschedulableSince(unschedulable_mark_);
}

}  // namespace gantry

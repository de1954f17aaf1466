#include "engine/working_state.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>

#include "model/device_backed.h"

namespace gantry {
namespace {

// Recounts a node's derived fields (whole and partly used devices, ...) from its devices.
void RecountDevices(NodeTable* t, NodeId node) {
  NodeWork& w = t->nodes[node];
  w.whole_free = 0;
  w.partial_count = 0;
  w.max_free_milli = 0;
  w.gpu_used = 0;
  for (int32_t i = 0; i < w.gpu_count; ++i) {
    const int32_t free = t->gpu_free_milli[static_cast<size_t>(w.gpu_begin + i)];
    w.max_free_milli = std::max(w.max_free_milli, free);
    w.gpu_used += kGpuMilliWhole - free;
    if (free == kGpuMilliWhole) {
      w.whole_free++;
    } else if (free > 0) {
      w.partial_count++;
    }
  }
}

// Takes (sign +1) or gives back (-1) a task's room in one table.
void Take(NodeTable* t, NodeId node, const ResourceVector& accounted, const GpuChoice& gpus,
          int sign) {
  NodeWork& w = t->nodes[node];
  Milli* row = t->free.data() + static_cast<size_t>(node) * t->resource_count;
  for (const auto& e : accounted.entries()) {
    // A resource without a column is on no node: only a placement whose devices for it
    // come from DRA (TaskSpec::device_backed) asks for it, and no room counts it.
    if (e.id >= t->resource_count) [[unlikely]] continue;
    row[e.id] -= sign * e.amount;
  }
  w.tasks += sign;
  if (w.gpu_count == 0) return;
  for (int32_t d : gpus.devices) {
    const auto slot = static_cast<size_t>(w.gpu_begin + d);
    t->gpu_free_milli[slot] -= sign * gpus.milli_each;
    t->gpu_free_memory[slot] -= sign * gpus.memory_each;
  }
  RecountDevices(t, node);
}

}  // namespace

std::string_view TaskStatusName(TaskStatus status) {
  switch (status) {
    case TaskStatus::kPending:
      return "pending";
    case TaskStatus::kAllocated:
      return "allocated";
    case TaskStatus::kPipelined:
      return "pipelined";
    case TaskStatus::kRunning:
      return "running";
    case TaskStatus::kReleasing:
      return "releasing";
    case TaskStatus::kDone:
      return "done";
  }
  return "?";
}

WorkingState::WorkingState(const ClusterState& c, const NodeTable* cached,
                           bool jobs_wait_for_admission)
    : cluster_(c),
      jobs_wait_for_admission_(jobs_wait_for_admission),
      shown_(cached != nullptr ? *cached : BuildNodeTable(c)),
      // A cache that has never seen a node holds no table: nothing is read then.
      allocatable_(shown_.allocatable ? shown_.allocatable->data() : nullptr),
      jobs_(c.jobs_with_pending().size()),
      job_slots_(c.jobs_with_pending().size()),
      devices_of_(c.nodes().size(), nullptr) {
  const size_t n = shown_.nodes.size();
  std::vector<int32_t> whole_free(n), gpu_count(n);
  std::vector<uint8_t> partial(n);
  for (size_t i = 0; i < n; ++i) {
    const NodeWork& w = shown_.nodes[i];
    whole_free[i] = w.whole_free;
    // Removed nodes take no tasks: out of the index, so that no search visits them.
    gpu_count[i] = w.removed ? NodeIndex::kNotIndexed : w.gpu_count;
    partial[i] = w.partial_count > 0;
  }
  index_.Build(whole_free, partial, gpu_count);

  queues_.assign(c.queues().size(), QueueWork{});
  for (size_t q = 0; q < c.queues().size(); ++q) {
    queues_[q].allocated = c.queues()[q].allocated;
    queues_[q].request = c.queues()[q].allocated;
  }
  pending_jobs_.assign(c.jobs_with_pending().begin(), c.jobs_with_pending().end());
  for (JobId id : pending_jobs_) {
    const JobWork& w = EnterJob(id);
    for (TaskId t : w.unplaced) {
      const TaskSpec& spec = c.spec_of(t);
      const int32_t n_gpus = spec.gpu.shared() ? 1 : spec.gpu.count;
      queues_[c.job(id).queue].request.Add(
          ClusterState::Accounted(spec, n_gpus, c.EstimatedGpuShare(spec.gpu)));
    }
  }
  // Tasks already terminating (evicted in an earlier session, or deleted) hold their room
  // until they end: as if evicted in this session, but not by it (no decision, no plugin
  // told), so that nothing evicts them again and preemptors may wait for their room.
  for (TaskId t : c.releasing_tasks()) Evict(t, +1);
}

JobWork WorkingState::MakeJobWork(JobId id) const {
  const Job& job = cluster_.job(id);
  JobWork w;
  w.inqueue = !jobs_wait_for_admission_ || job.running > 0;
  w.ready = job.running;
  w.allocated = job.allocated;
  if (job.pending > 0) {
    for (TaskId t : job.tasks) {
      if (cluster_.task(t).state == TaskState::kPending) w.unplaced.push_back(t);
    }
  }
  return w;
}

JobWork& WorkingState::EnterJobLookedUp(JobId id) {
  const uint32_t found = job_slots_.Find(id);
  JobWork* work = nullptr;
  if (found != IdSlots::kAbsent) {
    work = job_at_[found];
  } else {
    const auto slot = static_cast<uint32_t>(jobs_.size());
    work = &jobs_.push_back(MakeJobWork(id));
    job_at_.push_back(work);
    job_slots_.Insert(id, slot);
  }
  recent_job_[1] = recent_job_[0];
  recent_work_[1] = recent_work_[0];
  recent_job_[0] = id;
  recent_work_[0] = work;
  return *work;
}

void WorkingState::NoJobEntry(JobId id) const {
  std::fprintf(stderr,
               "gantry: engine invariant broken: job %u (%s) was read with job(), but the "
               "session has no entry for it (read ready_tasks, or make its entry first)\n",
               id, id < cluster_.jobs().size() ? cluster_.job(id).name.c_str() : "?");
  std::abort();
}

NodeGpus WorkingState::free_gpus(NodeId id) const {
  const NodeTable& t = free_table();
  const NodeWork& w = t.nodes[id];
  const auto begin = static_cast<size_t>(w.gpu_begin);
  const auto count = static_cast<size_t>(w.gpu_count);
  return GpusIn(w, std::span<const int32_t>(t.gpu_free_milli).subspan(begin, count),
                std::span<const int64_t>(t.gpu_free_memory).subspan(begin, count), id);
}

void WorkingState::Reserve(NodeId node, JobId job) {
  if (reserved_.empty()) reserved_.assign(cluster_.nodes().size(), kNone);
  reserved_[node] = job;
}

void WorkingState::MarkJobSkippedOverused(JobId job, std::string reason) {
  JobWork& w = EnterJob(job);
  w.skipped_overused = true;
  w.reason = std::move(reason);
}

void WorkingState::DropPlaced(JobId job) {
  std::vector<TaskId>& unplaced = EnterJob(job).unplaced;
  unplaced.erase(std::remove_if(unplaced.begin(), unplaced.end(),
                                [&](TaskId t) { return task_status(t) != TaskStatus::kPending; }),
                 unplaced.end());
}

TaskStatus WorkingState::task_status(TaskId id) const {
  const uint32_t slot = task_slots_.Find(id);
  if (slot != IdSlots::kAbsent) return task_at_[slot]->status;
  switch (cluster_.task(id).state) {
    case TaskState::kPending:
      return TaskStatus::kPending;
    case TaskState::kRunning:
      return TaskStatus::kRunning;
    case TaskState::kDone:
      return TaskStatus::kDone;
  }
  return TaskStatus::kDone;
}

WorkingState::TaskWork& WorkingState::MutableTask(TaskId id) {
  uint32_t slot = task_slots_.Find(id);
  if (slot == IdSlots::kAbsent) {
    slot = static_cast<uint32_t>(tasks_.size());
    task_at_.push_back(&tasks_.push_back(TaskWork{task_status(id), {}}));
    task_slots_.Insert(id, slot);
  }
  return *task_at_[slot];
}

Placement WorkingState::placement_of(TaskId id) const {
  switch (task_status(id)) {
    case TaskStatus::kAllocated:
    case TaskStatus::kPipelined:
      return task_at_[task_slots_.Find(id)]->placement;
    case TaskStatus::kRunning:
    case TaskStatus::kReleasing: {
      const Task& task = cluster_.task(id);
      Placement p;
      p.node = task.node;
      p.gpus.devices = task.gpus;
      p.gpus.milli_each = task.gpu_milli_each;
      p.gpus.memory_each = task.gpu_memory_each;
      return p;
    }
    case TaskStatus::kPending:
    case TaskStatus::kDone:
      break;
  }
  return Placement{};
}

NodeTable& WorkingState::Future() {
  assert(!searching_future_);
  if (!future_) {
    now_ = std::make_unique<NodeTable>(shown_);
    future_ = std::make_unique<NodeTable>(shown_);
  }
  return *future_;
}

void WorkingState::SearchFuture(bool search) {
  if (search == searching_future_) return;
  if (search) Future();
  std::swap(shown_, *future_);  // O(1): the tables' vectors trade buffers
  searching_future_ = search;
}

void WorkingState::RecomputeFree(NodeId node) {
  const NodeTable& now = *now_;
  const NodeTable& future = *future_;
  const size_t n = shown_.resource_count;
  const size_t row = static_cast<size_t>(node) * n;
  for (size_t r = 0; r < n; ++r)
    shown_.free[row + r] = std::min(now.free[row + r], future.free[row + r]);
  NodeWork& w = shown_.nodes[node];
  w.tasks = std::max(now.nodes[node].tasks, future.nodes[node].tasks);
  for (int32_t i = 0; i < w.gpu_count; ++i) {
    const auto slot = static_cast<size_t>(w.gpu_begin + i);
    shown_.gpu_free_milli[slot] = std::min(now.gpu_free_milli[slot], future.gpu_free_milli[slot]);
    shown_.gpu_free_memory[slot] =
        std::min(now.gpu_free_memory[slot], future.gpu_free_memory[slot]);
  }
  if (w.gpu_count > 0) RecountDevices(&shown_, node);
}

void WorkingState::Reindex(NodeId node) {
  const NodeWork& w = shown_.nodes[node];
  if (w.gpu_count > 0 && !w.removed) index_.Update(node, w.whole_free, w.partial_count > 0);
}

ResourceVector WorkingState::AccountedOf(TaskId task, const Placement& p) const {
  return ClusterState::Accounted(cluster_.spec_of(task),
                                 static_cast<int32_t>(p.gpus.devices.size()), p.gpus.milli_each);
}

void WorkingState::ChargeJob(TaskId task, ResourceVector JobWork::*field,
                             ResourceVector QueueWork::*queue_field, const ResourceVector& amount,
                             int sign) {
  const JobId job_id = cluster_.task(task).job;
  JobWork& job = EnterJob(job_id);
  QueueWork& queue = queues_[cluster_.job(job_id).queue];
  ++job.changes;
  ++queue.changes;
  if (sign > 0) {
    (job.*field).Add(amount);
    (queue.*queue_field).Add(amount);
  } else {
    (job.*field).Subtract(amount);
    (queue.*queue_field).Subtract(amount);
  }
}

bool WorkingState::Fits(TaskId task, const Placement& p, bool future) const {
  const NodeTable& t = future ? future_table() : free_table();
  if (p.node >= t.nodes.size()) return false;
  const NodeWork& w = t.nodes[p.node];
  if (w.removed) return false;
  // What AccountedOf counts, read without building it: the requests (which name no GPU)
  // and the GPU share.
  // An extended resource the node serves through DRA is not in its room: the devices of a
  // claim are (DeviceReservations).
  const TaskSpec& spec = cluster_.spec_of(task);
  for (const auto& e : spec.requests.entries()) {
    if (e.id != kGpu && e.amount > Read(t, p.node, e.id) &&
        !ServedByDraFor(spec.device_backed, e.id, cluster_.node(p.node))) {
      return false;
    }
  }
  const Milli gpu = static_cast<Milli>(p.gpus.devices.size()) * p.gpus.milli_each;
  if (gpu > 0 && gpu > Read(t, p.node, kGpu)) return false;
  if (w.max_pods > 0 && static_cast<Milli>(w.tasks + 1) * kMilliPerUnit > w.max_pods) return false;
  for (size_t i = 0; i < p.gpus.devices.size(); ++i) {
    const int32_t d = p.gpus.devices[i];
    if (d < 0 || d >= w.gpu_count) return false;
    for (size_t j = 0; j < i; ++j) {
      if (p.gpus.devices[j] == d) return false;
    }
    const auto slot = static_cast<size_t>(w.gpu_begin + d);
    if (t.gpu_free_milli[slot] < p.gpus.milli_each) return false;
    // A device of unknown memory (0) is not sized by memory: a memory request takes all of
    // it (GpuShareOn, model/node.h), and its memory is not counted, as SharedFitOn does.
    const bool sized = cluster_.node(p.node).gpus[static_cast<size_t>(d)].memory_mib > 0;
    if (sized && t.gpu_free_memory[slot] < p.gpus.memory_each) return false;
  }
  return true;
}

void WorkingState::TakeNow(const Placement& p, const ResourceVector& accounted, int sign) {
  Take(&shown_, p.node, accounted, p.gpus, sign);
  if (now_) {
    Take(now_.get(), p.node, accounted, p.gpus, sign);
    Take(future_.get(), p.node, accounted, p.gpus, sign);
  }
  Reindex(p.node);
}

void WorkingState::Allocate(TaskId task, const Placement& p, int sign) {
  assert(!searching_future_);  // a search only reads
  const ResourceVector accounted = AccountedOf(task, p);
  TakeNow(p, accounted, sign);
  TaskWork& t = MutableTask(task);
  assert(t.status == (sign > 0 ? TaskStatus::kPending : TaskStatus::kAllocated));
  t.status = sign > 0 ? TaskStatus::kAllocated : TaskStatus::kPending;
  t.placement = sign > 0 ? p : Placement{};
  JobWork& job = EnterJob(cluster_.task(task).job);
  job.ready += sign;
  job.placed += sign;
  ChargeJob(task, &JobWork::allocated, &QueueWork::allocated, accounted, sign);
}

void WorkingState::Pipeline(TaskId task, const Placement& p, int sign) {
  assert(!searching_future_);  // a search only reads
  const ResourceVector accounted = AccountedOf(task, p);
  Take(&Future(), p.node, accounted, p.gpus, sign);
  RecomputeFree(p.node);
  Reindex(p.node);
  TaskWork& t = MutableTask(task);
  assert(t.status == (sign > 0 ? TaskStatus::kPending : TaskStatus::kPipelined));
  t.status = sign > 0 ? TaskStatus::kPipelined : TaskStatus::kPending;
  t.placement = sign > 0 ? p : Placement{};
  EnterJob(cluster_.task(task).job).pipelined_tasks += sign;
  ChargeJob(task, &JobWork::pipelined, &QueueWork::pipelined, accounted, sign);
}

void WorkingState::Hold(TaskId task, const Placement& p, int sign) {
  assert(!searching_future_);  // a search only reads
  TakeNow(p, AccountedOf(task, p), sign);
}

void WorkingState::Evict(TaskId task, int sign) {
  assert(!searching_future_);  // a search only reads
  const Placement p = placement_of(task);
  const ResourceVector accounted = AccountedOf(task, p);
  // Its room comes back once it has terminated: in the future table only.
  Take(&Future(), p.node, accounted, p.gpus, -sign);
  RecomputeFree(p.node);
  Reindex(p.node);
  TaskWork& t = MutableTask(task);
  assert(t.status == (sign > 0 ? TaskStatus::kRunning : TaskStatus::kReleasing));
  t.status = sign > 0 ? TaskStatus::kReleasing : TaskStatus::kRunning;
  JobWork& job = EnterJob(cluster_.task(task).job);
  job.ready -= sign;
  job.releasing_tasks += sign;
  ChargeJob(task, &JobWork::allocated, &QueueWork::allocated, accounted, -sign);
  ChargeJob(task, &JobWork::releasing, &QueueWork::releasing, accounted, sign);
}

}  // namespace gantry

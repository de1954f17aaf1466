// ClusterState's world changes: what the daemon applies as the API server reports pods,
// nodes, groups and queues being created, changed and deleted. The simulator needs only
// Place and Release; a live cluster also takes things away and changes them.
#include <algorithm>
#include <iterator>
#include <set>

#include "model/cluster.h"
#include "model/limits.h"
#include "model/task_devices.h"

namespace gantry {

Status ClusterState::PlaceBound(TaskId task_id, NodeId node_id, std::span<const int32_t> gpus) {
  return PlaceChecked(task_id, node_id, gpus, /*check_room=*/false);
}

void ClusterState::Unplace(TaskId task_id) {
  Unaccount(task_id);
  Task& task = tasks_[task_id];
  task.state = TaskState::kPending;
  Job& job = jobs_[task.job];
  job.pending++;
  jobs_with_pending_.insert(task.job);
}

void ClusterState::SetReleasing(TaskId task_id, bool releasing) {
  Task& task = tasks_[task_id];
  if (task.state != TaskState::kRunning || task.releasing == releasing) return;
  task.releasing = releasing;
  if (releasing) {
    releasing_tasks_.insert(task_id);
  } else {
    releasing_tasks_.erase(task_id);
  }
}

void ClusterState::RemoveTask(TaskId task_id) {
  Task& task = tasks_[task_id];
  if (task.state == TaskState::kRunning) Unaccount(task_id);
  Job& job = jobs_[task.job];
  if (task.state == TaskState::kPending) {
    job.pending--;
    if (job.pending == 0) jobs_with_pending_.erase(task.job);
  }
  auto it = std::find(job.tasks.begin(), job.tasks.end(), task_id);
  if (it != job.tasks.end()) job.tasks.erase(it);
  task = Task{};
  task.state = TaskState::kDone;
  free_task_ids_.push_back(task_id);
}

void ClusterState::RemoveJob(JobId job_id) {
  Job& job = jobs_[job_id];
  job_ids_.erase(job.name);
  jobs_with_pending_.erase(job_id);
  jobs_evicted_.erase(job_id);
  // Its id will name another job: no chain may go through it any more. (What it passed
  // down stays: a job it reached may still not evict the jobs that evicted it.)
  for (JobId other : jobs_evicted_) {
    for (std::vector<JobId>* list : {&jobs_[other].evicted_by, &jobs_[other].evicted}) {
      auto it = std::lower_bound(list->begin(), list->end(), job_id);
      if (it != list->end() && *it == job_id) list->erase(it);
    }
  }
  job = Job{};
  free_job_ids_.push_back(job_id);
}

namespace {

void InsertSorted(std::vector<JobId>& list, JobId id) {
  auto it = std::lower_bound(list.begin(), list.end(), id);
  if (it == list.end() || *it != id) list.insert(it, id);
}

}  // namespace

void ClusterState::NoteEviction(JobId victim, JobId preemptor) {
  if (victim == preemptor) return;
  Job& evictor = jobs_[preemptor];
  InsertSorted(evictor.evicted, victim);
  if (evictor.evicted.size() > kMaxEvictionChain) evictor.eviction_memory_full = true;
  jobs_evicted_.insert(preemptor);
  // What the victim and every job it reaches must never evict from now on.
  std::vector<JobId> upstream = evictor.evicted_by;
  InsertSorted(upstream, preemptor);
  // Down the chain, breadth first. A job whose list already holds all of `upstream`, and
  // whose fullness does not change, passes nothing new down (each job's evicted_by holds
  // those of the jobs that evicted it), so the walk stops there. `seen` ends it in a
  // chain that loops back (only a caller's own decisions can make one).
  struct Step {
    JobId job;
    bool full;  // a job above it on this walk is full
  };
  std::vector<Step> frontier = {{victim, evictor.eviction_memory_full}};
  std::set<JobId> seen = {victim};
  while (!frontier.empty()) {
    std::vector<Step> next;
    for (const Step& step : frontier) {
      Job& job = jobs_[step.job];
      jobs_evicted_.insert(step.job);
      std::vector<JobId> merged;
      std::set_union(job.evicted_by.begin(), job.evicted_by.end(), upstream.begin(), upstream.end(),
                     std::back_inserter(merged));
      // Its own id in the list: it evicted, through others, a job that now evicts it.
      // The engine refuses that, so only a caller's own decisions get here.
      std::erase(merged, step.job);
      const bool full = job.eviction_memory_full || step.full || merged.size() > kMaxEvictionChain;
      if (merged.size() > kMaxEvictionChain) merged.resize(kMaxEvictionChain);
      const bool changed =
          merged.size() != job.evicted_by.size() || full != job.eviction_memory_full;
      job.evicted_by = std::move(merged);
      job.eviction_memory_full = full;
      if (!changed) continue;
      for (JobId down : job.evicted) {
        if (seen.insert(down).second) next.push_back({down, full});
      }
    }
    frontier = std::move(next);
  }
}

bool ClusterState::EvictionChainFull(JobId job) const {
  return jobs_[job].eviction_memory_full;
}

Status ClusterState::UpdateJob(JobId job_id, int32_t min_member, int32_t priority, QueueId queue) {
  Job& job = jobs_[job_id];
  if (min_member < 1) {
    return Status::Invalid("job \"" + job.name + "\": minMember must be at least 1");
  }
  if (queue >= queues_.size()) return Status::Invalid("job \"" + job.name + "\": unknown queue");
  if (queue != job.queue) {
    const QueueId old_queue = job.queue;
    job.queue = queue;
    if (queues_[old_queue].allocated.saturated() || job.allocated.saturated()) {
      RecountQueue(old_queue, kNone);
    } else {
      queues_[old_queue].allocated.Subtract(job.allocated);
    }
    queues_[queue].allocated.Add(job.allocated);
  }
  job.min_member = min_member;
  job.priority = priority;
  return Status::Ok();
}

Status ClusterState::SetJobGroups(JobId job_id, std::vector<TaskGroup> groups) {
  Job& job = jobs_[job_id];
  if (Status valid = ValidateGroupTree(groups); !valid.ok()) {
    return Status::Invalid("job \"" + job.name + "\": " + valid.message());
  }
  if (!groups.empty()) job.min_member = MinimumTasks(groups);
  job.groups = std::move(groups);
  for (TaskId t : job.tasks) tasks_[t].group = -1;
  return Status::Ok();
}

Status ClusterState::SetTaskGroup(TaskId task_id, int32_t group) {
  Task& task = tasks_[task_id];
  const Job& job = jobs_[task.job];
  if (group != -1 && (group < 0 || static_cast<size_t>(group) >= job.groups.size() ||
                      !job.groups[static_cast<size_t>(group)].leaf)) {
    return Status::Invalid("task \"" + task.name + "\": group " + std::to_string(group) +
                           " is no leaf of job \"" + job.name + "\"");
  }
  task.group = group;
  return Status::Ok();
}

Status ClusterState::UpdateNode(NodeId id, Node node) {
  Node& old = nodes_[id];
  if (node.name != old.name) {
    return Status::Invalid("node \"" + old.name + "\" cannot be renamed to \"" + node.name + "\"");
  }
  // Devices in use keep their usage; a node that reports fewer devices than its running
  // tasks use keeps the ones in use until those tasks end.
  size_t in_use = 0;
  for (size_t i = 0; i < old.gpus.size(); ++i) {
    if (old.gpus[i].used_milli > 0) in_use = i + 1;
  }
  if (node.gpus.size() < in_use) {
    node.gpus.insert(node.gpus.end(), old.gpus.begin() + static_cast<ptrdiff_t>(node.gpus.size()),
                     old.gpus.begin() + static_cast<ptrdiff_t>(in_use));
  }
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    node.gpus[i].used_milli = i < old.gpus.size() ? old.gpus[i].used_milli : 0;
    node.gpus[i].used_memory_mib = i < old.gpus.size() ? old.gpus[i].used_memory_mib : 0;
  }
  if (old.removed && totals_.live_nodes() >= static_cast<size_t>(kMaxNodes)) {
    return Status::OutOfRange("node \"" + node.name + "\": the cluster already has " +
                              std::to_string(kMaxNodes) + " nodes, the limit");
  }
  GANTRY_RETURN_IF_ERROR(PrepareNode(node));
  if (!old.removed) totals_.Count(old, -1);
  node.used = std::move(old.used);
  node.task_count = old.task_count;
  node.removed = false;
  node.shape_class = shape_classes_.Acquire(node);
  shape_classes_.Release(old.shape_class);
  shape_classes_.CountNodeLabels(node, +1);
  shape_classes_.CountNodeLabels(old, -1);
  totals_.Count(node, +1);
  old = std::move(node);
  RetakeMig(id);  // the layout may have changed: the running tasks take devices again
  RetakeNuma(id);
  stamps_.Touch(id);
  return Status::Ok();
}

void ClusterState::RemoveNode(NodeId id) {
  Node& node = nodes_[id];
  if (node.removed) return;
  totals_.Count(node, -1);
  node.removed = true;
  node.unschedulable = true;
  const uint32_t old_class = node.shape_class;
  node.shape_class = shape_classes_.Acquire(node);
  shape_classes_.Release(old_class);
  stamps_.Touch(id);
  FreeNodeIfUnused(id);
}

void ClusterState::FreeNodeIfUnused(NodeId id) {
  Node& node = nodes_[id];
  if (!node.removed || !tasks_on_node_[id].empty() || node.name.empty()) return;
  node_ids_.erase(node.name);
  shape_classes_.Release(node.shape_class);
  shape_classes_.CountNodeLabels(node, -1);
  node = Node{};  // no name, labels, taints or devices: nothing of it is kept
  node.removed = true;
  node.unschedulable = true;
  node.shape_class = shape_classes_.Acquire(node);  // the one class of freed slots
  tasks_on_node_[id] = std::vector<TaskId>();
  free_node_ids_.push_back(id);
  stamps_.Touch(id);
}

void ClusterState::ReplaceSpec(SpecId id, TaskSpec spec) {
  FillMigResources(spec);
  // The new spec's keys first, so that a key both read stays counted throughout.
  CountLabelKeys(spec, +1);
  CountLabelKeys(specs_[id], -1);
  if (!spec.datasets.empty()) ++specs_with_datasets_;
  if (!specs_[id].datasets.empty()) --specs_with_datasets_;
  specs_[id] = std::move(spec);
}

Status ClusterState::UpdateQueue(QueueId id, int64_t weight, ResourceVector guarantee,
                                 ResourceVector capability) {
  Queue& queue = queues_[id];
  if (weight <= 0) return Status::Invalid("queue \"" + queue.name + "\": weight must be positive");
  if (!guarantee.FitsInNamed(capability)) {
    return Status::Invalid("queue \"" + queue.name + "\": guarantee (" + guarantee.ToString() +
                           ") exceeds capability (" + capability.ToString() + ")");
  }
  queue.weight = weight;
  queue.guarantee = std::move(guarantee);
  queue.capability = std::move(capability);
  return Status::Ok();
}

Status ClusterState::SetQueueTree(QueueId id, QueueId parent, std::string missing_parent,
                                  bool reclaimable, ResourceVector deserved) {
  Queue& queue = queues_[id];
  if (parent != kNone && parent >= queues_.size()) {
    return Status::Invalid("queue \"" + queue.name + "\": parent id out of range");
  }
  if (!deserved.FitsInNamed(queue.capability)) {
    return Status::Invalid("queue \"" + queue.name + "\": deserved (" + deserved.ToString() +
                           ") exceeds capability (" + queue.capability.ToString() + ")");
  }
  queue.parent = parent;
  queue.missing_parent = std::move(missing_parent);
  queue.reclaimable = reclaimable;
  queue.deserved = std::move(deserved);
  return Status::Ok();
}

Status ClusterState::SetCachedDatasets(NodeId id, std::vector<std::string> datasets) {
  Node& node = nodes_[id];
  Status st = NormalizeDatasetList(&datasets, kMaxCachedDatasetsPerNode);
  if (!st.ok()) return st.WithPrefix("node \"" + node.name + "\": cached datasets");
  node.cached_datasets = std::move(datasets);
  stamps_.Touch(id);
  return Status::Ok();
}

}  // namespace gantry

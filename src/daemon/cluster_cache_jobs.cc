// The cache's jobs: which pods make a job, what its pods add up to (priority, queue,
// creation time, topology requests, kept as per-job counts), its place in line, and the
// PodGroups that give gang size, queue and priority class.
#include <algorithm>

#include "daemon/cluster_cache.h"
#include "model/limits.h"

namespace gantry {
namespace {

using json = nlohmann::json;

std::string GroupKey(k8s::GroupApi api, const std::string& namespace_, const std::string& name) {
  return PodGroups::Key(api, namespace_, name);
}

}  // namespace

std::string ClusterCache::JobKeyOf(const PodRecord& pod) const {
  const k8s::PodInfo& p = pod.info;
  if (!Ours(p)) return "other|" + p.meta.Key();
  if (p.group.empty()) return "pod|" + p.meta.Key();
  if (std::string root =
          p.group_api == k8s::GroupApi::kNative ? groups_.RootOf(p.meta.namespace_, p.group) : "";
      !root.empty()) {
    return GroupKey(k8s::GroupApi::kComposite, p.meta.namespace_, root);
  }
  return GroupKey(p.group_api, p.meta.namespace_, p.group);
}

void ClusterCache::Count(JobRecord& job, PodRecord& pod) {
  pod.counted_priority = pod.info.priority;
  pod.counted_queue = pod.info.queue;
  pod.counted_created = pod.info.meta.created;
  job.priorities[pod.counted_priority]++;
  if (!pod.counted_queue.empty()) job.queues[pod.counted_queue]++;
  job.created[pod.counted_created]++;
  pod.counted_topology = pod.info.topology;
  if (!pod.counted_topology.level.empty()) {
    job.topologies[{pod.counted_topology.level, pod.counted_topology.required}]++;
  }
}

void ClusterCache::Uncount(JobRecord& job, const PodRecord& pod) {
  if (--job.priorities[pod.counted_priority] == 0) job.priorities.erase(pod.counted_priority);
  if (--job.created[pod.counted_created] == 0) job.created.erase(pod.counted_created);
  if (!pod.counted_queue.empty() && --job.queues[pod.counted_queue] == 0) {
    job.queues.erase(pod.counted_queue);
  }
  const TopologyRequest& t = pod.counted_topology;
  if (!t.level.empty() && --job.topologies[{t.level, t.required}] == 0) {
    job.topologies.erase({t.level, t.required});
  }
}

void ClusterCache::LeaveJob(PodRecord& pod) {
  if (pod.job_key.empty()) return;
  const std::string key = std::exchange(pod.job_key, {});
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  JobRecord& job = it->second;
  if (job.pods.erase(pod.info.meta.Key())) Uncount(job, pod);
  // Its earliest pod may have gone.
  if (job.id != kNone && !job.pods.empty()) FileJob(job.id, CreatedOf(job));
  status_.MarkChanged(key);
  ForgetJobIfEmpty(key);
}

cache::JobRecord& ClusterCache::JobFor(PodRecord& pod) {
  std::string key = JobKeyOf(pod);
  if (pod.job_key != key) LeaveJob(pod);
  auto [it, inserted] = jobs_.try_emplace(key);
  JobRecord& job = it->second;
  if (inserted) {
    job.key = key;
    job.api = pod.info.group_api;
    job.namespace_ = pod.info.meta.namespace_;
    job.group = pod.info.group;
    if (const std::string prefix = GroupKey(k8s::GroupApi::kComposite, job.namespace_, "");
        key.starts_with(prefix)) {  // the job of its PodGroup's root CompositePodGroup
      job.api = k8s::GroupApi::kComposite;
      job.group = key.substr(prefix.size());
    }
    job.ours = Ours(pod.info);
  }
  if (pod.job_key == key) {
    Uncount(job, pod);  // counted again below, as the pod is now
  } else {
    pod.job_key = key;
    job.pods.insert(pod.info.meta.Key());
  }
  Count(job, pod);
  BuildTree(job);  // a CompositePodGroup's: its groups may have changed since
  if (job.id != kNone) FileJob(job.id, CreatedOf(job));  // the pod may be its earliest
  status_.MarkChanged(key);
  return job;
}

void ClusterCache::ForgetJobIfEmpty(const std::string& key) {
  auto it = jobs_.find(key);
  if (it == jobs_.end() || !it->second.pods.empty()) return;
  JobId id = it->second.id;
  if (id != kNone && state_.job(id).tasks.empty()) RemoveStateJob(id);
  jobs_.erase(it);
  status_.ForgetJob(key);
}

const k8s::PodGroupInfo* ClusterCache::GroupOf(const JobRecord& job) const {
  if (job.group.empty()) return nullptr;
  return groups_.Find(GroupKey(job.api, job.namespace_, job.group));
}

std::string ClusterCache::QueueNameOf(const JobRecord& job) const {
  if (!job.ours) return kOtherSchedulersQueue;
  const k8s::PodGroupInfo* group = GroupOf(job);
  if (group && !group->queue.empty()) return group->queue;
  // The alphabetically first that any pod names: the same whatever order pods came in.
  if (!job.queues.empty()) return job.queues.begin()->first;
  if (const std::string* queue = queues_.NamespaceDefault(job.namespace_)) return *queue;
  return "default";
}

std::string ClusterCache::HoldReason(const JobRecord& job, PendingHold* hold) const {
  PendingHold unused;
  if (hold == nullptr) hold = &unused;
  *hold = PendingHold::kGang;
  if (!job.group.empty()) {
    std::string gk = GroupKey(job.api, job.namespace_, job.group);
    std::string name = std::string(GroupKind(job.api)) + " " + job.namespace_ + "/" + job.group +
                       " (" + GroupApiVersion(job.api) + ")";
    if (const std::string* bad = groups_.WhyInvalid(gk)) return name + " is invalid: " + *bad;
    const k8s::PodGroupInfo* group = groups_.Find(gk);
    if (!group) return "waiting for " + name + " to exist";
    // A PodGroup with a parent whose chain to the root is not there yet.
    if (job.api == k8s::GroupApi::kNative && !group->parent.empty()) {
      std::string missing;
      if (groups_.RootOf(job.namespace_, job.group, &missing).empty() && !missing.empty()) {
        return "waiting for " + missing;
      }
    }
    if (!job.tree_problem.empty()) return job.tree_problem;
    if (std::string conflict = groups_.Conflict(gk, job.priorities, scheduler_name_);
        !conflict.empty()) {
      return conflict;
    }
  }
  *hold = PendingHold::kQueueLimit;
  if (std::string queue = QueueNameOf(job); queues_.Refused(queue, state_)) {
    return "queue \"" + Bounded(queue, 100) + "\" has no Queue object, and pods and PodGroups " +
           "have already named " + std::to_string(kMaxQueuesFromWorkloads) +
           " such queues (the limit): create the Queue, or use an existing one";
  }
  *hold = PendingHold::kNone;
  return "";
}

void ClusterCache::RefreshJob(JobRecord& job) {
  if (job.id == kNone) return;
  const k8s::PodGroupInfo* group = GroupOf(job);
  int32_t min_member = group ? group->min_member : 1;
  const bool composite = job.api == k8s::GroupApi::kComposite;
  if (composite) {
    BuildTree(job);
    if (job.tree != state_.job(job.id).groups) {
      (void)state_.SetJobGroups(job.id, job.tree);  // cannot fail: BuildTree validated it
      SetTaskGroups(job);
    }
    min_member = job.tree.empty() ? 1 : MinimumTasks(job.tree);
  }
  int32_t priority = job.priorities.empty() ? 0 : job.priorities.rbegin()->first;
  if (group && (group->api == k8s::GroupApi::kNative || composite)) {
    priority = group->priority.value_or(0);  // resolved by the API server's admission
  } else if (group && !group->priority_class_name.empty()) {
    auto pc = priority_classes_.find(group->priority_class_name);
    if (pc != priority_classes_.end()) priority = pc->second;
  }
  QueueId queue = queues_.QueueFor(QueueNameOf(job), /*from_workload=*/true, state_);
  // Refused (the job is held): what it runs still counts, in the default queue.
  if (queue == kNone) queue = queues_.QueueFor("default", false, state_);
  const Job& current = state_.job(job.id);
  if (current.min_member != min_member || current.priority != priority || current.queue != queue) {
    // Cannot fail: min_member >= 1 and the queue exists.
    (void)state_.UpdateJob(job.id, min_member, priority, queue);
  }
  if (TopologyRequest topology = TopologyOf(job); topology != current.topology) {
    state_.SetJobTopology(job.id, std::move(topology));
  }
  if (const bool whole = group && group->disrupt_whole; whole != current.disrupt_whole) {
    state_.SetJobDisruptsWhole(job.id, whole);
  }
  FileJob(job.id, CreatedOf(job));
}

int64_t ClusterCache::CreatedOf(const JobRecord& job) const {
  if (const k8s::PodGroupInfo* group = GroupOf(job)) return group->meta.created;
  return job.created.empty() ? 0 : job.created.begin()->first;
}

void ClusterCache::RemoveStateJob(JobId id) {
  job_line_.Unfile(id, job_of_id_[id]);
  state_.RemoveJob(id);
  job_of_id_[id].clear();
}

JobId ClusterCache::EnsureStateJob(JobRecord& job) {
  if (job.id == kNone) {
    Job j;
    j.name = job.key;
    j.queue = queues_.QueueFor(job.ours ? "default" : kOtherSchedulersQueue, false, state_);
    job.id = state_.AddJob(j).value();  // the key is unique among live jobs
    if (job_of_id_.size() <= job.id) job_of_id_.resize(job.id + 1);
    job_of_id_[job.id] = job.key;
  }
  RefreshJob(job);
  return job.id;
}

// ---------------------------------------------------------------------------------------
// PodGroups

void ClusterCache::OnPodGroup(k8s::GroupApi api, k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  const std::string gk = GroupKey(api, meta->namespace_, meta->name);
  const uint64_t trees_before = groups_.tree_version();
  if (auto problem = groups_.On(api, type, object, *meta)) Problem(std::move(*problem));
  // A tree changed: pods may now belong to another job (their root's), and trees differ.
  if (groups_.tree_version() != trees_before) ResyncTrees(meta->namespace_);
  auto job = jobs_.find(gk);
  if (job == jobs_.end()) return;
  status_.MarkChanged(gk);
  // Gang size, queue, priority and the status we write ourselves are the job's; only a
  // change between held and not held changes which pods are tasks.
  ReconsiderHold(gk);
  job = jobs_.find(gk);
  if (job != jobs_.end()) RefreshJob(job->second);
}

void ClusterCache::ReconsiderHold(const std::string& job_key) {
  auto job = jobs_.find(job_key);
  if (job == jobs_.end()) return;
  const bool held = !HoldReason(job->second).empty();
  if (held == job->second.held) return;
  job->second.held = held;
  status_.MarkChanged(job_key);
  std::vector<std::string> keys(job->second.pods.begin(), job->second.pods.end());
  for (const std::string& key : keys) {
    pod_records_visited_++;
    SyncPod(key);
  }
}

}  // namespace gantry

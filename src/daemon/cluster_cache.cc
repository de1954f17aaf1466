#include "daemon/cluster_cache.h"

#include "k8s/json_fields.h"
#include "k8s/topology_objects.h"

#include <algorithm>

#include "model/limits.h"
#include "model/queue_tree.h"

namespace gantry {
namespace {

using json = nlohmann::json;

std::string GroupKey(k8s::GroupApi api, const std::string& namespace_, const std::string& name) {
  return (api == k8s::GroupApi::kCoscheduling ? "xk|" : "vc|") + namespace_ + "/" + name;
}

constexpr size_t kMaxNodeReason = 300;

}  // namespace

ClusterCache::ClusterCache(std::string scheduler_name)
    : scheduler_name_(std::move(scheduler_name)) {
  // Present from the start, so that queue ids of these two never move.
  QueueFor("default", /*from_workload=*/false);
  QueueFor(kOtherSchedulersQueue, /*from_workload=*/false);
}

void ClusterCache::Problem(ObjectEvent event) {
  problems_.push_back(std::move(event));
}

std::vector<ObjectEvent> ClusterCache::TakeProblems() {
  return std::exchange(problems_, {});
}

// ---------------------------------------------------------------------------------------
// Queues and specs

bool ClusterCache::QueueRefused(const std::string& name) const {
  return state_.FindQueue(name) == kNone && !queues_.count(name) &&
         queues_from_workloads_ >= kMaxQueuesFromWorkloads;
}

QueueId ClusterCache::QueueFor(const std::string& name, bool from_workload) {
  QueueId id = state_.FindQueue(name);
  if (id != kNone) return id;
  auto it = queues_.find(name);
  if (from_workload && it == queues_.end()) {
    if (queues_from_workloads_ >= kMaxQueuesFromWorkloads) return kNone;
    queues_from_workloads_++;
  }
  Queue queue;
  queue.name = name;
  if (it != queues_.end()) {
    queue.weight = it->second.weight;
    queue.guarantee = it->second.guarantee;
    queue.capability = it->second.capability;
  }
  auto added = state_.AddQueue(queue);
  if (added.ok()) return *added;
  // The queue object's limits were inconsistent: keep the queue, without them.
  Queue plain;
  plain.name = name;
  return state_.AddQueue(plain).value();
}

SpecId ClusterCache::FindSpec(const TaskSpec& spec) const {
  auto it = spec_ids_.find(spec);
  return it == spec_ids_.end() ? kNone : it->second;
}

SpecId ClusterCache::AcquireSpec(const TaskSpec& spec) {
  auto [it, inserted] = spec_ids_.try_emplace(spec, 0);
  if (!inserted) {
    spec_uses_[it->second]++;
    return it->second;
  }
  SpecId id;
  if (!free_specs_.empty()) {
    id = free_specs_.back();
    free_specs_.pop_back();
    state_.ReplaceSpec(id, spec);
  } else {
    id = state_.AddSpec(spec);
    spec_uses_.resize(id + 1, 0);
  }
  spec_uses_[id] = 1;
  it->second = id;
  return id;
}

void ClusterCache::ReleaseSpec(SpecId id) {
  if (--spec_uses_[id] > 0) return;
  spec_ids_.erase(state_.spec(id));
  free_specs_.push_back(id);
}

// ---------------------------------------------------------------------------------------
// Jobs

std::string ClusterCache::JobKeyOf(const PodRecord& pod) const {
  const k8s::PodInfo& p = pod.info;
  if (!Ours(p)) return "other|" + p.meta.Key();
  if (p.group.empty()) return "pod|" + p.meta.Key();
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
  status_dirty_.insert(key);
  ForgetJobIfEmpty(key);
}

ClusterCache::JobRecord& ClusterCache::JobFor(PodRecord& pod) {
  std::string key = JobKeyOf(pod);
  if (pod.job_key != key) LeaveJob(pod);
  auto [it, inserted] = jobs_.try_emplace(key);
  JobRecord& job = it->second;
  if (inserted) {
    job.key = key;
    job.api = pod.info.group_api;
    job.namespace_ = pod.info.meta.namespace_;
    job.group = pod.info.group;
    job.ours = Ours(pod.info);
  }
  if (pod.job_key == key) {
    Uncount(job, pod);  // counted again below, as the pod is now
  } else {
    pod.job_key = key;
    job.pods.insert(pod.info.meta.Key());
  }
  Count(job, pod);
  if (job.id != kNone) FileJob(job.id, CreatedOf(job));  // the pod may be its earliest
  status_dirty_.insert(key);
  return job;
}

void ClusterCache::ForgetJobIfEmpty(const std::string& key) {
  auto it = jobs_.find(key);
  if (it == jobs_.end() || !it->second.pods.empty()) return;
  JobId id = it->second.id;
  if (id != kNone && state_.job(id).tasks.empty()) RemoveStateJob(id);
  jobs_.erase(it);
  status_dirty_.erase(key);
}

const k8s::PodGroupInfo* ClusterCache::GroupOf(const JobRecord& job) const {
  if (job.group.empty()) return nullptr;
  auto it = groups_.find(GroupKey(job.api, job.namespace_, job.group));
  return it == groups_.end() ? nullptr : &it->second;
}

std::string ClusterCache::QueueNameOf(const JobRecord& job) const {
  if (!job.ours) return kOtherSchedulersQueue;
  const k8s::PodGroupInfo* group = GroupOf(job);
  if (group && !group->queue.empty()) return group->queue;
  // The alphabetically first that any pod names: the same whatever order pods came in.
  if (!job.queues.empty()) return job.queues.begin()->first;
  return "default";
}

std::string ClusterCache::HoldReason(const JobRecord& job) const {
  if (!job.group.empty()) {
    std::string gk = GroupKey(job.api, job.namespace_, job.group);
    std::string name =
        "PodGroup " + job.namespace_ + "/" + job.group + " (" + ApiVersionOf(job.api) + ")";
    if (auto bad = bad_groups_.find(gk); bad != bad_groups_.end()) {
      return name + " is invalid: " + bad->second;
    }
    if (!groups_.count(gk)) return "waiting for " + name + " to exist";
  }
  if (std::string queue = QueueNameOf(job); QueueRefused(queue)) {
    return "queue \"" + Bounded(queue, 100) + "\" has no Queue object, and pods and PodGroups " +
           "have already named " + std::to_string(kMaxQueuesFromWorkloads) +
           " such queues (the limit): create the Queue, or use an existing one";
  }
  return "";
}

void ClusterCache::RefreshJob(JobRecord& job) {
  if (job.id == kNone) return;
  const k8s::PodGroupInfo* group = GroupOf(job);
  int32_t min_member = group ? group->min_member : 1;
  int32_t priority = job.priorities.empty() ? 0 : job.priorities.rbegin()->first;
  if (group && !group->priority_class_name.empty()) {
    auto pc = priority_classes_.find(group->priority_class_name);
    if (pc != priority_classes_.end()) priority = pc->second;
  }
  QueueId queue = QueueFor(QueueNameOf(job), /*from_workload=*/true);
  // Refused (the job is held): what it runs still counts, in the default queue.
  if (queue == kNone) queue = QueueFor("default", false);
  const Job& current = state_.job(job.id);
  if (current.min_member != min_member || current.priority != priority || current.queue != queue) {
    // Cannot fail: min_member >= 1 and the queue exists.
    (void)state_.UpdateJob(job.id, min_member, priority, queue);
  }
  if (TopologyRequest topology = TopologyOf(job); topology != current.topology) {
    state_.SetJobTopology(job.id, std::move(topology));
  }
  FileJob(job.id, CreatedOf(job));
}

int64_t ClusterCache::CreatedOf(const JobRecord& job) const {
  if (const k8s::PodGroupInfo* group = GroupOf(job)) return group->meta.created;
  return job.created.empty() ? 0 : job.created.begin()->first;
}

void ClusterCache::FileJob(JobId id, int64_t created) {
  if (filed_.size() <= id) {
    filed_.resize(id + 1, false);
    filed_at_.resize(id + 1, 0);
  }
  if (filed_[id] && filed_at_[id] == created) return;
  UnfileJob(id);
  const auto it = job_order_.emplace(created, job_of_id_[id], id).first;
  filed_[id] = true;
  filed_at_[id] = created;
  // Creation times lie within a day of years 0000..9999 (k8s/timestamp.h): no overflow.
  const int64_t first = created * kOrderSlots;
  const auto in_second = [&](auto at) {
    return at != job_order_.end() && std::get<0>(*at) == created;
  };
  int64_t value = first;
  if (it != job_order_.begin() && in_second(std::prev(it))) {
    value = state_.job(std::get<2>(*std::prev(it))).creation + 1;
  }
  state_.SetJobCreation(id, value);
  state_.SetJobSubmitted(id, created);  // the session clock is the wall clock's seconds
  // Those after it in the same second move back until there is room: none when jobs come
  // in order (a relist lists them by name), a few when a second's jobs come mixed.
  for (auto next = std::next(it); in_second(next); ++next) {
    const JobId other = std::get<2>(*next);
    if (state_.job(other).creation > value) break;
    state_.SetJobCreation(other, ++value);
  }
  if (value - first < kOrderSlots) return;
  // Out of slots in this second (after many arrivals out of order): number them afresh.
  value = first;
  for (auto at = job_order_.lower_bound({created, "", 0}); in_second(at); ++at) {
    state_.SetJobCreation(std::get<2>(*at), value++);
  }
}

void ClusterCache::UnfileJob(JobId id) {
  if (id >= filed_.size() || !filed_[id]) return;
  job_order_.erase({filed_at_[id], job_of_id_[id], id});
  filed_[id] = false;
}

void ClusterCache::RemoveStateJob(JobId id) {
  UnfileJob(id);
  state_.RemoveJob(id);
  job_of_id_[id].clear();
}

JobId ClusterCache::EnsureStateJob(JobRecord& job) {
  if (job.id == kNone) {
    Job j;
    j.name = job.key;
    j.queue = QueueFor(job.ours ? "default" : kOtherSchedulersQueue, false);
    job.id = state_.AddJob(j).value();  // the key is unique among live jobs
    if (job_of_id_.size() <= job.id) job_of_id_.resize(job.id + 1);
    job_of_id_[job.id] = job.key;
  }
  RefreshJob(job);
  return job.id;
}

// ---------------------------------------------------------------------------------------
// Pods

void ClusterCache::DropTask(PodRecord& pod) {
  if (pod.task == kNone) return;
  const Task& task = state_.task(pod.task);
  JobId job_id = task.job;
  SpecId spec = task.spec;
  state_.RemoveTask(pod.task);
  ReleaseSpec(spec);
  pod_of_task_[pod.task].clear();
  pod.task = kNone;
  if (state_.job(job_id).tasks.empty()) {
    auto it = jobs_.find(job_of_id_[job_id]);
    RemoveStateJob(job_id);
    if (it != jobs_.end()) it->second.id = kNone;
  }
}

void ClusterCache::WaitFor(PodRecord& pod, const std::string& key, const std::string& node) {
  if (pod.waiting_for == node) return;
  if (!pod.waiting_for.empty()) {
    auto it = waiting_for_node_.find(pod.waiting_for);
    if (it != waiting_for_node_.end()) {
      it->second.erase(key);
      if (it->second.empty()) waiting_for_node_.erase(it);
    }
  }
  pod.waiting_for = node;
  if (!node.empty()) waiting_for_node_[node].insert(key);
}

TaskSpec ClusterCache::BoundSpec(const PodRecord& pod, const Node& node, std::string* note) const {
  TaskSpec spec = pod.info.spec;
  AddClaimVolumes(pod.info, /*to_place=*/false, &spec);
  const k8s::UnreadableRequests& unreadable = pod.info.unreadable;
  std::vector<std::string> taken;  // what it is counted as holding all of
  auto take_all = [&](ResourceId id) {
    if (id == kGpu || id == kPods) return;
    spec.requests.Set(id, node.allocatable.Get(id));
    taken.push_back(ResourceName(id));
  };
  if (unreadable.all) {
    for (const auto& e : node.allocatable.entries()) take_all(e.id);
  }
  for (ResourceId id : unreadable.ids) take_all(id);
  for (const std::string& name : unreadable.names) {
    // Refused for the pod; a node may have offered it since.
    if (int64_t id = ResourceNames().Find(name); id >= 0) take_all(static_cast<ResourceId>(id));
  }
  const auto devices = static_cast<int32_t>(node.gpus.size());
  std::string gpu_note;
  if (unreadable.all || unreadable.gpus) {
    spec.gpu = GpuRequest{};
    spec.gpu.count = devices;
    taken.push_back("its " + std::to_string(devices) + " GPU(s)");
  } else if (spec.gpu.count > devices) {
    gpu_note = "it asks for " + std::to_string(spec.gpu.count) + " GPUs and " + node.name +
               " has " + std::to_string(devices) + ": counted as holding all of them";
    spec.gpu.count = devices;
  } else if (spec.gpu.shared() && devices == 0) {
    spec.gpu = GpuRequest{};
  }
  note->clear();
  if (!taken.empty()) {
    std::string what;
    for (const std::string& t : taken) what += (what.empty() ? "" : ", ") + t;
    *note = "bound to " + node.name + ", but what it asks for cannot all be read (" +
            unreadable.ToString() + "): counted as holding all of " + node.name + "'s " + what;
    if (!pod.problem.empty()) *note += "; " + pod.problem;
  } else {
    *note = gpu_note;
  }
  *note = Bounded(*note, kMaxMessage);
  return spec;
}

std::vector<int32_t> ClusterCache::DevicesFor(const PodRecord& pod, NodeId node_id,
                                              const TaskSpec& spec) const {
  const Node& node = state_.node(node_id);
  const GpuRequest& gpu = spec.gpu;
  const size_t want = gpu.shared() ? 1 : static_cast<size_t>(gpu.count);
  if (want == 0) return {};
  const std::vector<int32_t>& written = pod.info.gpu_devices;
  bool written_ok = written.size() == want;
  for (size_t i = 0; written_ok && i < written.size(); ++i) {
    written_ok = written[i] >= 0 && static_cast<size_t>(written[i]) < node.gpus.size() &&
                 std::find(written.begin(), written.begin() + i, written[i]) == written.begin() + i;
  }
  if (written_ok) return written;
  if (!gpu.shared() && node.numa.aligns() && node.numa.Lists(kGpu)) {
    // The kubelet takes a pod's GPUs from the lowest NUMA node that has enough free.
    for (const NumaZone& zone : node.numa.zones) {
      std::vector<int32_t> free;
      for (size_t d = 0; d < node.gpus.size() && free.size() < want; ++d) {
        if (node.gpus[d].numa_node == zone.id && node.gpus[d].used_milli == 0) {
          free.push_back(static_cast<int32_t>(d));
        }
      }
      if (free.size() == want) return free;
    }
  }
  // Bound without our annotation (another scheduler, or whole GPUs that the device
  // plugin assigns), or with one that cannot be used: count it against the least used
  // devices.
  std::vector<int32_t> order(node.gpus.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return node.gpus[a].used_milli < node.gpus[b].used_milli;
  });
  order.resize(std::min(want, order.size()));
  std::sort(order.begin(), order.end());
  return order;
}

void ClusterCache::SyncPod(const std::string& key) {
  SyncPodTask(key);
  auto it = pods_.find(key);
  if (it != pods_.end()) UpdateClaimUse(it->second, key);
}

void ClusterCache::SyncPodTask(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  PodRecord& pod = it->second;
  if (!pod.job_key.empty()) status_dirty_.insert(pod.job_key);
  const k8s::PodInfo& info = pod.info;
  enum class Want { kNothing, kPending, kUnschedulable, kRunning, kAsIs } want = Want::kNothing;
  NodeId node = kNone;
  std::string waiting_for;
  if (info.finished()) {
    want = Want::kNothing;
  } else if (!info.node_name.empty()) {
    node = state_.FindNode(info.node_name);
    if (node == kNone) {
      waiting_for = info.node_name;
    } else {
      want = Want::kRunning;
    }
  } else if (pod.assumed) {
    want = Want::kAsIs;
  } else if (Ours(info) && !info.meta.deleting) {
    // Gated pods are not scheduled (and say so), however malformed the rest of them is;
    // nor are pods whose last bind failed, until their backoff ends.
    want = !info.scheduling_gates.empty() || !pod.problem.empty() || pod.held_until > 0
               ? Want::kUnschedulable
               : Want::kPending;
  }
  // A pod to place is placed with what its volumes require, unless they keep it pending.
  TaskSpec pending_spec;
  pod.volume_problem.clear();
  pod.spread_problem.clear();
  pod.spread_services.clear();
  if (want == Want::kPending) {
    pod.volume_problem = Bounded(ResolveVolumes(pod, &pending_spec), kMaxMessage);
    if (!pod.volume_problem.empty()) want = Want::kUnschedulable;
  }
  if (want == Want::kPending) {
    pod.spread_problem = Bounded(ResolveDefaultSpread(pod, &pending_spec), kMaxMessage);
    if (!pod.spread_problem.empty()) want = Want::kUnschedulable;
  }
  WaitFor(pod, key, waiting_for);
  if (want == Want::kAsIs) return;
  if (want == Want::kNothing) {
    DropTask(pod);
    pod.adjusted = false;
    return;
  }
  // In its job even when it waits, so that its status is written.
  JobRecord& job = JobFor(pod);
  if (want == Want::kUnschedulable || (want == Want::kPending && !HoldReason(job).empty())) {
    DropTask(pod);
    return;
  }
  std::string note;
  TaskSpec spec =
      want == Want::kRunning ? BoundSpec(pod, state_.node(node), &note) : std::move(pending_spec);
  if (want == Want::kRunning && note != pod.accounting_note) {
    pod.accounting_note = note;
    if (!note.empty()) {
      Problem({"v1", "Pod", info.meta.namespace_, info.meta.name, info.meta.uid, "Warning",
               "UnreadableRequests", note});
    }
  }
  pod.adjusted = !note.empty();
  if (pod.task != kNone) {
    const Task& task = state_.task(pod.task);
    bool same = task.job == job.id && task.spec == FindSpec(spec) &&
                (want == Want::kPending ? task.state == TaskState::kPending
                                        : task.state == TaskState::kRunning && task.node == node);
    if (same) {
      if (want == Want::kRunning) state_.SetReleasing(pod.task, info.meta.deleting || pod.evicted);
      state_.SetTaskMovable(pod.task, info.movable);
      RefreshJob(job);
      return;
    }
    DropTask(pod);
    if (want == Want::kRunning && state_.FindNode(info.node_name) != node) {
      // Its node had been deleted and was kept only for this pod's task: the drop freed it.
      WaitFor(pod, key, info.node_name);
      return;
    }
  }
  JobId job_id = EnsureStateJob(job);
  SpecId spec_id = AcquireSpec(spec);
  TaskId task = state_.AddTask(job_id, spec_id, key).value();
  state_.SetTaskMovable(task, info.movable);
  if (pod_of_task_.size() <= task) pod_of_task_.resize(task + 1);
  pod_of_task_[task] = key;
  pod.task = task;
  if (want == Want::kRunning) {
    std::vector<int32_t> devices = DevicesFor(pod, node, spec);
    Status placed = state_.PlaceBound(task, node, devices);
    if (!placed.ok()) {
      Problem({"v1", "Pod", info.meta.namespace_, info.meta.name, info.meta.uid, "Warning",
               "AccountingFailed",
               "bound to " + info.node_name + " but cannot be counted there: " + placed.message()});
      DropTask(pod);
    } else {
      // Terminating (deleted, or evicted by us): its room is being released.
      state_.SetReleasing(task, info.meta.deleting || pod.evicted);
    }
  }
}

void ClusterCache::OnPod(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  const std::string key = meta->Key();
  if (type == k8s::EventType::kDeleted) {
    auto it = pods_.find(key);
    if (it == pods_.end()) return;
    PodRecord& pod = it->second;
    EndVolumeWait(pod, key);
    DropTask(pod);
    if (pod.assumed) assumed_--;
    if (pod.held_until > 0) held_.erase({pod.held_until, key});
    WaitFor(pod, key, "");
    LeaveJob(pod);
    IndexPodClaims(pod, key, /*gone=*/true);
    UpdateClaimUse(pod, key, /*gone=*/true);
    IndexSpreadPod(pod, key, /*gone=*/true);
    pods_.erase(it);
    return;
  }
  auto it = pods_.find(key);
  if (it != pods_.end() && it->second.info.meta.uid != meta->uid) {
    // The same name, a new pod: the old one is gone.
    OnPod(k8s::EventType::kDeleted, object);
    it = pods_.end();
  }
  if (it == pods_.end()) it = pods_.emplace(key, PodRecord{}).first;
  PodRecord& pod = it->second;
  std::string problem;
  auto decoded = k8s::DecodePod(object, &problem);
  if (!decoded.ok()) return;  // only without a name, which ParseMeta has seen
  pod.info = std::move(decoded).value();
  pod.problem = Bounded(std::move(problem), kMaxMessage);
  IndexPodClaims(pod, key, /*gone=*/false);
  IndexSpreadPod(pod, key, /*gone=*/false);
  if (!pod.info.node_name.empty() && pod.assumed) {
    pod.assumed = false;
    assumed_--;
  }
  // Bound meanwhile (by whoever): nothing to wait for.
  if (!pod.info.node_name.empty()) EndVolumeWait(pod, key);
  if (!pod.info.node_name.empty()) {
    pod.bind_failures = 0;
    if (pod.held_until > 0) held_.erase({pod.held_until, key});
    pod.held_until = 0;
  }
  SyncPod(key);
  // Its shape joins the profile once, as it arrived (a pod held for its group, once it
  // has a task).
  if (auto synced = pods_.find(key); arrival_profile_ && synced != pods_.end()) {
    PodRecord& record = synced->second;
    if (!record.profiled && record.task != kNone && Ours(record.info)) {
      record.profiled = true;
      arrival_profile_->Observe(TaskShape::Of(state_.spec_of(record.task)),
                                static_cast<double>(record.info.meta.created));
    }
  }
}

void ClusterCache::SetProfileHalfLife(double seconds) {
  if (seconds > 0) {
    arrival_profile_.emplace(seconds, kDefaultProfileShapes);
  } else {
    arrival_profile_.reset();
  }
}

WorkloadProfile ClusterCache::ProfileAt(double now) const {
  return arrival_profile_ ? arrival_profile_->ProfileAt(now) : WorkloadProfile{};
}

// ---------------------------------------------------------------------------------------
// Nodes

void ClusterCache::RefuseNode(const k8s::ObjectMeta& meta, const std::string& why) {
  std::string reason = Bounded(why, kMaxNodeReason);
  auto [it, inserted] = refused_nodes_.try_emplace(meta.name);
  if (!inserted && it->second == reason) return;  // said already
  it->second = reason;
  Problem({"v1", "Node", "", meta.name, meta.uid, "Warning", "InvalidNode",
           "gantry does not schedule onto this node: " + reason});
}

void ClusterCache::OnNode(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  NodeId id = state_.FindNode(meta->name);
  if (type == k8s::EventType::kDeleted) {
    refused_nodes_.erase(meta->name);
    bad_node_datasets_.erase(meta->name);
    if (id != kNone) state_.RemoveNode(id);
    return;
  }
  auto node = k8s::ParseNode(object);
  if (node.ok()) {
    node->csi = NodeCsiOf(meta->name);
    node->cached_datasets = NodeCachedDatasets(*meta, object);
    AddHyperNodeLabels(*node);
    AttachNuma(*node);
  }
  Status st = !node.ok()    ? node.status()
              : id == kNone ? state_.AddNode(std::move(node).value()).status()
                            : state_.UpdateNode(id, std::move(node).value());
  if (!st.ok()) {
    // Out of scheduling like a deleted node; what runs there keeps counting.
    RefuseNode(*meta, st.message());
    if (id != kNone) state_.RemoveNode(id);
    return;
  }
  refused_nodes_.erase(meta->name);
  id = state_.FindNode(meta->name);
  // Pods counted as all of something the node has: what that is may have changed.
  std::vector<std::string> keys;
  for (TaskId t : state_.tasks_on(id)) {
    const std::string& key = pod_of_task_[t];
    auto pod = pods_.find(key);
    if (pod != pods_.end() && pod->second.adjusted) keys.push_back(key);
  }
  auto waiting = waiting_for_node_.find(meta->name);
  if (waiting != waiting_for_node_.end()) {
    for (const std::string& key : waiting->second) {
      auto pod = pods_.find(key);
      if (pod != pods_.end()) pod->second.waiting_for.clear();
      keys.push_back(key);
    }
    waiting_for_node_.erase(waiting);
  }
  for (const std::string& key : keys) SyncPod(key);
}

// ---------------------------------------------------------------------------------------
// Groups, queues, priority classes

void ClusterCache::OnPodGroup(k8s::GroupApi api, k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  const std::string gk = GroupKey(api, meta->namespace_, meta->name);
  auto job = jobs_.find(gk);
  const bool held_before = job != jobs_.end() && !HoldReason(job->second).empty();
  if (type == k8s::EventType::kDeleted) {
    groups_.erase(gk);
    bad_groups_.erase(gk);
  } else {
    auto group = k8s::ParsePodGroup(object, api);
    if (group.ok()) {
      groups_[gk] = std::move(group).value();
      bad_groups_.erase(gk);
    } else {
      groups_.erase(gk);
      std::string message = Bounded(group.status().message(), kMaxMessage);
      std::string& known = bad_groups_[gk];
      if (known != message) {
        known = message;
        Problem({ApiVersionOf(api), "PodGroup", meta->namespace_, meta->name, meta->uid, "Warning",
                 "InvalidPodGroup", known});
      }
    }
  }
  if (job == jobs_.end()) return;
  status_dirty_.insert(gk);
  // Only a change between held and not held changes which pods are tasks; anything else
  // (gang size, queue, priority class, and the status we write ourselves) is the job's.
  if (held_before != !HoldReason(job->second).empty()) {
    std::vector<std::string> keys(job->second.pods.begin(), job->second.pods.end());
    for (const std::string& key : keys) {
      pod_records_visited_++;
      SyncPod(key);
    }
    job = jobs_.find(gk);
    if (job == jobs_.end()) return;
  }
  RefreshJob(job->second);
}

}  // namespace gantry

#include "daemon/cluster_cache.h"

#include <algorithm>

namespace gantry {
namespace {

using json = nlohmann::json;

std::string ApiVersionOf(k8s::GroupApi api) {
  return api == k8s::GroupApi::kCoscheduling ? "scheduling.x-k8s.io/v1alpha1"
                                             : "scheduling.volcano.sh/v1beta1";
}

std::string GroupKey(k8s::GroupApi api, const std::string& namespace_, const std::string& name) {
  return (api == k8s::GroupApi::kCoscheduling ? "xk|" : "vc|") + namespace_ + "/" + name;
}

// A canonical text of a spec, so that pods asking for the same thing share one spec
// (and the engine's per-spec caches).
std::string SpecKey(const TaskSpec& s) {
  auto field = [](const std::string& v) { return std::to_string(v.size()) + ":" + v; };
  std::string key = s.requests.ToString() + "|" + std::to_string(s.gpu.count) + "," +
                    std::to_string(s.gpu.milli) + "," + std::to_string(s.gpu.memory_mib) + "|" +
                    std::to_string(s.priority) + "|";
  for (GpuModelId m : s.gpu.models) key += std::to_string(m) + ",";
  key += "|";
  for (const auto& [k, v] : s.node_selector.pairs()) key += field(k) + field(v);
  key += "|";
  for (const Toleration& t : s.tolerations) {
    key += field(t.key) + std::to_string(static_cast<int>(t.op)) + field(t.value) +
           (t.any_effect ? "*" : std::to_string(static_cast<int>(t.effect)));
  }
  key += "|";
  for (const auto& term : s.affinity.terms) {
    key += "(";
    for (const SelectorRequirement& r : term) {
      key += field(r.key) + std::to_string(static_cast<int>(r.op));
      for (const std::string& v : r.values) key += field(v);
    }
    key += ")";
  }
  return key;
}

}  // namespace

ClusterCache::ClusterCache(std::string scheduler_name)
    : scheduler_name_(std::move(scheduler_name)) {
  // Present from the start, so that queue ids of these two never move.
  QueueFor("default");
  QueueFor(kOtherSchedulersQueue);
}

void ClusterCache::Problem(ObjectEvent event) {
  problems_.push_back(std::move(event));
}

std::vector<ObjectEvent> ClusterCache::TakeProblems() {
  return std::exchange(problems_, {});
}

QueueId ClusterCache::QueueFor(const std::string& name) {
  QueueId id = state_.FindQueue(name);
  if (id != kNone) return id;
  Queue queue;
  queue.name = name;
  auto it = queues_.find(name);
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

SpecId ClusterCache::SpecFor(const TaskSpec& spec) {
  std::string key = SpecKey(spec);
  auto it = spec_ids_.find(key);
  if (it != spec_ids_.end()) return it->second;
  SpecId id = state_.AddSpec(spec);
  spec_ids_.emplace(std::move(key), id);
  return id;
}

std::string ClusterCache::JobKeyOf(const PodRecord& pod) const {
  const k8s::PodInfo& p = pod.info;
  if (!Ours(p)) return "other|" + p.meta.Key();
  if (p.group.empty()) return "pod|" + p.meta.Key();
  return GroupKey(p.group_api, p.meta.namespace_, p.group);
}

ClusterCache::JobRecord& ClusterCache::JobFor(PodRecord& pod) {
  std::string key = JobKeyOf(pod);
  if (!pod.job_key.empty() && pod.job_key != key) {
    auto old = jobs_.find(pod.job_key);
    if (old != jobs_.end()) old->second.pods.erase(pod.info.meta.Key());
    ForgetJobIfEmpty(pod.job_key);
  }
  pod.job_key = key;
  auto [it, inserted] = jobs_.try_emplace(key);
  JobRecord& job = it->second;
  if (inserted) {
    job.key = key;
    job.api = pod.info.group_api;
    job.namespace_ = pod.info.meta.namespace_;
    job.group = pod.info.group;
    job.ours = Ours(pod.info);
  }
  job.pods.insert(pod.info.meta.Key());
  status_dirty_.insert(key);
  return job;
}

void ClusterCache::ForgetJobIfEmpty(const std::string& key) {
  auto it = jobs_.find(key);
  if (it == jobs_.end() || !it->second.pods.empty()) return;
  if (it->second.id != kNone && state_.job(it->second.id).tasks.empty()) {
    state_.RemoveJob(it->second.id);
  }
  jobs_.erase(it);
}

const k8s::PodGroupInfo* ClusterCache::GroupOf(const JobRecord& job) const {
  if (job.group.empty()) return nullptr;
  auto it = groups_.find(GroupKey(job.api, job.namespace_, job.group));
  return it == groups_.end() ? nullptr : &it->second;
}

std::string ClusterCache::HoldReason(const JobRecord& job) const {
  if (job.group.empty()) return "";
  std::string gk = GroupKey(job.api, job.namespace_, job.group);
  std::string name =
      "PodGroup " + job.namespace_ + "/" + job.group + " (" + ApiVersionOf(job.api) + ")";
  if (auto bad = bad_groups_.find(gk); bad != bad_groups_.end()) {
    return name + " is invalid: " + bad->second;
  }
  if (!groups_.count(gk)) return "waiting for " + name + " to exist";
  return "";
}

void ClusterCache::RefreshJob(JobRecord& job) {
  if (job.id == kNone) return;
  const k8s::PodGroupInfo* group = GroupOf(job);
  int32_t min_member = group ? group->min_member : 1;
  int32_t priority = INT32_MIN;
  std::string queue_name;
  for (const std::string& key : job.pods) {
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    priority = std::max(priority, it->second.info.priority);
    if (queue_name.empty()) queue_name = it->second.info.queue;
  }
  if (priority == INT32_MIN) priority = 0;
  if (group && !group->priority_class_name.empty()) {
    auto pc = priority_classes_.find(group->priority_class_name);
    if (pc != priority_classes_.end()) priority = pc->second;
  }
  if (group && !group->queue.empty()) queue_name = group->queue;
  if (queue_name.empty()) queue_name = "default";
  if (!job.ours) queue_name = kOtherSchedulersQueue;
  QueueId queue = QueueFor(queue_name);
  const Job& current = state_.job(job.id);
  if (current.min_member != min_member || current.priority != priority || current.queue != queue) {
    // Cannot fail: min_member >= 1 and the queue exists.
    (void)state_.UpdateJob(job.id, min_member, priority, queue);
  }
}

JobId ClusterCache::EnsureStateJob(JobRecord& job) {
  if (job.id == kNone) {
    Job j;
    j.name = job.key;
    j.queue = QueueFor(job.ours ? "default" : kOtherSchedulersQueue);
    static int64_t creation = 0;
    j.creation = ++creation;
    job.id = state_.AddJob(j).value();  // the key is unique among live jobs
    if (job_of_id_.size() <= job.id) job_of_id_.resize(job.id + 1);
    job_of_id_[job.id] = job.key;
  }
  RefreshJob(job);
  return job.id;
}

void ClusterCache::DropTask(PodRecord& pod) {
  if (pod.task == kNone) return;
  JobId job_id = state_.task(pod.task).job;
  state_.RemoveTask(pod.task);
  pod_of_task_[pod.task].clear();
  pod.task = kNone;
  if (state_.job(job_id).tasks.empty()) {
    auto it = jobs_.find(job_of_id_[job_id]);
    state_.RemoveJob(job_id);
    if (it != jobs_.end()) it->second.id = kNone;
  }
}

std::vector<int32_t> ClusterCache::DevicesFor(const PodRecord& pod, NodeId node_id) const {
  const Node& node = state_.node(node_id);
  const GpuRequest& gpu = pod.info.spec.gpu;
  const size_t want = gpu.shared() ? 1 : static_cast<size_t>(gpu.count);
  if (want == 0) return {};
  const std::vector<int32_t>& written = pod.info.gpu_devices;
  bool written_ok = written.size() == want;
  for (int32_t d : written)
    written_ok = written_ok && d >= 0 && static_cast<size_t>(d) < node.gpus.size();
  if (written_ok) return written;
  // Bound without our annotation (another scheduler, or whole GPUs that the device
  // plugin assigns): count it against the least used devices.
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
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  PodRecord& pod = it->second;
  if (!pod.job_key.empty()) status_dirty_.insert(pod.job_key);
  const k8s::PodInfo& info = pod.info;
  enum class Want { kNothing, kPending, kRunning, kAsIs } want = Want::kNothing;
  NodeId node = kNone;
  if (!pod.decoded || info.finished()) {
    want = Want::kNothing;
  } else if (!info.node_name.empty()) {
    node = state_.FindNode(info.node_name);
    if (node == kNone) {
      waiting_for_node_[info.node_name].insert(key);
    } else {
      want = Want::kRunning;
    }
  } else if (pod.assumed) {
    want = Want::kAsIs;
  } else if (Ours(info) && !info.meta.deleting) {
    want = Want::kPending;
  }
  if (want == Want::kAsIs) return;
  if (want == Want::kNothing) {
    DropTask(pod);
    return;
  }
  JobRecord& job = JobFor(pod);
  if (want == Want::kPending && !HoldReason(job).empty()) {
    DropTask(pod);
    return;
  }
  if (pod.task != kNone) {
    const Task& task = state_.task(pod.task);
    bool same_job = task.job == job.id;
    if (same_job && want == Want::kPending && task.state == TaskState::kPending &&
        task.spec == SpecFor(info.spec)) {
      RefreshJob(job);
      return;
    }
    if (same_job && want == Want::kRunning && task.state == TaskState::kRunning &&
        task.node == node) {
      RefreshJob(job);
      return;
    }
    DropTask(pod);
  }
  JobId job_id = EnsureStateJob(job);
  TaskId task = state_.AddTask(job_id, SpecFor(info.spec), key).value();
  if (pod_of_task_.size() <= task) pod_of_task_.resize(task + 1);
  pod_of_task_[task] = key;
  pod.task = task;
  if (want == Want::kRunning) {
    std::vector<int32_t> devices = DevicesFor(pod, node);
    Status placed = state_.PlaceBound(task, node, devices);
    if (!placed.ok()) {
      Problem({"v1", "Pod", info.meta.namespace_, info.meta.name, info.meta.uid, "Warning",
               "AccountingFailed",
               "bound to " + info.node_name + " but cannot be counted there: " + placed.message()});
      DropTask(pod);
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
    DropTask(pod);
    if (pod.assumed) assumed_--;
    std::string job_key = pod.job_key;
    status_dirty_.insert(job_key);
    if (auto job = jobs_.find(job_key); job != jobs_.end()) job->second.pods.erase(key);
    pods_.erase(it);
    ForgetJobIfEmpty(job_key);
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
  auto parsed = k8s::ParsePod(object);
  if (parsed.ok()) {
    pod.info = std::move(parsed).value();
    pod.decoded = true;
    pod.error.clear();
  } else {
    bool changed = pod.error != parsed.status().message();
    pod.decoded = false;
    pod.error = parsed.status().message();
    pod.info.meta = *meta;
    const json& spec = object.contains("spec") ? object["spec"] : json::object();
    pod.info.scheduler_name = spec.value("schedulerName", std::string("default-scheduler"));
    pod.info.node_name = spec.value("nodeName", std::string());
    if (changed && Ours(pod.info)) {
      Problem({"v1", "Pod", meta->namespace_, meta->name, meta->uid, "Warning", "FailedScheduling",
               pod.error});
    }
  }
  if (!pod.info.node_name.empty() && pod.assumed) {
    pod.assumed = false;
    assumed_--;
  }
  SyncPod(key);
}

void ClusterCache::OnNode(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  NodeId id = state_.FindNode(meta->name);
  if (type == k8s::EventType::kDeleted) {
    if (id != kNone) state_.RemoveNode(id);
    return;
  }
  auto node = k8s::ParseNode(object);
  if (!node.ok()) {
    Problem({"v1", "Node", "", meta->name, meta->uid, "Warning", "InvalidNode",
             node.status().message()});
    if (id != kNone) state_.RemoveNode(id);
    return;
  }
  Status st = id == kNone ? state_.AddNode(std::move(node).value()).status()
                          : state_.UpdateNode(id, std::move(node).value());
  if (!st.ok()) {
    Problem({"v1", "Node", "", meta->name, meta->uid, "Warning", "InvalidNode", st.message()});
    return;
  }
  auto waiting = waiting_for_node_.find(meta->name);
  if (waiting != waiting_for_node_.end()) {
    std::set<std::string> keys = std::move(waiting->second);
    waiting_for_node_.erase(waiting);
    for (const std::string& key : keys) SyncPod(key);
  }
}

void ClusterCache::OnPodGroup(k8s::GroupApi api, k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  const std::string gk = GroupKey(api, meta->namespace_, meta->name);
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
      std::string& known = bad_groups_[gk];
      if (known != group.status().message()) {
        known = group.status().message();
        Problem({ApiVersionOf(api), "PodGroup", meta->namespace_, meta->name, meta->uid, "Warning",
                 "InvalidPodGroup", known});
      }
    }
  }
  status_dirty_.insert(gk);
  auto job = jobs_.find(gk);
  if (job == jobs_.end()) return;
  std::vector<std::string> keys(job->second.pods.begin(), job->second.pods.end());
  for (const std::string& key : keys) SyncPod(key);
  job = jobs_.find(gk);
  if (job != jobs_.end()) RefreshJob(job->second);
}

void ClusterCache::OnQueue(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  k8s::QueueInfo info;
  info.meta = *meta;
  if (type != k8s::EventType::kDeleted) {
    auto parsed = k8s::ParseQueue(object);
    if (!parsed.ok()) {
      Problem({"scheduling.volcano.sh/v1beta1", "Queue", "", meta->name, meta->uid, "Warning",
               "InvalidQueue", parsed.status().message()});
      return;
    }
    info = std::move(parsed).value();
    queues_[meta->name] = info;
  } else {
    queues_.erase(meta->name);
  }
  QueueId id = QueueFor(meta->name);
  Status st = state_.UpdateQueue(id, info.weight, info.guarantee, info.capability);
  if (!st.ok()) {
    Problem({"scheduling.volcano.sh/v1beta1", "Queue", "", meta->name, meta->uid, "Warning",
             "InvalidQueue", st.message()});
  }
}

void ClusterCache::OnPriorityClass(k8s::EventType type, const json& object) {
  auto pc = k8s::ParsePriorityClass(object);
  if (!pc.ok()) return;
  if (type == k8s::EventType::kDeleted) {
    priority_classes_.erase(pc->meta.name);
  } else {
    priority_classes_[pc->meta.name] = pc->value;
  }
  for (auto& [key, job] : jobs_) {
    const k8s::PodGroupInfo* group = GroupOf(job);
    if (group && group->priority_class_name == pc->meta.name) RefreshJob(job);
  }
}

std::vector<BindRequest> ClusterCache::Assume(const Decisions& decisions) {
  std::vector<BindRequest> out;
  out.reserve(decisions.binds.size());
  for (const BindDecision& b : decisions.binds) {
    const std::string& key = pod_of_task_[b.task];
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    PodRecord& pod = it->second;
    Status placed = state_.Place(b.task, b.node, b.gpus);
    if (!placed.ok()) {
      // The engine decided on this very state, so this is a bug; say so and skip.
      Problem({"v1", "Pod", pod.info.meta.namespace_, pod.info.meta.name, pod.info.meta.uid,
               "Warning", "InternalError", "decision could not be applied: " + placed.message()});
      continue;
    }
    pod.assumed = true;
    assumed_++;
    status_dirty_.insert(pod.job_key);
    BindRequest r;
    r.namespace_ = pod.info.meta.namespace_;
    r.name = pod.info.meta.name;
    r.uid = pod.info.meta.uid;
    r.node = state_.node(b.node).name;
    r.gpus = b.gpus;
    r.write_devices = pod.info.spec.gpu.shared();
    r.job = pod.job_key;
    out.push_back(std::move(r));
  }
  return out;
}

void ClusterCache::BindFailed(const std::string& namespace_, const std::string& name,
                              const std::string& uid) {
  const std::string key = namespace_ + "/" + name;
  auto it = pods_.find(key);
  if (it == pods_.end() || it->second.info.meta.uid != uid || !it->second.assumed) return;
  PodRecord& pod = it->second;
  pod.assumed = false;
  assumed_--;
  if (pod.task != kNone && state_.task(pod.task).state == TaskState::kRunning &&
      pod.info.node_name.empty()) {
    state_.Unplace(pod.task);
  }
  SyncPod(key);
}

void ClusterCache::CollectStatus(const Decisions& decisions, std::vector<PodCondition>* conditions,
                                 std::vector<GroupStatus>* groups,
                                 std::vector<ObjectEvent>* events) {
  std::unordered_map<JobId, const std::string*> reasons;
  for (const PendingJob& p : decisions.pending) {
    reasons[p.job] = &p.reason;
    if (p.job < job_of_id_.size()) status_dirty_.insert(job_of_id_[p.job]);
  }
  const std::set<std::string> keys = std::exchange(status_dirty_, {});
  for (const std::string& job_key : keys) {
    auto found = jobs_.find(job_key);
    if (found == jobs_.end()) continue;
    JobRecord& job = found->second;
    if (!job.ours) continue;
    std::string hold = HoldReason(job);
    std::string reason = hold;
    if (reason.empty() && job.id != kNone) {
      auto r = reasons.find(job.id);
      if (r != reasons.end()) reason = *r->second;
    }
    int32_t running = 0, succeeded = 0, failed = 0;
    for (const std::string& key : job.pods) {
      auto it = pods_.find(key);
      if (it == pods_.end()) continue;
      PodRecord& pod = it->second;
      const k8s::PodInfo& info = pod.info;
      if (info.phase == "Succeeded") succeeded++;
      if (info.phase == "Failed") failed++;
      if (!info.node_name.empty() && !info.finished()) running++;
      bool waiting =
          info.node_name.empty() && !pod.assumed && !info.meta.deleting && !info.finished();
      if (!waiting || reason.empty()) continue;
      if (reason == pod.written_message || reason == info.unschedulable_message) continue;
      pod.written_message = reason;
      conditions->push_back({info.meta.namespace_, info.meta.name, reason});
      events->push_back({"v1", "Pod", info.meta.namespace_, info.meta.name, info.meta.uid,
                         "Warning", "FailedScheduling", reason});
    }
    const k8s::PodGroupInfo* group = GroupOf(job);
    if (!group) continue;
    GroupStatus s;
    s.api = job.api;
    s.namespace_ = job.namespace_;
    s.name = job.group;
    s.running = running;
    s.succeeded = succeeded;
    s.failed = failed;
    const bool volcano = job.api != k8s::GroupApi::kCoscheduling;
    if (succeeded >= group->min_member) {
      s.phase = volcano ? "Completed" : "Finished";
    } else if (running >= group->min_member) {
      s.phase = "Running";
    } else if (running > 0 && !volcano) {
      s.phase = "Scheduling";
    } else {
      s.phase = volcano && reason.empty() ? "Inqueue" : "Pending";
    }
    s.unschedulable_message = running >= group->min_member ? "" : reason;
    if (s.phase == job.written_phase && s.running == job.written_running &&
        s.unschedulable_message == job.written_message) {
      continue;
    }
    if (!s.unschedulable_message.empty() && s.unschedulable_message != job.written_message) {
      events->push_back({ApiVersionOf(job.api), "PodGroup", job.namespace_, job.group,
                         group->meta.uid, "Warning", "Unschedulable", s.unschedulable_message});
    }
    job.written_phase = s.phase;
    job.written_running = s.running;
    job.written_message = s.unschedulable_message;
    groups->push_back(std::move(s));
  }
}

int64_t ClusterCache::pending_pods() const {
  int64_t n = 0;
  for (JobId id : state_.jobs_with_pending()) n += state_.job(id).pending;
  return n;
}

std::map<std::string, int64_t> ClusterCache::PendingPodsByQueue() const {
  std::map<std::string, int64_t> out;
  for (const Queue& q : state_.queues()) {
    if (q.name != kOtherSchedulersQueue) out[q.name] = 0;
  }
  for (JobId id : state_.jobs_with_pending()) {
    const Job& job = state_.job(id);
    out[state_.queue(job.queue).name] += job.pending;
  }
  return out;
}

}  // namespace gantry

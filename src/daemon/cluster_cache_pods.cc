// The cache's pods: what a pod becomes in ClusterState (a running task where it is bound,
// a pending task of its job when it is ours and can be placed, nothing otherwise), the spec
// it is placed with as the components resolve it, and the watch's pod events.
#include <algorithm>

#include "daemon/cluster_cache.h"
#include "model/device_backed.h"
#include "model/limits.h"

namespace gantry {

using json = nlohmann::json;

void ClusterCache::DropTask(PodRecord& pod) {
  if (pod.task == kNone) return;
  const Task& task = state_.task(pod.task);
  JobId job_id = task.job;
  SpecId spec = task.spec;
  state_.RemoveTask(pod.task);
  specs_.Release(spec, state_);
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
  volumes_.AddAttachableVolumes(pod.info, /*to_place=*/false, &spec);
  spec.device_requests = devices_.DeviceRequestsOf(pod.info);
  spec.resource_claims = DeviceClaims::HeldClaimKeysOf(pod.info);
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
  if (devices == 0 && spec.gpu.count > 0) devices_.MarkDeviceBacked(&spec);
  std::string gpu_note;
  if (unreadable.all || unreadable.gpus) {
    spec.gpu = GpuRequest{};
    spec.gpu.count = devices;
    taken.push_back("its " + std::to_string(devices) + " GPU(s)");
  } else if (devices == 0 && Backs(spec.device_backed, kGpu)) {
    // Its GPUs come from the node's DRA driver (an extended-resource claim): they count as
    // asked (ClusterState::Accounted).
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
  UpdateClaimUse(key);
}

void ClusterCache::UpdateClaimUse(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  const PodRecord& pod = it->second;
  const k8s::PodInfo& info = pod.info;
  const bool in_use =
      !info.claims.empty() && !info.finished() && (!info.node_name.empty() || pod.assumed);
  Apply(volumes_.SetClaimsInUse(key, in_use, state_));
}

bool ClusterCache::ResolveSpec(PodRecord& pod, const std::string& key, TaskSpec* spec) {
  pod.resolve_problem = Bounded(volumes_.Resolve(pod.info, spec), kMaxMessage);
  pod.resolve_kind = PendingKind::kVolume;
  if (!pod.resolve_problem.empty()) {
    spreading_.Unresolve(key);
    return false;
  }
  pod.resolve_problem = Bounded(devices_.Resolve(pod.info, spec), kMaxMessage);
  pod.resolve_kind = PendingKind::kOther;
  if (pod.resolve_problem.empty() && !spec->device_backed.empty()) {
    pod.resolve_problem = Bounded(devices_.DeleteLeftExtendedClaim(pod.info), kMaxMessage);
  }
  if (!pod.resolve_problem.empty()) {
    spreading_.Unresolve(key);
    return false;
  }
  pod.resolve_problem = Bounded(spreading_.Resolve(key, pod.info, spec), kMaxMessage);
  pod.resolve_kind = PendingKind::kInvalid;
  return pod.resolve_problem.empty();
}

void ClusterCache::SyncPodTask(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  PodRecord& pod = it->second;
  if (!pod.job_key.empty()) status_.MarkChanged(pod.job_key);
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
  // A pod to place is placed with what its components resolve, unless one keeps it pending.
  TaskSpec pending_spec;
  pod.resolve_problem.clear();
  if (want != Want::kPending) {
    spreading_.Unresolve(key);
  } else if (!ResolveSpec(pod, key, &pending_spec)) {
    want = Want::kUnschedulable;
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
    bool same = task.job == job.id && task.spec == specs_.Find(spec) &&
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
  SpecId spec_id = specs_.Acquire(spec, state_);
  TaskId task = state_.AddTask(job_id, spec_id, key).value();
  state_.SetTaskMovable(task, info.movable);
  if (auto leaf = job.leaf_of.find(info.group); leaf != job.leaf_of.end()) {
    (void)state_.SetTaskGroup(task, leaf->second);  // cannot fail: a leaf of the job's tree
  }
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
    Apply(volumes_.Forget(key, state_));  // its volume binding, if one is in flight
    PodRecord& pod = pods_.at(key);
    DropTask(pod);
    if (pod.assumed) assumed_--;
    if (pod.held_until > 0) held_.erase({pod.held_until, key});
    WaitFor(pod, key, "");
    ReconsiderHold(groups_.TrackForeignPod(key, "", ""));
    const std::string job_key = pod.job_key;
    LeaveJob(pod);
    Apply(volumes_.ForgetPod(key, state_));
    Apply(devices_.ForgetPod(key));
    spreading_.ForgetPod(key);
    evictions_.ForgetPod(key);
    status_.ForgetPod(key);
    pods_.erase(key);
    ReconsiderHold(job_key);
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
  volumes_.TrackPod(key, pod.info);
  devices_.TrackPod(key, pod.info);
  spreading_.TrackPod(key, pod.info, Ours(pod.info));
  if (!pod.info.node_name.empty() && pod.assumed) {
    pod.assumed = false;
    assumed_--;
  }
  // Bound meanwhile (by whoever): nothing to wait for.
  if (!pod.info.node_name.empty()) Apply(volumes_.Forget(key, state_));
  if (!pod.info.node_name.empty()) {
    pod.bind_failures = 0;
    if (pod.held_until > 0) held_.erase({pod.held_until, key});
    pod.held_until = 0;
  }
  const std::string job_before = pod.job_key;
  SyncPod(key);
  if (auto synced = pods_.find(key); synced != pods_.end()) {
    // Another scheduler's pod in a native group holds the group (PodGroups::Conflict).
    const k8s::PodInfo& info = synced->second.info;
    const std::string group = !Ours(info) && !info.finished() ? PodGroups::NativeKeyOf(info) : "";
    ReconsiderHold(groups_.TrackForeignPod(key, group, info.scheduler_name));
    ReconsiderHold(group);
    if (synced->second.job_key != job_before) ReconsiderHold(job_before);
    ReconsiderHold(synced->second.job_key);
  }
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

}  // namespace gantry

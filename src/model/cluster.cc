#include "model/cluster.h"

#include <algorithm>
#include <atomic>
#include <limits>

#include "model/device_backed.h"
#include "model/limits.h"
#include "model/task_devices.h"

namespace gantry {
namespace {

// Node::topology: the node's values of the topology levels' labels, "" where it has none.
void FillTopology(const std::vector<std::string>& keys, Node& node) {
  node.topology.clear();
  for (const std::string& key : keys) {
    const std::string* value = node.labels.Find(key);
    node.topology.push_back(value ? *value : "");
  }
}

// Device shares add up past 1000 only when something else overcommitted a device; they
// saturate rather than wrap.
int32_t SaturatingAdd32(int32_t a, int32_t b) {
  int32_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min();
}

bool AtLimit(int32_t v) {
  return v == std::numeric_limits<int32_t>::max() || v == std::numeric_limits<int32_t>::min();
}

bool AtLimit(int64_t v) {
  return v == std::numeric_limits<int64_t>::max() || v == std::numeric_limits<int64_t>::min();
}

}  // namespace

Interner& GpuModels() {
  static Interner* models = new Interner();
  return *models;
}

ClusterState::ClusterState()
    : topology_keys_{"topology.kubernetes.io/zone", "topology.gantry.dev/spine",
                     "topology.gantry.dev/rack"} {}

void ClusterState::SetTopologyKeys(std::vector<std::string> keys) {
  topology_keys_ = std::move(keys);
  for (Node& node : nodes_) FillTopology(topology_keys_, node);
}

Status ClusterState::PrepareNode(Node& node) {
  if (node.name.empty()) return Status::Invalid("node has no name");
  for (const auto& e : node.allocatable.entries()) {
    if (e.amount < 0) {
      return Status::Invalid("node \"" + node.name + "\": allocatable " + ResourceName(e.id) +
                             " is negative");
    }
  }
  if (node.gpus.size() > static_cast<size_t>(kMaxGpusPerNode)) {
    return Status::OutOfRange("node \"" + node.name + "\" has " + std::to_string(node.gpus.size()) +
                              " GPU devices; the limit is " + std::to_string(kMaxGpusPerNode));
  }
  node.allocatable.Set(kGpu, static_cast<Milli>(node.gpus.size()) * kGpuMilliWhole);
  GANTRY_RETURN_IF_ERROR(LayOutNodeMig(node));
  GANTRY_RETURN_IF_ERROR(LayOutNodeNuma(node));
  if (!node.cached_datasets.empty()) {
    Status st = NormalizeDatasetList(&node.cached_datasets, kMaxCachedDatasetsPerNode);
    if (!st.ok()) return st.WithPrefix("node \"" + node.name + "\": cached datasets");
  }
  FillTopology(topology_keys_, node);
  for (const GpuDevice& g : node.gpus) {
    auto same = std::find_if(largest_devices_.begin(), largest_devices_.end(),
                             [&](const GpuDevice& d) { return d.model == g.model; });
    if (same == largest_devices_.end()) {
      largest_devices_.push_back(g);
    } else if (g.memory_mib > same->memory_mib) {
      *same = g;
    }
  }
  return Status::Ok();
}

Result<NodeId> ClusterState::AddNode(Node node) {
  if (node_ids_.count(node.name))
    return Status::Invalid("node \"" + node.name + "\" is defined twice");
  if (totals_.live_nodes() >= static_cast<size_t>(kMaxNodes)) {
    return Status::OutOfRange("node \"" + node.name + "\": the cluster already has " +
                              std::to_string(kMaxNodes) + " nodes, the limit");
  }
  GANTRY_RETURN_IF_ERROR(PrepareNode(node));
  node.used = ResourceVector();
  node.task_count = 0;
  node.removed = false;
  for (GpuDevice& g : node.gpus) g.used_milli = 0, g.used_memory_mib = 0;
  node.shape_class = shape_classes_.Acquire(node);
  shape_classes_.CountNodeLabels(node, +1);
  totals_.Count(node, +1);
  NodeId id;
  if (!free_node_ids_.empty()) {
    id = free_node_ids_.back();
    free_node_ids_.pop_back();
    shape_classes_.Release(nodes_[id].shape_class);
    nodes_[id] = std::move(node);
    stamps_.Touch(id);
  } else {
    id = static_cast<NodeId>(nodes_.size());
    nodes_.push_back(std::move(node));
    tasks_on_node_.emplace_back();
    stamps_.AddSlot();
  }
  node_ids_.emplace(nodes_[id].name, id);
  return id;
}

void ClusterState::CountLabelKeys(const TaskSpec& spec, int sign) {
  for (NodeId id : shape_classes_.CountSpecLabelKeys(spec, sign, nodes_)) stamps_.Touch(id);
}

Result<QueueId> ClusterState::AddQueue(Queue queue) {
  if (queue.name.empty()) return Status::Invalid("queue has no name");
  if (queue_ids_.count(queue.name)) {
    return Status::Invalid("queue \"" + queue.name + "\" is defined twice");
  }
  if (queue.weight <= 0) {
    return Status::Invalid("queue \"" + queue.name + "\": weight must be positive");
  }
  if (!queue.guarantee.FitsInNamed(queue.capability)) {
    return Status::Invalid("queue \"" + queue.name + "\": guarantee (" +
                           queue.guarantee.ToString() + ") exceeds capability (" +
                           queue.capability.ToString() + ")");
  }
  if (!queue.deserved.FitsInNamed(queue.capability)) {
    return Status::Invalid("queue \"" + queue.name + "\": deserved (" + queue.deserved.ToString() +
                           ") exceeds capability (" + queue.capability.ToString() + ")");
  }
  if (queue.parent != kNone && queue.parent >= queues_.size()) {
    return Status::Invalid("queue \"" + queue.name + "\": parent id out of range");
  }
  queue.allocated = ResourceVector();
  auto id = static_cast<QueueId>(queues_.size());
  queue_ids_.emplace(queue.name, id);
  queues_.push_back(std::move(queue));
  return id;
}

SpecId ClusterState::AddSpec(TaskSpec spec) {
  FillMigResources(spec);
  CountLabelKeys(spec, +1);
  if (!spec.datasets.empty()) ++specs_with_datasets_;
  specs_.push_back(std::move(spec));
  return static_cast<SpecId>(specs_.size() - 1);
}

Result<JobId> ClusterState::AddJob(Job job) {
  if (job.name.empty()) return Status::Invalid("job has no name");
  if (job_ids_.count(job.name)) return Status::Invalid("job \"" + job.name + "\" is defined twice");
  if (job.queue >= queues_.size()) {
    return Status::Invalid("job \"" + job.name + "\": unknown queue");
  }
  if (job.min_member < 1) {
    return Status::Invalid("job \"" + job.name + "\": minMember must be at least 1");
  }
  if (Status valid = ValidateGroupTree(job.groups); !valid.ok()) {
    return Status::Invalid("job \"" + job.name + "\": " + valid.message());
  }
  if (!job.groups.empty()) job.min_member = MinimumTasks(job.groups);
  job.tasks.clear();
  job.running = 0;
  job.pending = 0;
  job.allocated = ResourceVector();
  JobId id;
  if (!free_job_ids_.empty()) {
    id = free_job_ids_.back();
    free_job_ids_.pop_back();
    jobs_[id] = std::move(job);
  } else {
    id = static_cast<JobId>(jobs_.size());
    jobs_.push_back(std::move(job));
  }
  job_ids_.emplace(jobs_[id].name, id);
  return id;
}

Result<TaskId> ClusterState::AddTask(JobId job, SpecId spec, std::string name) {
  if (job >= jobs_.size()) return Status::Invalid("task \"" + name + "\": unknown job");
  if (spec >= specs_.size()) return Status::Invalid("task \"" + name + "\": unknown spec");
  Task task;
  task.name = std::move(name);
  task.job = job;
  task.spec = spec;
  TaskId id;
  if (!free_task_ids_.empty()) {
    id = free_task_ids_.back();
    free_task_ids_.pop_back();
    tasks_[id] = std::move(task);
  } else {
    id = static_cast<TaskId>(tasks_.size());
    tasks_.push_back(std::move(task));
  }
  jobs_[job].tasks.push_back(id);
  jobs_[job].pending++;
  jobs_with_pending_.insert(job);
  return id;
}

int32_t ClusterState::EstimatedGpuShare(const GpuRequest& gpu) const {
  if (!gpu.shared()) return kGpuMilliWhole;
  // The largest device of an allowed model gives the smallest share, so the estimate
  // never exceeds what the task will take.
  int32_t best = kGpuMilliWhole;
  for (const GpuDevice& device : largest_devices_) {
    if (gpu.AllowsModel(device.model)) best = std::min(best, GpuShareOn(gpu, device));
  }
  return best;
}

ResourceVector ClusterState::Accounted(const TaskSpec& spec, int32_t n_gpus,
                                       int32_t gpu_milli_each) {
  ResourceVector out = spec.requests;
  if (n_gpus == 0 && spec.gpu.count > 0 && Backs(spec.device_backed, kGpu)) [[unlikely]] {
    // Placed on a node whose GPUs come from DRA (an extended-resource claim holds them, not
    // the node's GPU list): its GPUs count for its queue all the same, as whole ones.
    n_gpus = spec.gpu.count;
    gpu_milli_each = kGpuMilliWhole;
  }
  out.Set(kGpu, static_cast<Milli>(n_gpus) * gpu_milli_each);
  if (!spec.device_requests.empty()) [[unlikely]]
    out.Add(spec.device_requests);
  return out;
}

Status ClusterState::CheckPlacement(const Task& task, const Node& node,
                                    std::span<const int32_t> gpus, bool check_room, int32_t* share,
                                    int64_t* memory_each) const {
  const TaskSpec& spec = specs_[task.spec];
  std::string where = "task \"" + task.name + "\" on node \"" + node.name + "\"";
  // GPUs: the right number of distinct devices, each with room.
  size_t want = spec.gpu.shared() ? 1 : static_cast<size_t>(spec.gpu.count);
  // GPUs that a DRA driver serves on a node without GPU devices come from a claim.
  if (ServedByDraFor(spec.device_backed, kGpu, node)) [[unlikely]] {
    want = 0;
  }
  if (gpus.size() != want) {
    return Status::Invalid(where + ": needs " + std::to_string(want) + " GPU device(s), given " +
                           std::to_string(gpus.size()));
  }
  *share = 0;
  *memory_each = 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    int32_t index = gpus[i];
    if (index < 0 || static_cast<size_t>(index) >= node.gpus.size()) {
      return Status::Invalid(where + ": GPU index " + std::to_string(index) +
                             " out of range (node has " + std::to_string(node.gpus.size()) + ")");
    }
    for (size_t j = 0; j < i; ++j) {
      if (gpus[j] == index)
        return Status::Invalid(where + ": GPU " + std::to_string(index) + " given twice");
    }
    const GpuDevice& device = node.gpus[index];
    *share = GpuShareOn(spec.gpu, device);
    *memory_each = spec.gpu.shared() ? spec.gpu.memory_mib : 0;
    if (!check_room) continue;
    if (device.free_milli() < *share ||
        (*memory_each > 0 && device.memory_mib > 0 &&
         device.memory_mib - device.used_memory_mib < *memory_each)) {
      return Status::Invalid(where + ": GPU " + std::to_string(index) + " has no room");
    }
    if (!spec.gpu.AllowsModel(device.model)) {
      return Status::Invalid(where + ": GPU " + std::to_string(index) + " is a " +
                             GpuModels().Name(device.model) + ", not an allowed model");
    }
  }
  if (!check_room) return Status::Ok();
  ResourceVector free = node.allocatable;
  free.Subtract(node.used);
  int64_t over = spec.requests.FirstExceeding(free, /*named_only=*/false);
  if (over >= 0 && !spec.device_backed.empty()) [[unlikely]] {
    over = -1;
    for (const ResourceVector::Entry& e : spec.requests.entries()) {
      if (e.amount > free.Get(e.id) && !ServedByDraFor(spec.device_backed, e.id, node)) {
        over = e.id;
        break;
      }
    }
  }
  if (over >= 0) {
    return Status::Invalid(where + ": not enough " + ResourceName(static_cast<ResourceId>(over)));
  }
  return Status::Ok();
}

void ClusterState::Account(TaskId task_id, NodeId node_id, std::span<const int32_t> gpus,
                           int32_t share, int64_t memory_each) {
  Task& task = tasks_[task_id];
  Node& node = nodes_[node_id];
  ResourceVector accounted = Accounted(specs_[task.spec], static_cast<int32_t>(gpus.size()), share);
  for (int32_t index : gpus) {
    GpuDevice& device = node.gpus[index];
    device.used_milli = SaturatingAdd32(device.used_milli, share);
    device.used_memory_mib = SaturatingAdd(device.used_memory_mib, memory_each);
  }
  node.used.Add(accounted);
  node.task_count++;
  tasks_on_node_[node_id].push_back(task_id);
  stamps_.Touch(node_id);
  task.state = TaskState::kRunning;
  task.node = node_id;
  task.gpus.assign(gpus.begin(), gpus.end());
  task.gpu_milli_each = gpus.empty() ? 0 : share;
  task.gpu_memory_each = memory_each;
  TakeTaskMig(task_id, task, specs_[task.spec], node);
  TakeTaskNuma(task, specs_[task.spec], node);
  Job& job = jobs_[task.job];
  job.running++;
  job.pending--;
  job.allocated.Add(accounted);
  if (job.pending == 0) jobs_with_pending_.erase(task.job);
  queues_[job.queue].allocated.Add(accounted);
}

Status ClusterState::Place(TaskId task_id, NodeId node_id, std::span<const int32_t> gpus) {
  return PlaceChecked(task_id, node_id, gpus, /*check_room=*/true);
}

Status ClusterState::PlaceChecked(TaskId task_id, NodeId node_id, std::span<const int32_t> gpus,
                                  bool check_room) {
  if (task_id >= tasks_.size()) return Status::Invalid("unknown task");
  const Task& task = tasks_[task_id];
  if (task.state != TaskState::kPending) {
    return Status::Invalid("task \"" + task.name + "\" is not pending");
  }
  if (node_id >= nodes_.size()) return Status::Invalid("task \"" + task.name + "\": unknown node");
  int32_t share = 0;
  int64_t memory_each = 0;
  GANTRY_RETURN_IF_ERROR(
      CheckPlacement(task, nodes_[node_id], gpus, check_room, &share, &memory_each));
  Account(task_id, node_id, gpus, share, memory_each);
  return Status::Ok();
}

void ClusterState::Unaccount(TaskId task_id) {
  Task& task = tasks_[task_id];
  if (task.releasing) {
    task.releasing = false;
    releasing_tasks_.erase(task_id);
  }
  Node& node = nodes_[task.node];
  const TaskSpec& spec = specs_[task.spec];
  ResourceVector accounted =
      Accounted(spec, static_cast<int32_t>(task.gpus.size()), task.gpu_milli_each);
  const NodeId node_id = task.node;
  auto& on_node = tasks_on_node_[node_id];
  auto it = std::find(on_node.begin(), on_node.end(), task_id);
  *it = on_node.back();
  on_node.pop_back();
  GiveBackTaskNuma(task, spec, node);
  bool saturated = node.used.saturated();
  for (int32_t index : task.gpus) {
    saturated = saturated || AtLimit(node.gpus[index].used_milli) ||
                AtLimit(node.gpus[index].used_memory_mib);
  }
  if (saturated) {
    // A sum that saturated lost what was added past the limit: count again from the
    // tasks that remain (this one is off the node's list already).
    RecountNode(node_id);
  } else {
    for (int32_t index : task.gpus) {
      node.gpus[index].used_milli -= task.gpu_milli_each;
      node.gpus[index].used_memory_mib -= task.gpu_memory_each;
    }
    node.used.Subtract(accounted);
    node.task_count--;
  }
  stamps_.Touch(node_id);
  Job& job = jobs_[task.job];
  job.running--;
  // Sums that saturated lost what went past the limit: count those again.
  if (job.allocated.saturated()) {
    RecountJob(task.job, task_id);
  } else {
    job.allocated.Subtract(accounted);
  }
  if (queues_[job.queue].allocated.saturated()) {
    RecountQueue(job.queue, task_id);
  } else {
    queues_[job.queue].allocated.Subtract(accounted);
  }
  GiveBackTaskMig(task, node);
  task.node = kNone;
  task.gpus.clear();
  task.gpu_milli_each = 0;
  task.gpu_memory_each = 0;
  FreeNodeIfUnused(node_id);
}

void ClusterState::RecountNode(NodeId id) {
  Node& node = nodes_[id];
  node.used = ResourceVector();
  node.task_count = 0;
  for (GpuDevice& g : node.gpus) g.used_milli = 0, g.used_memory_mib = 0;
  for (TaskId t : tasks_on_node_[id]) {
    const Task& task = tasks_[t];
    for (int32_t index : task.gpus) {
      GpuDevice& device = node.gpus[index];
      device.used_milli = SaturatingAdd32(device.used_milli, task.gpu_milli_each);
      device.used_memory_mib = SaturatingAdd(device.used_memory_mib, task.gpu_memory_each);
    }
    node.used.Add(AccountedOf(task));
    node.task_count++;
  }
  RetakeNuma(id);
}

ResourceVector ClusterState::AccountedOf(const Task& task) const {
  return Accounted(specs_[task.spec], static_cast<int32_t>(task.gpus.size()), task.gpu_milli_each);
}

void ClusterState::RecountJob(JobId id, TaskId leaving) {
  Job& job = jobs_[id];
  job.allocated = ResourceVector();
  for (TaskId t : job.tasks) {
    if (t != leaving && tasks_[t].state == TaskState::kRunning)
      job.allocated.Add(AccountedOf(tasks_[t]));
  }
}

void ClusterState::RecountQueue(QueueId id, TaskId leaving) {
  Queue& queue = queues_[id];
  queue.allocated = ResourceVector();
  for (const Job& job : jobs_) {
    if (job.queue != id || job.name.empty()) continue;
    for (TaskId t : job.tasks) {
      if (t != leaving && tasks_[t].state == TaskState::kRunning) {
        queue.allocated.Add(AccountedOf(tasks_[t]));
      }
    }
  }
}

void ClusterState::Release(TaskId task_id) {
  Unaccount(task_id);
  tasks_[task_id].state = TaskState::kDone;
}

NodeId ClusterState::FindNode(std::string_view name) const {
  auto it = node_ids_.find(std::string(name));
  return it == node_ids_.end() ? kNone : it->second;
}

QueueId ClusterState::FindQueue(std::string_view name) const {
  auto it = queue_ids_.find(std::string(name));
  return it == queue_ids_.end() ? kNone : it->second;
}

JobId ClusterState::FindJob(std::string_view name) const {
  auto it = job_ids_.find(std::string(name));
  return it == job_ids_.end() ? kNone : it->second;
}

void ClusterState::SetNamespaceLabels(const std::string& ns, Labels labels) {
  namespace_labels_[ns] = std::move(labels);
}

const Labels& ClusterState::namespace_labels(const std::string& ns) const {
  auto it = namespace_labels_.find(ns);
  return it == namespace_labels_.end() ? no_labels_ : it->second;
}

}  // namespace gantry

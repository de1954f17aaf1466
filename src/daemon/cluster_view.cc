#include "daemon/cluster_view.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "daemon/cluster_cache.h"
#include "engine/fragmentation.h"
#include "model/mig.h"

namespace gantry {
namespace {

constexpr double kWindowS = 60;  // health's rates and means

double Gpus(const ResourceVector& v) {
  return static_cast<double>(v.Get(kGpu)) / kGpuMilliWhole;
}

// The daemon names jobs "pod|ns/name" (a pod alone), "vc|ns/group" and "xk|ns/group"
// (Volcano's and the coscheduling plugin's PodGroups): the page shows the kind apart.
std::pair<std::string, std::string> KindAndName(const std::string& job) {
  const size_t bar = job.find('|');
  if (bar == std::string::npos) return {"job", job};
  const std::string_view prefix(job.data(), bar);
  return {prefix == "pod" ? "pod" : "podgroup", job.substr(bar + 1)};
}

// What a job's pending tasks ask for, as their queue would count them once placed.
ResourceVector PendingRequests(const ClusterState& state, const Job& job) {
  ResourceVector out;
  for (TaskId t : job.tasks) {
    const Task& task = state.task(t);
    if (task.state != TaskState::kPending) continue;
    const TaskSpec& spec = state.spec(task.spec);
    const int32_t devices = spec.gpu.wants_gpu() ? std::max(spec.gpu.count, 1) : 0;
    const int32_t each = spec.gpu.wants_gpu() ? state.EstimatedGpuShare(spec.gpu) : 0;
    out.Add(ClusterState::Accounted(spec, devices, each));
  }
  return out;
}

// "1g.10gb" from a single-strategy device's product, "NVIDIA-A100-SXM4-40GB-MIG-1g.10gb".
std::string SingleMigProfile(const std::string& product) {
  const size_t at = product.rfind("-MIG-");
  return at == std::string::npos ? product : product.substr(at + 5);
}

GpuCellView MigCell(std::vector<MigDeviceView> devices) {
  GpuCellView cell;
  cell.state = GpuCellState::kMig;
  int32_t used = 0;
  for (const MigDeviceView& d : devices) used += d.used ? 1 : 0;
  if (!devices.empty()) {
    cell.used_milli =
        static_cast<int32_t>(kGpuMilliWhole * used / static_cast<int32_t>(devices.size()));
  }
  cell.mig = std::move(devices);
  return cell;
}

// The free share of a GPU that only fractions or small MIG devices can use.
int64_t FragmentedMilli(const GpuCellView& cell) {
  switch (cell.state) {
    case GpuCellState::kFragmented:
      return kGpuMilliWhole - cell.used_milli;
    case GpuCellState::kMig:
      return cell.used_milli > 0 ? kGpuMilliWhole - cell.used_milli : 0;
    default:
      return 0;
  }
}

NodeView ViewOf(const ClusterState& state, NodeId id, const FragmentationMeasure* measure) {
  const Node& node = state.node(id);
  NodeView view;
  view.name = node.name;
  view.unschedulable = node.unschedulable;
  view.cpu_allocatable = node.allocatable.Get(kCpu);
  view.cpu_used = node.used.Get(kCpu);
  view.tasks = node.task_count;
  view.gpu_used_milli = node.used.Get(kGpu);
  if (!node.gpus.empty()) {
    view.gpu_model = GpuModels().Name(node.gpus.front().model);
  } else if (node.mig.strategy != MigStrategy::kNone) {
    // All its GPUs are cut into MIG devices: the product says which GPUs.
    if (const std::string* product = node.labels.Find("nvidia.com/gpu.product")) {
      view.gpu_model = *product;
    }
  }
  if (node.mig.strategy == MigStrategy::kSingle) {
    // The devices are MIG devices, those of one GPU in one NVLink domain (cluster_mig.cc).
    std::vector<MigDeviceView> devices;
    for (size_t i = 0; i < node.gpus.size(); ++i) {
      const GpuDevice& d = node.gpus[i];
      devices.push_back({SingleMigProfile(GpuModels().Name(d.model)), d.used_milli > 0});
      if (i + 1 == node.gpus.size() || node.gpus[i + 1].nvlink_domain != d.nvlink_domain) {
        view.gpus.push_back(MigCell(std::exchange(devices, {})));
      }
    }
  } else {
    // Whole or shared: a device is shared when a task takes a fraction of it.
    std::vector<bool> shared(node.gpus.size(), false);
    for (TaskId t : state.tasks_on(id)) {
      const Task& task = state.task(t);
      if (task.gpu_milli_each >= kGpuMilliWhole) continue;
      for (int32_t g : task.gpus) {
        if (g >= 0 && static_cast<size_t>(g) < shared.size()) shared[static_cast<size_t>(g)] = true;
      }
    }
    for (size_t i = 0; i < node.gpus.size(); ++i) {
      GpuCellView cell;
      cell.used_milli = std::min(node.gpus[i].used_milli, kGpuMilliWhole);
      if (cell.used_milli == 0) {
        cell.state = GpuCellState::kFree;
      } else if (!shared[i]) {
        cell.state = GpuCellState::kWhole;
      } else {
        cell.state =
            cell.used_milli < kGpuMilliWhole ? GpuCellState::kFragmented : GpuCellState::kShared;
      }
      view.gpus.push_back(std::move(cell));
    }
    // Mixed strategy: the GPUs cut into MIG devices, after the whole ones.
    for (int32_t g = 0; g < node.mig.gpus; ++g) {
      std::vector<MigDeviceView> devices;
      for (const MigDevice& d : node.mig.devices) {
        if (d.gpu != g) continue;
        devices.push_back({std::string(MigProfileOfResource(ResourceName(d.resource))),
                           d.holder != kNoMigHolder});
      }
      view.gpus.push_back(MigCell(std::move(devices)));
    }
  }
  for (const GpuCellView& cell : view.gpus) view.fragmented_milli += FragmentedMilli(cell);
  if (measure != nullptr && !node.gpus.empty()) {
    std::vector<int32_t> free_milli;
    free_milli.reserve(node.gpus.size());
    for (const GpuDevice& d : node.gpus) free_milli.push_back(std::max(d.free_milli(), 0));
    view.fgd_milli = std::llround(measure->CachedNodeFragmentation(
        view.cpu_allocatable - view.cpu_used, node.gpus.front().model, free_milli));
  }
  return view;
}

template <typename T>
void TrimWindow(std::deque<std::pair<double, T>>& samples, double now_s) {
  while (!samples.empty() && samples.front().first < now_s - kWindowS) samples.pop_front();
}

}  // namespace

std::string_view GpuCellStateName(GpuCellState state) {
  switch (state) {
    case GpuCellState::kFree:
      return "free";
    case GpuCellState::kWhole:
      return "whole";
    case GpuCellState::kShared:
      return "shared";
    case GpuCellState::kFragmented:
      return "fragmented";
    case GpuCellState::kMig:
      return "mig";
  }
  return "free";
}

void ClusterViewBoard::Publish(std::shared_ptr<const ClusterView> view) {
  std::lock_guard<std::mutex> lock(mu_);
  view_ = std::move(view);
}

std::shared_ptr<const ClusterView> ClusterViewBoard::Latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return view_;
}

void ClusterViewBuilder::NoteCycle(const ClusterState& state, const Decisions& decisions,
                                   double seconds, double now_s) {
  // By name: ids of jobs and queues that go are given to new ones.
  reasons_.clear();
  for (const PendingJob& p : decisions.pending) reasons_[state.job(p.job).name] = p.reason;
  deserved_.clear();
  for (size_t q = 0; q < decisions.deserved.size() && q < state.queues().size(); ++q) {
    deserved_[state.queue(static_cast<QueueId>(q)).name] = decisions.deserved[q];
  }
  health_.cycles++;
  health_.last_cycle_s = seconds;
  cycle_times_.emplace_back(now_s, seconds);
  TrimWindow(cycle_times_, now_s);
}

void ClusterViewBuilder::NoteBind(bool ok, const std::string& failure_reason) {
  if (ok) {
    health_.binds_total++;
  } else {
    health_.bind_failures_total++;
    health_.bind_failures_by_reason[failure_reason]++;
  }
}

void ClusterViewBuilder::NoteEviction(EvictionView eviction) {
  if (eviction.result == "evicted") health_.evictions_total++;
  evictions_.push_back(std::move(eviction));
  if (evictions_.size() > kRecentEvictions) evictions_.pop_front();
}

void ClusterViewBuilder::AddNodes(const ClusterState& state, ClusterView& view) {
  // The engine's measure, made when a node changed and the cluster has a profile.
  std::unique_ptr<FragmentationMeasure> measure;
  auto measure_now = [&]() -> const FragmentationMeasure* {
    if (!measure && !state.workload_profile().types.empty()) {
      measure = std::make_unique<FragmentationMeasure>(state.workload_profile(), 0.95);
    }
    return measure.get();
  };
  const int64_t profile_total = state.workload_profile().total;
  if (profile_total != profile_total_) {  // the fgd values are the profile's
    nodes_.clear();
    profile_total_ = profile_total;
  }
  // Views of the nodes whose stamp moved; the order again when one came, went, or changed
  // its name or topology path.
  bool reorder = nodes_.size() != state.nodes().size();
  nodes_.resize(state.nodes().size());
  for (NodeId id = 0; id < state.nodes().size(); ++id) {
    const Node& node = state.node(id);
    CachedNode& cached = nodes_[id];
    if (node.removed) {
      reorder = reorder || cached.view != nullptr;
      cached.view.reset();
      continue;
    }
    if (cached.view && cached.stamp == state.node_stamp(id)) continue;
    reorder = reorder || !cached.view || cached.view->name != node.name ||
              cached.topology != node.topology;
    cached.stamp = state.node_stamp(id);
    cached.topology = node.topology;
    cached.view = std::make_shared<const NodeView>(ViewOf(state, id, measure_now()));
  }
  if (reorder) {
    order_.clear();
    for (NodeId id = 0; id < nodes_.size(); ++id) {
      if (nodes_[id].view) order_.push_back(id);
    }
    std::sort(order_.begin(), order_.end(), [&](NodeId a, NodeId b) {
      const CachedNode& x = nodes_[a];
      const CachedNode& y = nodes_[b];
      return x.topology != y.topology ? x.topology < y.topology : x.view->name < y.view->name;
    });
  }
  for (NodeId id : order_) {
    const CachedNode& cached = nodes_[id];
    if (view.domains.empty() || view.domains.back().path != cached.topology) {
      view.domains.push_back({cached.topology, {}});
    }
    const NodeView& n = *cached.view;
    view.gpus += static_cast<int64_t>(n.gpus.size());
    view.gpus_allocated += static_cast<double>(n.gpu_used_milli) / kGpuMilliWhole;
    for (const GpuCellView& cell : n.gpus) view.gpus_free += cell.state == GpuCellState::kFree;
    view.fragmented_milli += n.fragmented_milli;
    view.domains.back().nodes.push_back(cached.view);
  }
  health_.nodes = static_cast<int64_t>(order_.size());
}

void ClusterViewBuilder::NoteDraDevices(
    std::map<std::string, std::vector<DeviceClaims::NodeDevice>> devices) {
  if (devices.empty()) {
    dra_devices_.reset();
  } else if (!dra_devices_ || *dra_devices_ != devices) {
    dra_devices_ =
        std::make_shared<const std::map<std::string, std::vector<DeviceClaims::NodeDevice>>>(
            std::move(devices));
  }
}

std::shared_ptr<const ClusterView> ClusterViewBuilder::Build(const ClusterState& state,
                                                             double now_s) {
  auto view = std::make_shared<ClusterView>();
  const auto now = static_cast<int64_t>(now_s);
  view->time = now;
  view->topology_keys = state.topology_keys();

  AddNodes(state, *view);
  view->dra_devices = dra_devices_;

  // Queues, and the jobs waiting in them.
  std::vector<QueueView> queues(state.queues().size());
  std::vector<bool> ours(state.queues().size(), true);
  for (QueueId q = 0; q < state.queues().size(); ++q) {
    const Queue& queue = state.queue(q);
    ours[q] = queue.name != kOtherSchedulersQueue;
    QueueView& v = queues[q];
    v.name = queue.name;
    if (queue.parent != kNone) v.parent = state.queue(queue.parent).name;
    v.weight = queue.weight;
    v.allocated = queue.allocated;
    if (auto it = deserved_.find(queue.name); it != deserved_.end()) {
      v.has_deserved = true;
      v.deserved = it->second;
    }
  }
  for (const Job& job : state.jobs()) {
    if (job.queue < queues.size() && !job.tasks.empty())
      queues[job.queue].running_tasks += job.running;
  }
  std::vector<PendingView> pending;
  health_.pending_tasks = 0;
  for (JobId id : state.jobs_with_pending()) {
    const Job& job = state.job(id);
    if (job.queue >= queues.size() || !ours[job.queue]) continue;
    QueueView& q = queues[job.queue];
    ResourceVector asks = PendingRequests(state, job);
    q.pending.Add(asks);
    q.pending_jobs++;
    q.pending_tasks += job.pending;
    auto [kind, name] = KindAndName(job.name);
    // The last cycle's reason; none yet for a job that came after it.
    auto reason = reasons_.find(job.name);
    pending.push_back({std::move(kind), std::move(name), q.name, job.priority, job.pending,
                       job.running, job.min_member, job.submitted, std::move(asks),
                       reason == reasons_.end() ? "" : reason->second});
  }
  view->pending_jobs = static_cast<int64_t>(pending.size());
  for (const PendingView& p : pending) health_.pending_tasks += p.pending_tasks;
  std::sort(pending.begin(), pending.end(), [](const PendingView& a, const PendingView& b) {
    return a.submitted != b.submitted ? a.submitted < b.submitted : a.name < b.name;
  });
  if (pending.size() > kMaxPendingShown) pending.resize(kMaxPendingShown);
  for (QueueId q = 0; q < queues.size(); ++q) {
    if (ours[q]) view->queues.push_back(std::move(queues[q]));
  }
  std::sort(view->queues.begin(), view->queues.end(),
            [](const QueueView& a, const QueueView& b) { return a.name < b.name; });
  view->pending = std::move(pending);

  Sample(*view, now);
  view->history = history_;
  view->evictions.assign(evictions_.rbegin(), evictions_.rend());

  bind_counts_.emplace_back(now_s, health_.binds_total);
  TrimWindow(bind_counts_, now_s);
  TrimWindow(cycle_times_, now_s);
  view->health = health_;
  if (bind_counts_.size() >= 2 && bind_counts_.back().first > bind_counts_.front().first) {
    view->health.binds_per_s =
        static_cast<double>(bind_counts_.back().second - bind_counts_.front().second) /
        (bind_counts_.back().first - bind_counts_.front().first);
  }
  if (!cycle_times_.empty()) {
    double sum = 0;
    for (const auto& [when, seconds] : cycle_times_) {
      sum += seconds;
      view->health.max_cycle_s = std::max(view->health.max_cycle_s, seconds);
    }
    view->health.mean_cycle_s = sum / static_cast<double>(cycle_times_.size());
  }
  return view;
}

void ClusterViewBuilder::Sample(const ClusterView& view, int64_t now) {
  if (history_ && now - last_sample_ < kQueueSampleEveryS) return;
  last_sample_ = now;
  std::map<std::string, std::deque<QueueSample>> kept;
  for (const QueueView& q : view.queues) {
    std::deque<QueueSample>& samples = kept[q.name];
    if (auto it = samples_.find(q.name); it != samples_.end()) samples = std::move(it->second);
    samples.push_back(
        {now, q.has_deserved ? Gpus(q.deserved) : -1, Gpus(q.allocated), Gpus(q.pending)});
    if (samples.size() > kQueueHistorySamples) samples.pop_front();
  }
  samples_ = std::move(kept);  // a queue gone is forgotten
  auto history = std::make_shared<std::map<std::string, std::vector<QueueSample>>>();
  for (const auto& [name, samples] : samples_) {
    (*history)[name] = std::vector<QueueSample>(samples.begin(), samples.end());
  }
  history_ = std::move(history);
}

}  // namespace gantry

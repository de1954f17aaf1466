#include "daemon/scheduler.h"

#include <chrono>
#include <cstdio>

#include "engine/explain.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "engine/snapshot.h"

namespace gantry {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double SteadySeconds() {
  return static_cast<double>(SteadyNanos()) / 1e9;
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

template <typename T>
T MustRegister(Result<T> r) {
  // The names below are constants: a failure is a programming error caught by any run.
  if (!r.ok()) {
    std::fprintf(stderr, "gantry: metrics: %s\n", r.status().message().c_str());
    std::abort();
  }
  return *r;
}

// How long a burst of watch events may gather before a cycle runs on them.
constexpr auto kCoalesce = std::chrono::milliseconds(5);
// /api/explain's index: rebuilt at most this often, for at most this many pending jobs
// (in job id order); a job beyond them is answered with its reason alone.
constexpr double kExplainEverySeconds = 1.0;
constexpr size_t kExplainedJobsPerCycle = 500;

}  // namespace

Scheduler::Scheduler(DaemonConfig config, Policy policy, k8s::Client& client,
                     MetricsRegistry& metrics, std::string identity)
    : config_(std::move(config)),
      policy_(std::move(policy)),
      client_(client),
      identity_(std::move(identity)),
      cache_(config_.scheduler_name) {
  cache_.set_volume_bind_timeout(config_.volume_bind_timeout_s);
  cache_.set_device_binding_timeout(config_.device_binding_timeout_s);
  if (!config_.topology_keys.empty()) cache_.SetTopologyKeys(config_.topology_keys);
  cache_.SetProfileHalfLife(config_.workload_profile_half_life_s);
  cache_.SetDeviceClassResources(config_.device_class_resources);
  const std::vector<double> seconds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                       0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  m_.cycle_seconds = MustRegister(metrics.AddHistogram(
      "gantry_cycle_duration_seconds",
      "Time to run one scheduling cycle (engine session and bookkeeping).", seconds));
  m_.scheduled =
      MustRegister(metrics.AddCounter("gantry_pods_scheduled_total", "Pods bound by gantry."));
  m_.bind_failures = MustRegister(metrics.AddCounter(
      "gantry_bind_failures_total", "Binds the API server refused or that failed.", {"reason"}));
  m_.unschedulable = MustRegister(
      metrics.AddCounter("gantry_pods_unschedulable_total",
                         "Times a pending pod was reported unschedulable with a new reason."));
  m_.bind_seconds = MustRegister(
      metrics.AddHistogram("gantry_bind_duration_seconds",
                           "Time from a bind's start to the API server's answer.", seconds));
  m_.pending_by_queue = MustRegister(
      metrics.AddGauge("gantry_pending_pods", "Pods of gantry waiting to be placed.", {"queue"}));
  m_.queue_allocated = MustRegister(metrics.AddGauge(
      "gantry_queue_allocated", "Resources held by a queue's running pods (GPUs in whole devices).",
      {"queue", "resource"}));
  m_.queue_deserved = MustRegister(metrics.AddGauge(
      "gantry_queue_deserved", "A queue's fair share as the proportion plugin computed it.",
      {"queue", "resource"}));
  m_.gpus_allocated = MustRegister(metrics.AddGauge(
      "gantry_gpus_allocated", "GPUs allocated to running pods (fractions summed)."));
  m_.gpus_capacity =
      MustRegister(metrics.AddGauge("gantry_gpus_capacity", "GPUs on schedulable nodes."));
  m_.leader =
      MustRegister(metrics.AddGauge("gantry_leader", "1 while this replica is the leader."));
  m_.nodes = MustRegister(metrics.AddGauge("gantry_nodes", "Nodes known to the scheduler."));
  m_.events_dropped = MustRegister(
      metrics.AddGauge("gantry_normal_events_dropped",
                       "Normal events (Scheduled) not written because of their rate limit."));
  m_.evictions = MustRegister(metrics.AddCounter(
      "gantry_evictions_total",
      "Evictions gantry asked for, by the API server's answer (evicted, refused: a "
      "PodDisruptionBudget allows none now, retried by a later cycle; not_found, failed) and "
      "by cause (preempt, reclaim, defragment).",
      {"result", "cause"}));
  // Every label value known in advance is exported from the start, at 0: rate() and
  // increase() then see the first failure or eviction, and the dashboard shows 0, not no data.
  for (const char* reason : {"unavailable", "conflict", "not_found", "forbidden", "invalid",
                             "server_error", "other", "volumes"}) {
    (void)m_.bind_failures->With({reason});
  }
  for (const char* result : {"evicted", "refused", "not_found", "failed"}) {
    for (EvictionCause cause :
         {EvictionCause::kPreempt, EvictionCause::kReclaim, EvictionCause::kDefragment}) {
      (void)m_.evictions->With({result, std::string(EvictionCauseName(cause))});
    }
  }
  dashboard_ = MustRegister(DashboardMetrics::Register(metrics));
  // Pods are given default spreading's selector only when the engine will use it.
  bool default_spreading = false;
  for (const PluginConfig& plugin : config_.engine.plugins) {
    if (plugin.name == "podtopologyspread") {
      default_spreading = default_spreading || PodTopologySpreadHasDefaults(plugin);
    }
  }
  cache_.EnableDefaultSpreading(default_spreading);
  writer_ = std::make_unique<ApiWriter>(
      client_, config_.bind_workers, identity_, [this](BindResult r) { Push(std::move(r)); },
      GangBindingAnnotations(config_.autoscaler));
  heartbeat_ns_ = SteadyNanos();
}

Scheduler::~Scheduler() {
  for (std::thread& t : informer_threads_) {
    if (t.joinable()) t.join();
  }
}

void Scheduler::SetLeader(bool leader) {
  leader_ = leader;
  m_.leader->Set(leader ? 1 : 0);
  std::lock_guard<std::mutex> lock(mu_);
  dirty_ = true;
  cv_.notify_one();
}

bool Scheduler::synced() const {
  for (const auto& informer : informers_) {
    if (!informer->synced()) return false;
  }
  return !informers_.empty();
}

bool Scheduler::alive() const {
  double period_ns = std::max(config_.schedule_period_s, 1.0) * 1e9;
  return static_cast<double>(SteadyNanos() - heartbeat_ns_.load()) < 10 * period_ns + 30e9;
}

void Scheduler::PublishViews(ClusterViewBoard* board) {
  view_board_ = board;
  view_ = board != nullptr ? std::make_unique<ClusterViewBuilder>() : nullptr;
}

void Scheduler::PublishView() {
  auto started = std::chrono::steady_clock::now();
  view_->NoteLeader(leader_.load());
  view_->NoteDraDevices(cache_.devices().DevicesByNode());
  view_board_->Publish(view_->Build(cache_.state(), WallSeconds()));
  view_->NoteViewBuild(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

void Scheduler::Push(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(std::move(item));
  }
  cv_.notify_one();
}

void Scheduler::Apply(Item& item) {
  if (auto* w = std::get_if<WatchItem>(&item)) {
    ApplyWatchObject(cache_, w->kind, w->type, w->object);
    return;
  }
  if (auto* e = std::get_if<EvictResult>(&item)) {
    ApplyEviction(*e);
    return;
  }
  if (auto* v = std::get_if<VolumeWriteResult>(&item)) {
    if (!v->ok) {
      (void)m_.bind_failures->With({"volumes"}).Inc();
      if (view_) view_->NoteBind(false, "volumes");
      std::fprintf(stderr, "gantry: volume binding for %s/%s failed: %s\n", v->namespace_.c_str(),
                   v->name.c_str(), v->error.c_str());
    }
    cache_.VolumeWritesDone(*v, SteadySeconds());
    return;
  }
  BindResult& r = std::get<BindResult>(item);
  // Claims written, the bind waits for their devices' binding conditions: not a bind yet.
  if (r.ok && r.waiting) {
    cache_.BindingConditionsPending(r.request, SteadySeconds());
    return;
  }
  m_.bind_seconds->Observe(r.latency_s);
  if (view_) view_->NoteBind(r.ok, r.ok ? "" : r.Reason());
  if (r.ok) {
    (void)m_.scheduled->Inc();
    writer_->WriteEvent({"v1", "Pod", r.request.namespace_, r.request.name, r.request.uid, "Normal",
                         "Scheduled",
                         "Successfully assigned " + r.request.namespace_ + "/" + r.request.name +
                             " to " + r.request.node});
    return;
  }
  (void)m_.bind_failures->With({r.Reason()}).Inc();
  std::fprintf(stderr, "gantry: bind %s/%s to %s failed: %s\n", r.request.namespace_.c_str(),
               r.request.name.c_str(), r.request.node.c_str(), r.error.c_str());
  // A conflict usually means the pod is bound already: the watch will say where. Either
  // way the assumption goes; the pod is placed again, if it is still pending, once its
  // backoff ends (it doubles with each failure in a row: a refusal that retrying will not
  // change costs the API server a request a minute, not one a cycle).
  const double backoff =
      cache_.BindFailed(r.request.namespace_, r.request.name, r.request.uid, SteadySeconds());
  if (backoff > 0) {
    char retry[32];
    std::snprintf(retry, sizeof retry, "%.0f", backoff);
    writer_->WriteEvent({"v1", "Pod", r.request.namespace_, r.request.name, r.request.uid,
                         "Warning", "FailedBinding",
                         "binding to " + r.request.node + " failed (" + r.Reason() +
                             "): " + r.error + "; retrying in " + retry + "s"});
  }
}

void Scheduler::ApplyEviction(const EvictResult& r) {
  const EvictRequest& e = r.request;
  (void)m_.evictions->With({r.Result(), std::string(EvictionCauseName(e.cause))}).Inc();
  const bool first_refusal = cache_.EvictionDone(e, r.ok);
  // A refusal is retried every cycle: the page lists the first of a run of them.
  if (view_ && (!r.refused || first_refusal)) {
    view_->NoteEviction({static_cast<int64_t>(WallSeconds()), e.namespace_ + "/" + e.name,
                         std::string(EvictionCauseName(e.cause)), r.Result(), e.reason});
  }
  if (r.ok) {
    // A moved pod is not preempted: its controller makes it again, and room waits for it.
    const char* reason = e.cause == EvictionCause::kDefragment ? "Defragmented" : "Preempted";
    writer_->WriteEvent({"v1", "Pod", e.namespace_, e.name, e.uid, "Normal", reason, e.reason});
    return;
  }
  std::fprintf(stderr, "gantry: evicting %s/%s failed: %s\n", e.namespace_.c_str(), e.name.c_str(),
               r.error.c_str());
  // A refusal by a PodDisruptionBudget is retried by a later cycle, when the engine still
  // chooses the pod: said once per run of refusals, not every cycle.
  if (r.refused && first_refusal) {
    writer_->WriteEvent({"v1", "Pod", e.namespace_, e.name, e.uid, "Warning", "EvictionRefused",
                         "gantry could not evict it (" + e.reason + "): " + r.error +
                             "; retrying in a later cycle"});
  }
}

void Scheduler::RunCycle() {
  auto started = std::chrono::steady_clock::now();
  usage_memory_.Advance(cache_.state(), SteadySeconds());
  SessionOptions options;
  options.now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  // The shapes that arrived, for the scorers that pack against the workload (fgd, gantry).
  cache_.state().SetWorkloadProfile(cache_.ProfileAt(static_cast<double>(options.now)));
  // DRA's devices and claims, as the cache holds them with the allocations assumed (first:
  // a changed inventory updates the nodes and pods).
  DeviceInputs devices = cache_.DeviceInputsForSession();
  devices.align_by = &config_.device_alignment_attributes;
  Snapshot snapshot(cache_.state(), &node_table_);
  snapshot.set_devices(devices);
  options.seed = seed_++;
  // Explanations (for /api/explain) at most once a second: they cost a search per task of
  // the jobs they explain.
  // Only for a page that serves them.
  const bool explain =
      !config_.page_address.empty() &&
      (explained_at_ < 0 || SteadySeconds() - explained_at_ >= kExplainEverySeconds);
  Decisions decisions;
  std::vector<PendingExplanation> explanations;
  {
    Session session(snapshot, policy_, options);
    decisions = session.Run();
    if (explain) explanations = ExplainPending(session, decisions, kExplainedJobsPerCycle);
  }
  pending_kinds_.clear();
  for (const PendingJob& p : decisions.pending)
    pending_kinds_[p.job] = ClassifyPendingReason(p.reason);
  for (const PipelineDecision& p : decisions.pipelined) {
    pending_kinds_.try_emplace(p.job, PendingKind::kPreempting);
  }
  std::vector<BindRequest> binds = cache_.Assume(decisions, SteadySeconds());
  for (BindRequest& b : binds) writer_->Bind(std::move(b));
  for (EvictRequest& e : cache_.TakeEvictions(decisions, options.now)) {
    writer_->Evict(std::move(e), [this](EvictResult r) { Push(std::move(r)); });
  }
  for (NominatedNode& n : cache_.Nominations(decisions)) writer_->WriteNominatedNode(std::move(n));
  SendVolumeWork();
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  cache_.CollectStatus(decisions, &conditions, &groups, &events);
  if (explain) {
    explain_board_.Publish(
        BuildExplainIndex(cache_.state(), decisions, explanations, config_.scheduler_name));
    explained_at_ = SteadySeconds();
  }
  if (!conditions.empty()) (void)m_.unschedulable->Inc(static_cast<double>(conditions.size()));
  for (PodCondition& c : conditions) writer_->WriteCondition(std::move(c));
  for (GroupStatus& g : groups) writer_->WriteGroupStatus(std::move(g));
  for (ObjectEvent& e : events) writer_->WriteEvent(std::move(e));
  if (!decisions.deserved.empty()) {
    std::vector<std::pair<LabelValues, double>> deserved;
    for (size_t q = 0; q < decisions.deserved.size() && q < cache_.state().queues().size(); ++q) {
      const std::string& name = cache_.state().queue(static_cast<QueueId>(q)).name;
      if (name == kOtherSchedulersQueue) continue;
      for (const auto& e : decisions.deserved[q].entries()) {
        deserved.push_back({{name, ResourceName(e.id)}, static_cast<double>(e.amount) / 1000.0});
      }
    }
    (void)m_.queue_deserved->Replace(deserved);
  }
  cycles_++;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  m_.cycle_seconds->Observe(seconds);
  if (view_) view_->NoteCycle(cache_.state(), decisions, seconds, WallSeconds());
}

void Scheduler::SendVolumeWork() {
  for (VolumeWrites& w : cache_.TakeVolumeWrites()) {
    writer_->WriteVolumes(std::move(w), [this](VolumeWriteResult r) { Push(std::move(r)); });
  }
  for (BindRequest& b : cache_.TakeReadyBinds()) writer_->Bind(std::move(b));
  for (BindRequest& r : cache_.TakeClaimReleases()) writer_->ReleaseClaims(std::move(r));
  // Found by every replica as it resolves pods (each at most once), deleted by the leader.
  if (!leader_.load()) return;
  if (std::vector<ClaimWrite> left = cache_.TakeLeftClaimDeletes(SteadySeconds()); !left.empty()) {
    writer_->DeleteLeftClaims(std::move(left));
  }
}

void Scheduler::PublishGauges() {
  const ClusterState& state = cache_.state();
  std::vector<std::pair<LabelValues, double>> pending;
  for (const auto& [queue, n] : PendingPodsByQueue(state))
    pending.push_back({{queue}, static_cast<double>(n)});
  (void)m_.pending_by_queue->Replace(pending);
  std::vector<std::pair<LabelValues, double>> allocated;
  for (const Queue& q : state.queues()) {
    for (const auto& e : q.allocated.entries()) {
      double amount = static_cast<double>(e.amount) / 1000.0;
      allocated.push_back({{q.name, ResourceName(e.id)}, amount});
    }
  }
  (void)m_.queue_allocated->Replace(allocated);
  // Removed nodes are left out: only nodes in the cluster now are reported.
  const NodeCounts counts = CountNodes(state);
  m_.gpus_allocated->Set(static_cast<double>(counts.gpus_allocated) / 1000.0);
  m_.gpus_capacity->Set(static_cast<double>(counts.gpus_capacity) / 1000.0);
  m_.nodes->Set(static_cast<double>(counts.nodes));
  m_.events_dropped->Set(static_cast<double>(writer_->events_dropped()));
  dashboard_->PublishGpus(state);
  dashboard_->PublishDra(cache_.devices().CountDevices());
  dashboard_->PublishPending(cache_.PendingPodsByKind(pending_kinds_));
}

std::vector<std::string> Scheduler::WatchedCollections() {
  std::vector<std::string> out;
  for (const WatchSource& s : WatchSources()) out.push_back(s.path);
  return out;
}

void Scheduler::Run(const std::atomic<bool>& stop) {
  for (const WatchSource& s : WatchSources()) {
    WatchKind kind = s.kind;
    informers_.push_back(std::make_unique<k8s::Informer>(
        client_, s.path, [this, kind](k8s::EventType type, nlohmann::json object) {
          Push(WatchItem{kind, type, std::move(object)});
        }));
  }
  for (auto& informer : informers_) {
    k8s::Informer* inf = informer.get();
    informer_threads_.emplace_back([inf, &stop] { inf->Run(stop); });
  }

  auto period = std::chrono::duration<double>(config_.schedule_period_s);
  auto last_cycle = std::chrono::steady_clock::now();
  auto last_gauges = last_cycle - std::chrono::seconds(1);
  std::deque<Item> batch;
  while (!stop.load()) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(100),
                   [&] { return !items_.empty() || stop.load(); });
    }
    if (stop.load()) break;
    // Let a burst gather, so that a cycle sees all of it.
    std::this_thread::sleep_for(kCoalesce);
    // Read before draining: an informer marks itself synced after queueing its whole
    // first list, so this batch then holds all of it. (Read after, a list finishing in
    // between would let a cycle run on half of it.)
    const bool synced_before = synced();
    {
      std::lock_guard<std::mutex> lock(mu_);
      batch.swap(items_);
      if (!batch.empty()) dirty_ = true;
    }
    for (Item& item : batch) Apply(item);
    batch.clear();
    if (cache_.ReleaseHeld(SteadySeconds()) > 0) dirty_ = true;
    // Pods whose delayed claims are now bound are bound; those whose binding failed or
    // timed out are placed again after their backoff.
    if (cache_.ExpireVolumeBindings(SteadySeconds()) > 0) dirty_ = true;
    // Likewise pods waiting for their devices' binding conditions.
    std::vector<BindRequest> device_binds;
    if (cache_.PollBindingConditions(SteadySeconds(), &device_binds) > 0) dirty_ = true;
    for (BindRequest& b : device_binds) writer_->Bind(std::move(b));
    SendVolumeWork();
    heartbeat_ns_ = SteadyNanos();
    for (ObjectEvent& e : cache_.TakeProblems()) writer_->WriteEvent(std::move(e));
    if (!synced_before) continue;
    auto now = std::chrono::steady_clock::now();
    bool due = now - last_cycle >= period;
    // With pods pending, any change may let one fit; without, a cycle only refreshes
    // status (of held jobs, say), which can wait for the period.
    bool has_pending = !cache_.state().jobs_with_pending().empty();
    if (leader_.load() && (has_pending ? dirty_ || due : due)) {
      RunCycle();
      dirty_ = false;
      last_cycle = std::chrono::steady_clock::now();
    }
    if (now - last_gauges >= std::chrono::seconds(1)) {
      PublishGauges();
      if (view_) PublishView();
      last_gauges = now;
    }
  }
  for (std::thread& t : informer_threads_) t.join();
  informer_threads_.clear();
}

}  // namespace gantry

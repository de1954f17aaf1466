#include "sim/replay.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <span>
#include <tuple>
#include <unordered_map>

#include "engine/eviction_memory.h"
#include "engine/session.h"
#include "model/limits.h"
#include "model/usage_memory.h"
#include "sim/fairness.h"
#include "sim/idle_gpus.h"
#include "sim/replay_devices.h"

namespace gantry {

Distribution Summarize(std::vector<double> values) {
  Distribution d;
  d.count = static_cast<int64_t>(values.size());
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
    return values[std::min(i, values.size() - 1)];
  };
  d.p50 = at(0.50);
  d.p95 = at(0.95);
  d.p99 = at(0.99);
  return d;
}

namespace {

Status InRange(const std::string& what, int64_t v, int64_t min, int64_t max) {
  if (v >= min && v <= max) return Status::Ok();
  return Status::Invalid(what + " " + std::to_string(v) + " is out of range [" +
                         std::to_string(min) + ", " + std::to_string(max) + "]");
}

}  // namespace

Status CheckReplayOptions(const ReplayOptions& options) {
  GANTRY_RETURN_IF_ERROR(
      InRange("the scheduling period (s)", options.period_s, 1, kMaxReplayPeriodS));
  GANTRY_RETURN_IF_ERROR(InRange("the time-series rows kept", options.max_rows, 2, kMaxReplayRows));
  return InRange("the percent of movable jobs", options.movable.pct, 0, 100);
}

Status CheckSimJob(const SimJob& job) {
  const std::string where =
      "job \"" + (job.name.size() > 64 ? job.name.substr(0, 64) + "..." : job.name) + "\": ";
  Status st = InRange("pods", job.pods, 1, kMaxTasksPerJob);
  if (st.ok()) st = InRange("min_member", job.min_member, 1, job.pods);
  if (st.ok()) st = InRange("submit time", job.submit, 0, kMaxTraceSeconds);
  if (st.ok()) st = InRange("duration", job.duration, 0, kMaxTraceSeconds);
  if (st.ok()) st = InRange("GPU count per pod", job.spec.gpu.count, 0, kMaxGpusPerNode);
  if (st.ok()) st = InRange("GPU share per pod", job.spec.gpu.milli, 0, kGpuMilliWhole - 1);
  return st.ok() ? st : Status::Invalid(where + st.message());
}

namespace {

// Per queue, the GPUs it holds: leaves their own, inner queues their subtree's.
std::vector<int64_t> QueueGpus(const ClusterState& cluster) {
  const auto& queues = cluster.queues();
  std::vector<int64_t> gpus(queues.size(), 0);
  for (QueueId q = 0; q < queues.size(); ++q) {
    const int64_t own = queues[q].allocated.Get(kGpu);
    // Up the tree, bounded by the queue count should a loader have left a cycle.
    QueueId at = q;
    for (size_t depth = 0; at != kNone && depth <= queues.size(); ++depth) {
      gpus[at] += own;
      at = queues[at].parent;
    }
  }
  return gpus;
}

}  // namespace

Result<ReplayResult> RunReplay(const ClusterState& nodes, const std::vector<SimJob>& jobs_in,
                               const SchedulerConfig& config, uint64_t seed,
                               const ReplayOptions& options) {
  const bool starts_with_tasks = !nodes.tasks().empty();
  if (jobs_in.empty() && nodes.jobs_with_pending().empty()) {
    return Status::Invalid("the workload is empty");
  }
  GANTRY_RETURN_IF_ERROR(CheckReplayOptions(options));
  auto policy = Policy::Compile(config);
  if (!policy.ok()) return policy.status();
  int64_t total_tasks = 0;
  const std::vector<std::string>& levels = nodes.topology_keys();
  for (const SimJob& j : jobs_in) {
    GANTRY_RETURN_IF_ERROR(CheckSimJob(j));
    if (!j.topology.level.empty() &&
        std::find(levels.begin(), levels.end(), j.topology.level) == levels.end()) {
      std::string known;
      for (const std::string& l : levels) known += (known.empty() ? "" : ", ") + l;
      return Status::Invalid("job \"" + j.name + "\": topology level \"" + j.topology.level +
                             "\" is not one of the cluster's (" + known + ")");
    }
    total_tasks += j.pods;  // at most kMaxTasksPerJob each: no overflow before the check
    if (total_tasks > kMaxTasks) {
      return Status::Invalid("the workload has more than " + std::to_string(kMaxTasks) +
                             " tasks (the limit of " + std::to_string(kMaxTasks) +
                             " tasks in a workload)");
    }
  }
  ClusterState cluster = nodes;
  const int64_t capacity = cluster.capacity().Get(kGpu);
  if (capacity <= 0) return Status::Invalid("the cluster has no GPUs");
  std::optional<ReplayDevices> devices;  // --gpu-api dra
  if (options.gpu_api == GpuApi::kDra) {
    auto made = ReplayDevices::Make(cluster, options.dra_verdicts);
    if (!made.ok()) return made.status();
    devices.emplace(std::move(made).value());
  }
  // A profile the caller gives (a snapshot's, as the daemon kept it) is the one the
  // daemon packs by; else the whole workload's, tasks waiting at the start included.
  if (cluster.workload_profile().total == 0) {
    cluster.SetWorkloadProfile(ProfileOf(jobs_in, &cluster));
  }

  std::vector<const SimJob*> jobs;
  for (const SimJob& j : jobs_in) jobs.push_back(&j);
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const SimJob* a, const SimJob* b) { return a->submit < b->submit; });

  struct JobTrack {
    int64_t submit = 0;
    int64_t duration = 0;
    int64_t last_end = 0;
    int32_t unfinished = 0;
    // Its first reservation (the reserve action): when, and when the tasks then running on
    // the held nodes end (-1: one of them has no known end).
    int64_t reserved_at = -1;
    int64_t reservation_due = -1;
    bool placed_since_reserved = false;
    bool span_counted = false;  // a gang's domains are counted once, when it starts
  };
  struct TaskTrack {
    int64_t pending_since = 0;  // submit, or the last eviction
    int64_t waited = 0;         // time pending before its current run
    uint32_t run = 0;           // its runs so far: an end event of an earlier run is stale
    int64_t ends_at = -1;       // while running, its end; -1 when the job has no duration
    int64_t started = 0;        // while running, when its current run started
  };
  std::vector<JobTrack> tracks;      // by JobId
  std::vector<TaskTrack> task_runs;  // by TaskId
  struct End {
    int64_t t;
    TaskId task;
    uint32_t run;
    bool operator>(const End& o) const {
      return std::tie(t, task, run) > std::tie(o.t, o.task, o.run);
    }
  };
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  std::vector<double> waits, jcts;
  std::vector<std::vector<double>> queue_waits, queue_jcts;     // by queue id
  std::unordered_map<TaskSpec, SpecId, TaskSpecHash> spec_ids;  // equal specs share one
  // Time-weighted sums, by queue id: GPU share, deserved share; and over the steady state.
  std::vector<double> share_time, deserved_time, steady_share_time, steady_deserved_time;
  std::vector<double> deserved_pct;         // by queue id, from the last session
  std::vector<int64_t> queue_pending;       // pending tasks by queue id
  std::vector<PipelineDecision> nominated;  // pipelined, to bind next session
  EvictionLoopDetector loops;

  ReplayResult result;
  // A cluster that starts with tasks starts at 0 (a snapshot's time).
  const int64_t first_t = starts_with_tasks || jobs.empty() ? 0 : jobs.front()->submit;
  result.last_arrival_t = jobs.empty() ? 0 : jobs.back()->submit;
  const int64_t steady_from = (first_t + result.last_arrival_t) / 2;
  const int64_t steady_to = result.last_arrival_t;
  auto grow_queues = [&] {
    const size_t n = cluster.queues().size();
    for (auto* v :
         {&share_time, &deserved_time, &steady_share_time, &steady_deserved_time, &deserved_pct}) {
      v->resize(n, 0);
    }
    queue_waits.resize(n);
    queue_jcts.resize(n);
    queue_pending.resize(n, 0);
    result.queues.resize(n);
  };
  grow_queues();
  size_t next = 0;
  int64_t t = (first_t / options.period_s) * options.period_s;
  int64_t last_t = t;
  double alloc_time = 0, jain_time = 0, steady_jain_time = 0;
  // Idle GPUs over the arrivals (from the first session to the last arrival), and the
  // unusable ones over the whole run too.
  double idle_time = 0, unusable_time = 0, unusable_run_time = 0, arrivals_time = 0;
  int64_t pending_tasks = 0, running = 0;
  std::vector<ReplayRow> rows;
  auto queue_of_task = [&](TaskId task) { return cluster.job(cluster.task(task).job).queue; };
  // A task's wait is counted once it has run for good: at its end, or at the end of the run.
  auto count_wait = [&](TaskId task) {
    const auto w = static_cast<double>(task_runs[task].waited);
    waits.push_back(w);
    queue_waits[queue_of_task(task)].push_back(w);
  };
  // The tasks the cluster starts with: running ones run to the end (their ends are not
  // known), pending ones wait from the start.
  tracks.resize(cluster.jobs().size());
  task_runs.resize(cluster.tasks().size());
  for (JobId j = 0; j < cluster.jobs().size(); ++j) {
    const Job& job = cluster.job(j);
    tracks[j] = JobTrack{first_t, 0, 0, static_cast<int32_t>(job.tasks.size())};
    for (TaskId task : job.tasks) {
      task_runs[task] = TaskTrack{first_t, 0, 0};
      if (cluster.task(task).state == TaskState::kRunning) {
        ++running;
      } else if (cluster.task(task).state == TaskState::kPending) {
        ++pending_tasks;
        ++queue_pending[job.queue];
        ++result.pods;
      }
    }
  }
  GangSpanCounter spans(cluster);
  DatasetCache dataset_cache(cluster, options.datasets);
  auto place = [&](TaskId task, NodeId node, std::span<const int32_t> gpus) -> Status {
    GANTRY_RETURN_IF_ERROR(cluster.Place(task, node, gpus));
    --pending_tasks;
    --queue_pending[queue_of_task(task)];
    ++running;
    TaskTrack& tt = task_runs[task];
    tt.waited += t - tt.pending_since;
    tt.started = t;
    ++tt.run;
    const JobId job_id = cluster.task(task).job;
    JobTrack& track = tracks[job_id];
    // Its data warms up first (dataset locality): its run starts after.
    const int64_t warmup = dataset_cache.Place(&cluster, cluster.spec_of(task), node, t);
    tt.ends_at = track.duration > 0 ? t + warmup + track.duration : -1;
    if (const Job& job = cluster.job(job_id);
        job.min_member > 1 && !track.span_counted && job.running >= job.min_member) {
      track.span_counted = true;
      spans.Count(cluster, job_id);
    }
    if (tt.ends_at >= 0) ends.push({tt.ends_at, task, tt.run});
    if (track.reserved_at >= 0 && !track.placed_since_reserved) {
      track.placed_since_reserved = true;
      ++result.reserved_jobs_placed;
      if (track.reservation_due >= 0) {
        result.reservation_late_max_s =
            std::max(result.reservation_late_max_s, t - track.reservation_due);
      }
    }
    return Status::Ok();
  };
  // Sessions open every period on the same cluster, which changes on few nodes between
  // them: the cache refreshes those instead of each session reading every node.
  NodeTableCache node_table;
  // Fair share with memory, for queue trees that ask for it: what each queue held since the
  // last step (allocations change only at steps here) is folded in before anything moves.
  UsageMemory usage_memory;
  while (true) {
    usage_memory.Advance(cluster, static_cast<double>(t));
    // Departures up to now (an evicted task's end is stale: its run number moved on).
    while (!ends.empty() && ends.top().t <= t) {
      const End end = ends.top();
      ends.pop();
      if (end.run != task_runs[end.task].run ||
          cluster.task(end.task).state != TaskState::kRunning) {
        continue;
      }
      cluster.Release(end.task);
      if (devices) GANTRY_RETURN_IF_ERROR(devices->Released(cluster, end.task));
      --running;
      count_wait(end.task);
      const JobId job = cluster.task(end.task).job;
      JobTrack& track = tracks[job];
      track.last_end = std::max(track.last_end, end.t);
      if (--track.unfinished == 0) {
        const auto jct = static_cast<double>(track.last_end - track.submit);
        jcts.push_back(jct);
        queue_jcts[cluster.job(job).queue].push_back(jct);
      }
    }
    // Arrivals up to now.
    while (next < jobs.size() && jobs[next]->submit <= t) {
      const SimJob& sj = *jobs[next++];
      QueueId queue = cluster.FindQueue(sj.queue);
      if (queue == kNone) {
        Queue q;
        q.name = sj.queue;
        auto added = cluster.AddQueue(std::move(q));
        if (!added.ok()) return added.status();
        queue = *added;
        grow_queues();
      }
      Job job;
      job.name = sj.name + "#" + std::to_string(cluster.jobs().size());
      job.queue = queue;
      job.priority = sj.priority;
      job.min_member = sj.min_member;
      job.topology = sj.topology;
      job.creation = static_cast<int64_t>(cluster.jobs().size());
      job.submitted = sj.submit;
      auto job_id = cluster.AddJob(std::move(job));
      if (!job_id.ok()) return job_id.status();
      auto [it, inserted] = spec_ids.try_emplace(sj.spec, 0);
      if (inserted) it->second = cluster.AddSpec(sj.spec);
      const bool movable =
          sj.movable ||
          SelectsMovable(options.movable, sj, static_cast<size_t>(&sj - jobs_in.data()), seed);
      for (int32_t p = 0; p < sj.pods; ++p) {
        SpecId spec = it->second;
        if (devices && sj.spec.gpu.wants_gpu()) {
          // Its own claim (as one made from a template): a spec of its own.
          auto with_claim =
              devices->WithClaim(sj.spec, cluster.job(*job_id).name + "-" + std::to_string(p));
          if (!with_claim.ok()) return with_claim.status();
          spec = cluster.AddSpec(std::move(with_claim).value());
        }
        auto task = cluster.AddTask(*job_id, spec, sj.name + "-" + std::to_string(p));
        if (!task.ok()) return task.status();
        cluster.SetTaskMovable(*task, movable);
        result.movable_tasks += movable ? 1 : 0;
        task_runs.resize(cluster.tasks().size());
        task_runs[*task] = TaskTrack{sj.submit, 0, 0};
      }
      tracks.resize(cluster.jobs().size());
      tracks[*job_id] = JobTrack{sj.submit, sj.duration, 0, sj.pods};
      pending_tasks += sj.pods;
      queue_pending[queue] += sj.pods;
      result.pods += sj.pods;
    }
    // Pipelined tasks bind onto the room their victims left, before the engine runs. One
    // that no longer fits (it should) stays pending for the engine to place.
    for (const PipelineDecision& p : nominated) {
      if (cluster.task(p.task).state != TaskState::kPending) continue;
      Status placed = place(p.task, p.node, p.gpus);
      // Refused: the task is still pending, and the session places it.
      if (placed.ok() && devices)
        GANTRY_RETURN_IF_ERROR(devices->BoundOutside(cluster, p.task, p.node, p.gpus));
    }
    nominated.clear();
    // One session when something waits.
    if (pending_tasks > 0) {
      if (std::count_if(queue_pending.begin(), queue_pending.end(),
                        [](int64_t n) { return n > 0; }) >= 2) {
        result.last_contended_t = t;
      }
      Decisions decisions;
      {
        Snapshot snapshot(cluster, &node_table);
        if (devices) snapshot.set_devices(devices->Inputs());
        Session session(snapshot, *policy,
                        SessionOptions{t, seed + static_cast<uint64_t>(result.sessions)});
        decisions = session.Run();
      }
      ++result.sessions;
      for (size_t q = 0; q < decisions.deserved.size() && q < deserved_pct.size(); ++q) {
        deserved_pct[q] = 100.0 * static_cast<double>(decisions.deserved[q].Get(kGpu)) /
                          static_cast<double>(capacity);
      }
      // Evictions first: their room is what the pipelined tasks wait for.
      for (const EvictDecision& e : decisions.evictions) {
        if (cluster.task(e.task).state != TaskState::kRunning) {
          return Status::Failed("session at t=" + std::to_string(t) + " evicted task " +
                                cluster.task(e.task).name + ", which is not running");
        }
        const Task& evicted = cluster.task(e.task);
        result.work_lost_gpu_s += static_cast<double>(t - task_runs[e.task].started) *
                                  static_cast<double>(evicted.gpus.size()) *
                                  evicted.gpu_milli_each / kGpuMilliWhole;
        if (e.cause == EvictionCause::kDefragment) ++result.defragment_evictions;
        RememberEviction(cluster, e, t);  // the engine's memory against loops, and the budget's
        cluster.Unplace(e.task);
        if (devices) GANTRY_RETURN_IF_ERROR(devices->Released(cluster, e.task));
        --running;
        ++pending_tasks;
        task_runs[e.task].pending_since = t;  // its end event is stale from here
        ++result.preempted_tasks;
        result.last_eviction_t = t;
        const QueueId victim_queue = cluster.job(e.job).queue;
        ++queue_pending[victim_queue];
        ++result.queues[victim_queue].evicted;
        EvictionRecord record{t, cluster.job(e.job).name, cluster.queue(victim_queue).name, "", ""};
        if (e.for_job != kNone) {
          const QueueId for_queue = cluster.job(e.for_job).queue;
          ++result.queues[for_queue].evicted_for;
          record.preemptor_job = cluster.job(e.for_job).name;
          record.preemptor_queue = cluster.queue(for_queue).name;
          loops.Add(e.for_job, e.job);
        }
        if (result.evictions.size() < kMaxEvictionRecords)
          result.evictions.push_back(std::move(record));
      }
      for (const BindDecision& b : decisions.binds) {
        GANTRY_RETURN_IF_ERROR(place(b.task, b.node, b.gpus));
        if (devices) GANTRY_RETURN_IF_ERROR(devices->Bound(cluster, b));
      }
      // A job's first reservation: it should start once what runs on its nodes has ended.
      for (const Reservation& held : decisions.reservations) {
        JobTrack& track = tracks[held.job];
        if (track.reserved_at >= 0) continue;
        track.reserved_at = t;
        ++result.reserved_jobs;
        int64_t due = t;
        for (NodeId node : held.nodes) {
          for (TaskId running_task : cluster.tasks_on(node)) {
            const int64_t end = task_runs[running_task].ends_at;
            due = (due < 0 || end < 0) ? -1 : std::max(due, end);
          }
        }
        track.reservation_due = due;
      }
      result.pipelined_tasks += static_cast<int64_t>(decisions.pipelined.size());
      nominated = std::move(decisions.pipelined);
    }
    int64_t allocated = 0;
    for (const Queue& q : cluster.queues()) allocated += q.allocated.Get(kGpu);
    ReplayRow row;
    row.t = t;
    row.gpu_alloc_pct = 100.0 * static_cast<double>(allocated) / static_cast<double>(capacity);
    row.queue_len = pending_tasks;
    row.running_tasks = running;
    // Per queue: shares, and Jain's index over the leaves that deserve GPUs.
    const std::vector<int64_t> queue_gpus = QueueGpus(cluster);
    std::vector<bool> leaf(cluster.queues().size(), true);
    for (const Queue& q : cluster.queues()) {
      if (q.parent != kNone) leaf[q.parent] = false;
    }
    std::vector<double> shares(queue_gpus.size()), fractions;
    for (QueueId q = 0; q < queue_gpus.size(); ++q) {
      shares[q] = 100.0 * static_cast<double>(queue_gpus[q]) / static_cast<double>(capacity);
      if (leaf[q] && deserved_pct[q] > 0) fractions.push_back(shares[q] / deserved_pct[q]);
    }
    row.jain = JainIndex(fractions);
    const IdleGpus idle = MeasureIdleGpus(cluster, nominated);
    if (shares.size() <= kMaxQueuesPerRow) {
      row.queue_share_pct = shares;
      row.queue_deserved_pct = deserved_pct;
    }
    rows.push_back(std::move(row));
    // The next moment anything changes, on the period grid; pipelined tasks bind the next
    // session.
    int64_t next_event = INT64_MAX;
    if (next < jobs.size()) next_event = jobs[next]->submit;
    if (!ends.empty()) next_event = std::min(next_event, ends.top().t);
    if (!nominated.empty()) next_event = std::min(next_event, t + options.period_s);
    if (next_event == INT64_MAX) break;  // nothing will ever change again
    int64_t next_t = std::max(t + options.period_s, (next_event + options.period_s - 1) /
                                                        options.period_s * options.period_s);
    // Time-weighted means over [t, next_t), and over its part in the steady state.
    const double span = static_cast<double>(next_t - t);
    const double steady_span = static_cast<double>(
        std::max<int64_t>(0, std::min(next_t, steady_to) - std::max(t, steady_from)));
    alloc_time += rows.back().gpu_alloc_pct * span;
    const double arrivals_span = static_cast<double>(
        std::max<int64_t>(0, std::min(next_t, steady_to) - std::max(t, rows.front().t)));
    idle_time += idle.idle * arrivals_span;
    unusable_time += idle.unusable * arrivals_span;
    arrivals_time += arrivals_span;
    unusable_run_time += idle.unusable * span;
    jain_time += rows.back().jain * span;
    steady_jain_time += rows.back().jain * steady_span;
    for (QueueId q = 0; q < shares.size(); ++q) {
      share_time[q] += span * shares[q];
      deserved_time[q] += span * deserved_pct[q];
      steady_share_time[q] += steady_span * shares[q];
      steady_deserved_time[q] += steady_span * deserved_pct[q];
    }
    last_t = next_t;
    t = next_t;
  }
  // Tasks still running (to the end, duration 0) have waited all they will.
  for (TaskId task = 0; task < cluster.tasks().size(); ++task) {
    if (cluster.task(task).state == TaskState::kRunning) count_wait(task);
  }
  const double total_time = static_cast<double>(last_t - rows.front().t);
  const double steady_time = static_cast<double>(
      std::max<int64_t>(0, std::min(last_t, steady_to) - std::max(rows.front().t, steady_from)));
  result.failed_tasks = pending_tasks;
  result.wait_s = Summarize(waits);
  result.jct_s = Summarize(jcts);
  result.gpu_alloc_mean_pct = total_time > 0 ? alloc_time / total_time : rows.back().gpu_alloc_pct;
  result.jain_mean = total_time > 0 ? jain_time / total_time : rows.back().jain;
  if (arrivals_time > 0) {
    result.idle_gpus_mean = idle_time / arrivals_time;
    result.idle_unusable_gpus_mean = unusable_time / arrivals_time;
  }
  result.idle_unusable_gpu_hours = unusable_run_time / 3600.0;
  result.jain_steady = steady_time > 0 ? steady_jain_time / steady_time : result.jain_mean;
  result.eviction_loops = loops.loops();
  result.gang_spans = spans.Result();
  result.datasets = dataset_cache.stats();
  for (QueueId q = 0; q < cluster.queues().size(); ++q) {
    const Queue& queue = cluster.queue(q);
    const double share = total_time > 0 ? share_time[q] / total_time : 0;
    result.queue_gpu_share_pct.emplace_back(queue.name, share);
    QueueReport& report = result.queues[q];
    report.name = queue.name;
    report.parent = queue.parent == kNone ? "" : cluster.queue(queue.parent).name;
    report.share_pct = share;
    report.deserved_pct = total_time > 0 ? deserved_time[q] / total_time : 0;
    report.steady_share_pct = steady_time > 0 ? steady_share_time[q] / steady_time : 0;
    report.steady_deserved_pct = steady_time > 0 ? steady_deserved_time[q] / steady_time : 0;
    report.wait_s = Summarize(std::move(queue_waits[q]));
    report.jct_s = Summarize(std::move(queue_jcts[q]));
    if (queue.parent != kNone) result.queues[queue.parent].leaf = false;
  }
  // Keep the report small: thin rows and samples evenly.
  const auto keep = static_cast<size_t>(std::max<int64_t>(2, options.max_rows));
  if (rows.size() > keep) {
    std::vector<ReplayRow> thin;
    for (size_t i = 0; i < keep; ++i) thin.push_back(rows[i * (rows.size() - 1) / (keep - 1)]);
    rows = std::move(thin);
  }
  result.rows = std::move(rows);
  std::sort(jcts.begin(), jcts.end());
  for (size_t i = 0; i < std::min<size_t>(jcts.size(), 500); ++i) {
    result.jct_samples.push_back(jcts[i * jcts.size() / std::min<size_t>(jcts.size(), 500)]);
  }
  return result;
}

}  // namespace gantry

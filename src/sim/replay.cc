#include "sim/replay.h"

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "engine/session.h"
#include "model/limits.h"

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
  return InRange("the time-series rows kept", options.max_rows, 2, kMaxReplayRows);
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

Result<ReplayResult> RunReplay(const ClusterState& nodes, const std::vector<SimJob>& jobs_in,
                               const SchedulerConfig& config, uint64_t seed,
                               const ReplayOptions& options) {
  if (jobs_in.empty()) return Status::Invalid("the workload is empty");
  GANTRY_RETURN_IF_ERROR(CheckReplayOptions(options));
  auto policy = Policy::Compile(config);
  if (!policy.ok()) return policy.status();
  int64_t total_tasks = 0;
  for (const SimJob& j : jobs_in) {
    GANTRY_RETURN_IF_ERROR(CheckSimJob(j));
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
  cluster.SetWorkloadProfile(ProfileOf(jobs_in));

  std::vector<const SimJob*> jobs;
  for (const SimJob& j : jobs_in) jobs.push_back(&j);
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const SimJob* a, const SimJob* b) { return a->submit < b->submit; });

  struct JobTrack {
    int64_t submit = 0;
    int64_t duration = 0;
    int64_t last_end = 0;
    int32_t unfinished = 0;
  };
  std::vector<JobTrack> tracks;  // by JobId
  using End = std::pair<int64_t, TaskId>;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  std::vector<double> waits, jcts;
  std::unordered_map<TaskSpec, SpecId, TaskSpecHash> spec_ids;  // equal specs share one
  std::vector<double> queue_gpu_time;

  ReplayResult result;
  size_t next = 0;
  int64_t t = (jobs.front()->submit / options.period_s) * options.period_s;
  int64_t last_t = t;
  double alloc_time = 0;
  int64_t pending_tasks = 0, running = 0;
  std::vector<ReplayRow> rows;
  // Sessions open every period on the same cluster, which changes on few nodes between
  // them: the cache refreshes those instead of each session reading every node.
  NodeTableCache node_table;
  while (true) {
    // Departures up to now.
    while (!ends.empty() && ends.top().first <= t) {
      TaskId task = ends.top().second;
      ends.pop();
      cluster.Release(task);
      --running;
      JobTrack& track = tracks[cluster.task(task).job];
      if (--track.unfinished == 0)
        jcts.push_back(static_cast<double>(track.last_end - track.submit));
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
        queue_gpu_time.push_back(0);
      }
      Job job;
      job.name = sj.name + "#" + std::to_string(cluster.jobs().size());
      job.queue = queue;
      job.priority = sj.priority;
      job.min_member = sj.min_member;
      job.creation = static_cast<int64_t>(cluster.jobs().size());
      job.submitted = sj.submit;
      auto job_id = cluster.AddJob(std::move(job));
      if (!job_id.ok()) return job_id.status();
      auto [it, inserted] = spec_ids.try_emplace(sj.spec, 0);
      if (inserted) it->second = cluster.AddSpec(sj.spec);
      for (int32_t p = 0; p < sj.pods; ++p) {
        auto task = cluster.AddTask(*job_id, it->second, sj.name + "-" + std::to_string(p));
        if (!task.ok()) return task.status();
      }
      tracks.resize(cluster.jobs().size());
      tracks[*job_id] = JobTrack{sj.submit, sj.duration, 0, sj.pods};
      pending_tasks += sj.pods;
      result.pods += sj.pods;
    }
    // One session when something waits.
    if (pending_tasks > 0) {
      Decisions decisions;
      {
        Snapshot snapshot(cluster, &node_table);
        Session session(snapshot, *policy,
                        SessionOptions{t, seed + static_cast<uint64_t>(result.sessions)});
        decisions = session.Run();
      }
      ++result.sessions;
      for (const BindDecision& b : decisions.binds) {
        GANTRY_RETURN_IF_ERROR(cluster.Place(b.task, b.node, b.gpus));
        --pending_tasks;
        ++running;
        JobTrack& track = tracks[b.job];
        waits.push_back(static_cast<double>(t - track.submit));
        if (track.duration > 0) {
          int64_t end = t + track.duration;
          track.last_end = std::max(track.last_end, end);
          ends.push({end, b.task});
        }
      }
    }
    int64_t allocated = 0;
    for (const Queue& q : cluster.queues()) allocated += q.allocated.Get(kGpu);
    rows.push_back(ReplayRow{t,
                             100.0 * static_cast<double>(allocated) / static_cast<double>(capacity),
                             pending_tasks, running});
    // The next moment anything changes, on the period grid.
    int64_t next_event = INT64_MAX;
    if (next < jobs.size()) next_event = jobs[next]->submit;
    if (!ends.empty()) next_event = std::min(next_event, ends.top().first);
    if (next_event == INT64_MAX) break;  // nothing will ever change again
    int64_t next_t = std::max(t + options.period_s, (next_event + options.period_s - 1) /
                                                        options.period_s * options.period_s);
    // Time-weighted means over [t, next_t).
    const double span = static_cast<double>(next_t - t);
    alloc_time += rows.back().gpu_alloc_pct * span;
    for (QueueId q = 0; q < cluster.queues().size(); ++q) {
      queue_gpu_time[q] += span * 100.0 *
                           static_cast<double>(cluster.queue(q).allocated.Get(kGpu)) /
                           static_cast<double>(capacity);
    }
    last_t = next_t;
    t = next_t;
  }
  const double total_time = static_cast<double>(last_t - rows.front().t);
  result.failed_tasks = pending_tasks;
  result.wait_s = Summarize(waits);
  result.jct_s = Summarize(jcts);
  result.gpu_alloc_mean_pct = total_time > 0 ? alloc_time / total_time : rows.back().gpu_alloc_pct;
  for (QueueId q = 0; q < cluster.queues().size(); ++q) {
    result.queue_gpu_share_pct.emplace_back(cluster.queue(q).name,
                                            total_time > 0 ? queue_gpu_time[q] / total_time : 0);
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

#include "sim/summary.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <sstream>

#include "sim/report_datasets.h"
#include "sim/stats.h"

namespace gantry {
namespace {

using Json = nlohmann::ordered_json;

// The paper's means over seeds 42..51 on openb_pod_list_default.csv (Weng et al., ATC '23).
const std::map<std::string, double> kPublished = {{"random", 87.47},        {"dotprod", 90.85},
                                                  {"gpuclustering", 91.88}, {"gpupacking", 92.00},
                                                  {"bestfit", 93.08},       {"fgd", 95.39}};

Json DistributionJson(const Distribution& d) {
  return Json{{"mean", d.mean}, {"p50", d.p50}, {"p95", d.p95}, {"p99", d.p99}, {"count", d.count}};
}

__attribute__((format(printf, 1, 2))) std::string Format(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(size > 0 ? static_cast<size_t>(size) : 0, '\0');
  if (size > 0) std::vsnprintf(text.data(), text.size() + 1, format, again);
  va_end(again);
  return text;
}

// A policy's metrics over its runs, in the order of the runs.
using Metrics = std::map<std::string, std::vector<double>>;

Json ProtocolRunJson(const ProtocolResult& r) {
  Json run, alloc, frag;
  for (size_t p = 0; p < r.alloc_pct.size(); ++p) {
    alloc[std::to_string(p)] = std::round(r.alloc_pct[p] * 100) / 100;
    frag[std::to_string(p)] = std::round(r.frag_pct[p] * 100) / 100;
  }
  run["alloc_pct"] = alloc;
  run["frag_pct"] = frag;
  run["pods"] = r.pods;
  run["failed_pods"] = r.failed_pods;
  return run;
}

Json ReplayRunJson(const ReplayResult& r) {
  Json run;
  run["pods"] = r.pods;
  run["failed_tasks"] = r.failed_tasks;
  run["preempted_tasks"] = r.preempted_tasks;
  run["sessions"] = r.sessions;
  run["gpu_alloc_mean_pct"] = r.gpu_alloc_mean_pct;
  run["wait_s"] = DistributionJson(r.wait_s);
  run["jct_s"] = DistributionJson(r.jct_s);
  Json shares;
  for (const auto& [q, share] : r.queue_gpu_share_pct) shares[q] = share;
  run["queue_gpu_share_pct"] = shares;
  run["jct_samples"] = r.jct_samples;
  run["pipelined_tasks"] = r.pipelined_tasks;
  run["eviction_loops"] = r.eviction_loops;
  run["last_arrival_t"] = r.last_arrival_t;
  run["last_eviction_t"] = r.last_eviction_t;
  run["last_contended_t"] = r.last_contended_t;
  run["reserved_jobs"] = r.reserved_jobs;
  run["reserved_jobs_placed"] = r.reserved_jobs_placed;
  run["reservation_late_max_s"] = r.reservation_late_max_s;
  run["jain_mean"] = r.jain_mean;
  run["jain_steady"] = r.jain_steady;
  Json spans = Json::array();
  for (const GangSpan& g : r.gang_spans) {
    spans.push_back({{"level", g.level},
                     {"gangs", g.gangs},
                     {"mean_domains", g.mean_domains},
                     {"max_domains", g.max_domains},
                     {"pct_in_one", g.pct_in_one}});
  }
  run["gang_spans"] = spans;
  if (r.datasets.reads > 0) run["datasets"] = DatasetsJson(r);
  run["idle_gpus_mean"] = r.idle_gpus_mean;
  run["idle_unusable_gpus_mean"] = r.idle_unusable_gpus_mean;
  run["idle_unusable_gpu_hours"] = r.idle_unusable_gpu_hours;
  run["movable_tasks"] = r.movable_tasks;
  run["defragment_evictions"] = r.defragment_evictions;
  run["work_lost_gpu_hours"] = r.work_lost_gpu_s / 3600.0;
  Json queues = Json::array();
  for (const QueueReport& q : r.queues) {
    queues.push_back({{"name", q.name},
                      {"parent", q.parent},
                      {"leaf", q.leaf},
                      {"share_pct", q.share_pct},
                      {"deserved_pct", q.deserved_pct},
                      {"steady_share_pct", q.steady_share_pct},
                      {"steady_deserved_pct", q.steady_deserved_pct},
                      {"wait_s", DistributionJson(q.wait_s)},
                      {"jct_s", DistributionJson(q.jct_s)},
                      {"evicted", q.evicted},
                      {"evicted_for", q.evicted_for}});
  }
  run["queues"] = queues;
  // Per queue over time, for the report's charts: at most kMaxSeriesPoints rows, evenly.
  constexpr size_t kMaxSeriesPoints = 500;
  Json series{{"t", Json::array()},
              {"jain", Json::array()},
              {"share_pct", Json::object()},
              {"deserved_pct", Json::object()}};
  const size_t n = r.rows.size(),
               step = n > kMaxSeriesPoints ? (n + kMaxSeriesPoints - 1) / kMaxSeriesPoints : 1;
  for (size_t i = 0; i < n; i += step) {
    const ReplayRow& row = r.rows[i];
    series["t"].push_back(row.t);
    series["jain"].push_back(row.jain);
    for (size_t q = 0; q < row.queue_share_pct.size() && q < r.queues.size(); ++q) {
      series["share_pct"][r.queues[q].name].push_back(row.queue_share_pct[q]);
      series["deserved_pct"][r.queues[q].name].push_back(row.queue_deserved_pct[q]);
    }
  }
  run["queue_series"] = series;
  return run;
}

// The fairness lines of the terminal table for one replay: the run, then one per queue.
std::string FairnessTable(const std::string& policy, uint64_t seed, const ReplayResult& r) {
  std::string text = Format(
      "\nfairness %s seed %llu: jain %.4f (steady %.4f), evicted %lld tasks, loops %lld, last "
      "eviction t=%lld, last arrival t=%lld, last contended t=%lld\n",
      policy.c_str(), static_cast<unsigned long long>(seed), r.jain_mean, r.jain_steady,
      static_cast<long long>(r.preempted_tasks), static_cast<long long>(r.eviction_loops),
      static_cast<long long>(r.last_eviction_t), static_cast<long long>(r.last_arrival_t),
      static_cast<long long>(r.last_contended_t));
  if (r.reserved_jobs > 0) {
    text += Format(
        "  reservations: %lld jobs, %lld placed since, latest start %lld s after "
        "its held nodes were due to be free\n",
        static_cast<long long>(r.reserved_jobs), static_cast<long long>(r.reserved_jobs_placed),
        static_cast<long long>(r.reservation_late_max_s));
  }
  text += Format("  %-16s %9s %11s %12s %14s %8s %12s %12s %8s %11s\n", "QUEUE", "SHARE%",
                 "DESERVED%", "STEADY_SH%", "STEADY_DES%", "ERR%", "WAIT_MEAN_S", "JCT_MEAN_S",
                 "EVICTED", "EVICTED_FOR");
  for (const QueueReport& q : r.queues) {
    const double err =
        q.steady_deserved_pct > 0
            ? 100.0 * (q.steady_share_pct - q.steady_deserved_pct) / q.steady_deserved_pct
            : 0;
    text += Format("  %-16s %9.2f %11.2f %12.2f %14.2f %8.2f %12.0f %12.0f %8lld %11lld\n",
                   q.name.c_str(), q.share_pct, q.deserved_pct, q.steady_share_pct,
                   q.steady_deserved_pct, err, q.wait_s.mean, q.jct_s.mean,
                   static_cast<long long>(q.evicted), static_cast<long long>(q.evicted_for));
  }
  return text;
}

void AddProtocolMetrics(const ProtocolResult& r, Metrics* m) {
  (*m)["alloc"].push_back(r.alloc_pct.back());
  (*m)["frag"].push_back(r.frag_pct.back());
  (*m)["failed"].push_back(static_cast<double>(r.failed_pods));
}

void AddReplayMetrics(const ReplayResult& r, Metrics* m) {
  (*m)["jct_mean"].push_back(r.jct_s.mean);
  (*m)["jct_p95"].push_back(r.jct_s.p95);
  (*m)["wait_mean"].push_back(r.wait_s.mean);
  (*m)["alloc_mean"].push_back(r.gpu_alloc_mean_pct);
  (*m)["failed"].push_back(static_cast<double>(r.failed_tasks));
  if (r.datasets.reads > 0) (*m)["warmup"].push_back(static_cast<double>(r.datasets.warmup_s));
  if (r.has_datasets_without_locality) {
    (*m)["warmup_saved"].push_back(
        static_cast<double>(r.datasets_without_locality.warmup_s - r.datasets.warmup_s));
  }
  (*m)["idle_unusable"].push_back(r.idle_unusable_gpus_mean);
  (*m)["idle_unusable_hours"].push_back(r.idle_unusable_gpu_hours);
  (*m)["defragment_evictions"].push_back(static_cast<double>(r.defragment_evictions));
}

double Mean(Metrics& m, const std::string& metric) {
  return MeanAndStd(m[metric]).mean;
}

bool IsDefaultTrace(const std::string& workload) {
  const std::string name = "openb_pod_list_default.csv";
  return workload.size() >= name.size() &&
         workload.compare(workload.size() - name.size(), name.size(), name) == 0;
}

}  // namespace

SimOutputs SummarizeSimRuns(const SimOptions& o, const SimSettings& settings,
                            const std::vector<SimRun>& runs) {
  const bool protocol = settings.protocol;
  const size_t seeds = settings.seeds.size();
  const std::string end_key = std::to_string(std::llround(settings.arrival_scale * 100));
  SimOutputs out;
  Json& summary = out.summary;
  summary["title"] =
      protocol ? "Gantry simulation: " + o.protocol : "Gantry simulation: time-driven replay";
  if (!o.snapshot.empty()) {
    summary["cluster"] = "snapshot: " + o.snapshot;
    summary["workload"] = "snapshot: " + o.snapshot + " (pending pods and recent arrivals)";
  } else {
    summary["cluster"] = o.cluster.empty() ? "generated" : o.cluster;
    summary["workload"] = o.workload.empty() ? "generated: " + o.generate : o.workload;
  }
  summary["protocol"] = protocol ? o.protocol : "replay";
  summary["runs"] = Json::array();
  out.timeseries = Json::array();
  std::ostringstream csv;
  csv << (protocol ? "policy,seed,arrived_pct,alloc_pct,frag_pct\n"
                   : "policy,seed,t,gpu_alloc_pct,queue_len,running_tasks\n");
  std::map<std::string, Metrics> by;  // policy -> metric -> values
  std::map<std::string, double> wall;
  for (const SimRun& sim : runs) {
    Json run;
    run["policy"] = sim.policy;
    run["seed"] = sim.seed;
    if (protocol) {
      const ProtocolResult& r = sim.protocol;
      run.update(ProtocolRunJson(r));
      for (size_t p = 0; p < r.alloc_pct.size(); ++p) {
        csv << sim.policy << ',' << sim.seed << ',' << p << ',' << r.alloc_pct[p] << ','
            << r.frag_pct[p] << '\n';
      }
      AddProtocolMetrics(r, &by[sim.policy]);
    } else {
      const ReplayResult& r = sim.replay;
      run.update(ReplayRunJson(r));
      for (const ReplayRow& row : r.rows) {
        out.timeseries.push_back({{"policy", sim.policy},
                                  {"seed", sim.seed},
                                  {"t", row.t},
                                  {"gpu_alloc_pct", row.gpu_alloc_pct},
                                  {"queue_len", row.queue_len},
                                  {"running_tasks", row.running_tasks}});
        csv << sim.policy << ',' << sim.seed << ',' << row.t << ',' << row.gpu_alloc_pct << ','
            << row.queue_len << ',' << row.running_tasks << '\n';
      }
      AddReplayMetrics(r, &by[sim.policy]);
    }
    run["wall_s"] = sim.wall_s;
    wall[sim.policy] += sim.wall_s;
    summary["runs"].push_back(run);
  }
  out.timeseries_csv = csv.str();
  // Per queue over time (replays): share and deserved share per session row.
  if (!protocol) {
    std::ostringstream qcsv, ecsv;
    qcsv << "policy,seed,t,queue,share_pct,deserved_pct,jain\n";
    ecsv << "policy,seed,t,victim_job,victim_queue,preemptor_job,preemptor_queue\n";
    for (const SimRun& sim : runs) {
      const ReplayResult& r = sim.replay;
      for (const ReplayRow& row : r.rows) {
        for (size_t q = 0; q < row.queue_share_pct.size() && q < r.queues.size(); ++q) {
          qcsv << sim.policy << ',' << sim.seed << ',' << row.t << ',' << r.queues[q].name << ','
               << row.queue_share_pct[q] << ',' << row.queue_deserved_pct[q] << ',' << row.jain
               << '\n';
        }
      }
      for (const EvictionRecord& e : r.evictions) {
        ecsv << sim.policy << ',' << sim.seed << ',' << e.t << ',' << e.victim_job << ','
             << e.victim_queue << ',' << e.preemptor_job << ',' << e.preemptor_queue << '\n';
      }
    }
    out.queues_csv = qcsv.str();
    out.evictions_csv = ecsv.str();
  }

  Json by_policy;
  for (const std::string& p : settings.policies) {
    Metrics& m = by[p];
    Json entry;
    entry["runs"] = seeds;
    if (protocol) {
      const SampleStats alloc = MeanAndStd(m["alloc"]);
      entry["alloc_pct_" + end_key + "_mean"] = alloc.mean;
      entry["alloc_pct_" + end_key + "_std"] = alloc.std;
      entry["frag_pct_" + end_key + "_mean"] = Mean(m, "frag");
      entry["failed_pods_mean"] = Mean(m, "failed");
    } else {
      entry["jct_mean_s"] = Mean(m, "jct_mean");
      entry["jct_p95_s"] = Mean(m, "jct_p95");
      entry["wait_mean_s"] = Mean(m, "wait_mean");
      entry["gpu_alloc_mean_pct"] = Mean(m, "alloc_mean");
      entry["failed_tasks_mean"] = Mean(m, "failed");
      if (m.count("warmup")) entry["warmup_s_mean"] = Mean(m, "warmup");
      if (m.count("warmup_saved")) entry["warmup_saved_s_mean"] = Mean(m, "warmup_saved");
      entry["idle_unusable_gpus_mean"] = Mean(m, "idle_unusable");
      entry["idle_unusable_gpu_hours_mean"] = Mean(m, "idle_unusable_hours");
      entry["defragment_evictions_mean"] = Mean(m, "defragment_evictions");
    }
    by_policy[p] = entry;
  }
  summary["by_policy"] = by_policy;
  const bool default_trace = IsDefaultTrace(o.workload);
  if (protocol && default_trace && end_key == "130") {
    Json published;
    for (const auto& [p, v] : kPublished) published[p] = v;
    summary["published"] = published;
  }

  // The terminal table.
  if (protocol) {
    out.table =
        Format("%-14s %5s %18s %10s %10s %10s %8s\n", "POLICY", "RUNS",
               ("ALLOC@" + end_key + "% (sd)").c_str(), "FRAG%", "FAILED", "PUBLISHED", "WALL_S");
  } else {
    out.table = Format("%-14s %5s %12s %12s %12s %10s %8s\n", "POLICY", "RUNS", "GPU_ALLOC%",
                       "JCT_MEAN_S", "WAIT_MEAN_S", "FAILED", "WALL_S");
  }
  for (const std::string& p : settings.policies) {
    Metrics& m = by[p];
    const double wall_mean = wall[p] / static_cast<double>(seeds);
    if (protocol) {
      const std::string published = default_trace && kPublished.count(p)
                                        ? std::to_string(kPublished.at(p)).substr(0, 5)
                                        : "-";
      const SampleStats alloc = MeanAndStd(m["alloc"]);
      out.table += Format("%-14s %5zu %11.2f (%.2f) %10.2f %10.0f %10s %8.2f\n", p.c_str(), seeds,
                          alloc.mean, alloc.std, Mean(m, "frag"), Mean(m, "failed"),
                          published.c_str(), wall_mean);
    } else {
      out.table += Format("%-14s %5zu %12.2f %12.0f %12.0f %10.0f %8.2f\n", p.c_str(), seeds,
                          Mean(m, "alloc_mean"), Mean(m, "jct_mean"), Mean(m, "wait_mean"),
                          Mean(m, "failed"), wall_mean);
    }
  }
  if (!protocol && settings.fairness) {
    for (const SimRun& sim : runs) out.table += FairnessTable(sim.policy, sim.seed, sim.replay);
  }
  // Dataset locality: hits and warm-up, with and without the datalocality plugin, per run.
  for (const SimRun& sim : runs) out.table += DatasetsLine(sim.policy, sim.seed, sim.replay);
  // Defragmentation: the idle GPUs a waiting whole-GPU job could not use, per replay.
  for (const SimRun& sim : runs) {
    if (protocol) break;
    const ReplayResult& r = sim.replay;
    out.table += Format(
        "idle %s seed %llu: %.2f GPUs idle on average while jobs arrived, %.2f of them while a "
        "job needing whole GPUs waited that they would hold (%.1f GPU-hours over the run); "
        "%lld movable tasks, %lld defragment evictions, %.1f GPU-hours of work lost to "
        "evictions\n",
        sim.policy.c_str(), static_cast<unsigned long long>(sim.seed), r.idle_gpus_mean,
        r.idle_unusable_gpus_mean, r.idle_unusable_gpu_hours,
        static_cast<long long>(r.movable_tasks), static_cast<long long>(r.defragment_evictions),
        r.work_lost_gpu_s / 3600.0);
  }
  // Topology: the domains each gang spanned as it started, per level, per run.
  for (const SimRun& sim : runs) {
    for (const GangSpan& g : sim.replay.gang_spans) {
      if (g.gangs == 0) continue;
      out.table += Format(
          "gangs %s seed %llu: %s: %lld gangs, %.2f domains each on average (max %lld), %.1f%% "
          "inside one\n",
          sim.policy.c_str(), static_cast<unsigned long long>(sim.seed), g.level.c_str(),
          static_cast<long long>(g.gangs), g.mean_domains, static_cast<long long>(g.max_domains),
          g.pct_in_one);
    }
  }
  return out;
}

}  // namespace gantry

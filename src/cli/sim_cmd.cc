// `gantry sim`: replay a cluster and a workload through the engine, for several policies
// and seeds side by side, and write summary.json, timeseries.csv and report.html.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "k8s/json_text.h"
#include "sim/cluster_file.h"
#include "sim/policies.h"
#include "sim/protocol.h"
#include "sim/replay.h"
#include "sim/report.h"
#include "sim/sim_options.h"
#include "sim/trace_csv.h"
#include "sim/workload.h"

namespace gantry {
namespace {

using Json = nlohmann::ordered_json;

// The paper's means over seeds 42..51 on openb_pod_list_default.csv (Weng et al., ATC '23).
const std::map<std::string, double> kPublished = {{"random", 87.47},        {"dotprod", 90.85},
                                                  {"gpuclustering", 91.88}, {"gpupacking", 92.00},
                                                  {"bestfit", 93.08},       {"fgd", 95.39}};

struct RunSpec {
  std::string policy;
  uint64_t seed = 0;
};

struct RunOutcome {
  Status status;
  ProtocolResult protocol;
  ReplayResult replay;
  double wall_s = 0;
};

class Progress {
 public:
  explicit Progress(size_t total) : total_(total), enabled_(isatty(STDERR_FILENO) != 0) {}
  void Done(const RunSpec& run) {
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    if (!enabled_) return;
    const size_t width = 30, filled = done_ * width / total_;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %s seed %llu   ", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done_, total_, run.policy.c_str(),
                 static_cast<unsigned long long>(run.seed));
    if (done_ == total_) std::fprintf(stderr, "\n");
  }

 private:
  std::mutex mu_;
  size_t total_;
  size_t done_ = 0;
  bool enabled_;
};

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double Std(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = Mean(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

Json DistributionJson(const Distribution& d) {
  return Json{{"mean", d.mean}, {"p50", d.p50}, {"p95", d.p95}, {"p99", d.p99}, {"count", d.count}};
}

bool WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

}  // namespace

int RunSim(const SimOptions& o) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "gantry sim: %s\n", message.c_str());
    return 2;
  };
  auto checked = ParseSimOptions(o);
  if (!checked.ok()) return fail(checked.status().message());
  const SimSettings& settings = *checked;
  const bool protocol = settings.protocol;
  const std::vector<std::string>& policies = settings.policies;
  const std::vector<uint64_t>& seeds = settings.seeds;
  std::vector<SchedulerConfig> configs;
  for (const std::string& p : policies) {
    auto config = PolicyConfig(p);
    if (!config.ok()) return fail("--policy: " + config.status().message());
    if (!protocol) {
      // Replays have queues and gangs: the full default pipeline, with the policy scoring.
      SchedulerConfig full = SchedulerConfig::Default();
      full.plugins.pop_back();  // binpack
      full.plugins.push_back(config->plugins.back());
      full.tie_break = config->tie_break;
      full.nodes_to_score = settings.nodes_to_score;
      config = full;
    }
    configs.push_back(*config);
  }

  // Inputs: read and checked before anything runs.
  ClusterState cluster;
  std::vector<TracePod> pods;
  std::vector<SimJob> jobs;
  if (settings.generate_workload) {
    auto generated = GenerateWorkload(*settings.generator);
    if (!generated.ok()) return fail(generated.status().message());
    jobs = std::move(generated).value();
  }
  if (settings.generate_cluster) {
    auto nodes = GenerateNodes(settings.generator->nodes);
    if (!nodes.ok()) return fail(nodes.status().message());
    Status st = AddTraceNodes(*nodes, &cluster, "--generate");
    if (!st.ok()) return fail(st.message());
  }
  if (!o.cluster.empty()) {
    auto loaded = LoadClusterFile(o.cluster);
    if (!loaded.ok()) return fail(loaded.status().message());
    cluster = std::move(loaded).value();
  }
  if (!o.workload.empty()) {
    auto read = ReadWorkloadCsv(o.workload);
    if (!read.ok()) return fail(read.status().message());
    if (!read->pods.empty()) {
      pods = std::move(read->pods);
      jobs = JobsFromPods(pods);
    } else {
      jobs = JobsFromTraceJobs(read->jobs);
    }
  }
  if (protocol && pods.empty())
    return fail("--protocol fgd-atc23 needs an openb pod list as --workload");

  // Runs, side by side on `jobs` threads.
  std::vector<RunSpec> runs;
  std::vector<size_t> config_of;
  for (size_t p = 0; p < policies.size(); ++p) {
    for (uint64_t s : seeds) {
      runs.push_back({policies[p], s});
      config_of.push_back(p);
    }
  }
  std::vector<RunOutcome> outcomes(runs.size());
  Progress progress(runs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < runs.size(); i = next++) {
      auto start = std::chrono::steady_clock::now();
      RunOutcome& out = outcomes[i];
      if (protocol) {
        ProtocolOptions po;
        po.arrival_scale = settings.arrival_scale;
        auto r = RunFgdProtocol(cluster, pods, configs[config_of[i]], runs[i].seed, po);
        if (r.ok())
          out.protocol = std::move(r).value();
        else
          out.status = r.status();
      } else {
        ReplayOptions ro;
        ro.period_s = settings.period_s;
        auto r = RunReplay(cluster, jobs, configs[config_of[i]], runs[i].seed, ro);
        if (r.ok())
          out.replay = std::move(r).value();
        else
          out.status = r.status();
      }
      out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress.Done(runs[i]);
    }
  };
  const int threads = std::max(1, std::min<int>(settings.jobs, static_cast<int>(runs.size())));
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!outcomes[i].status.ok()) {
      return fail(runs[i].policy + " seed " + std::to_string(runs[i].seed) + ": " +
                  outcomes[i].status.message());
    }
  }

  // summary.json, timeseries.csv, report.html.
  const std::string end_key = std::to_string(std::llround(settings.arrival_scale * 100));
  Json summary;
  summary["title"] =
      protocol ? "Gantry simulation: " + o.protocol : "Gantry simulation: time-driven replay";
  summary["cluster"] = o.cluster.empty() ? "generated" : o.cluster;
  summary["workload"] = o.workload.empty() ? "generated: " + o.generate : o.workload;
  summary["protocol"] = protocol ? o.protocol : "replay";
  summary["runs"] = Json::array();
  Json timeseries = Json::array();
  std::ostringstream csv;
  csv << (protocol ? "policy,seed,arrived_pct,alloc_pct,frag_pct\n"
                   : "policy,seed,t,gpu_alloc_pct,queue_len,running_tasks\n");
  std::map<std::string, std::map<std::string, std::vector<double>>>
      by;  // policy -> metric -> values
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunOutcome& out = outcomes[i];
    Json run;
    run["policy"] = runs[i].policy;
    run["seed"] = runs[i].seed;
    auto& m = by[runs[i].policy];
    if (protocol) {
      const ProtocolResult& r = out.protocol;
      Json alloc, frag;
      for (size_t p = 0; p < r.alloc_pct.size(); ++p) {
        alloc[std::to_string(p)] = std::round(r.alloc_pct[p] * 100) / 100;
        frag[std::to_string(p)] = std::round(r.frag_pct[p] * 100) / 100;
        csv << runs[i].policy << ',' << runs[i].seed << ',' << p << ',' << r.alloc_pct[p] << ','
            << r.frag_pct[p] << '\n';
      }
      run["alloc_pct"] = alloc;
      run["frag_pct"] = frag;
      run["pods"] = r.pods;
      run["failed_pods"] = r.failed_pods;
      m["alloc"].push_back(r.alloc_pct.back());
      m["frag"].push_back(r.frag_pct.back());
      m["failed"].push_back(static_cast<double>(r.failed_pods));
    } else {
      const ReplayResult& r = out.replay;
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
      for (const ReplayRow& row : r.rows) {
        timeseries.push_back({{"policy", runs[i].policy},
                              {"seed", runs[i].seed},
                              {"t", row.t},
                              {"gpu_alloc_pct", row.gpu_alloc_pct},
                              {"queue_len", row.queue_len},
                              {"running_tasks", row.running_tasks}});
        csv << runs[i].policy << ',' << runs[i].seed << ',' << row.t << ',' << row.gpu_alloc_pct
            << ',' << row.queue_len << ',' << row.running_tasks << '\n';
      }
      m["jct_mean"].push_back(r.jct_s.mean);
      m["jct_p95"].push_back(r.jct_s.p95);
      m["wait_mean"].push_back(r.wait_s.mean);
      m["alloc_mean"].push_back(r.gpu_alloc_mean_pct);
      m["failed"].push_back(static_cast<double>(r.failed_tasks));
    }
    run["wall_s"] = out.wall_s;
    summary["runs"].push_back(run);
  }
  Json by_policy;
  for (const std::string& p : policies) {
    auto& m = by[p];
    Json entry;
    entry["runs"] = seeds.size();
    if (protocol) {
      entry["alloc_pct_" + end_key + "_mean"] = Mean(m["alloc"]);
      entry["alloc_pct_" + end_key + "_std"] = Std(m["alloc"]);
      entry["frag_pct_" + end_key + "_mean"] = Mean(m["frag"]);
      entry["failed_pods_mean"] = Mean(m["failed"]);
    } else {
      entry["jct_mean_s"] = Mean(m["jct_mean"]);
      entry["jct_p95_s"] = Mean(m["jct_p95"]);
      entry["wait_mean_s"] = Mean(m["wait_mean"]);
      entry["gpu_alloc_mean_pct"] = Mean(m["alloc_mean"]);
      entry["failed_tasks_mean"] = Mean(m["failed"]);
    }
    by_policy[p] = entry;
  }
  summary["by_policy"] = by_policy;
  const bool default_trace =
      o.workload.size() >= 26 &&
      o.workload.compare(o.workload.size() - 26, 26, "openb_pod_list_default.csv") == 0;
  if (protocol && default_trace && end_key == "130") {
    Json published;
    for (const auto& [p, v] : kPublished) published[p] = v;
    summary["published"] = published;
  }

  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) return fail(o.out + ": cannot create the directory: " + ec.message());
  const std::filesystem::path dir(o.out);
  if (!WriteFile(dir / "summary.json", k8s::JsonText(summary, 2) + "\n") ||
      !WriteFile(dir / "timeseries.csv", csv.str()) ||
      !WriteFile(dir / "report.html", RenderHtmlReport(summary, timeseries))) {
    return fail(o.out + ": cannot write the outputs");
  }

  // The terminal summary.
  if (protocol) {
    std::printf("%-14s %5s %18s %10s %10s %10s %8s\n", "POLICY", "RUNS",
                ("ALLOC@" + end_key + "% (sd)").c_str(), "FRAG%", "FAILED", "PUBLISHED", "WALL_S");
  } else {
    std::printf("%-14s %5s %12s %12s %12s %10s %8s\n", "POLICY", "RUNS", "GPU_ALLOC%", "JCT_MEAN_S",
                "WAIT_MEAN_S", "FAILED", "WALL_S");
  }
  for (const std::string& p : policies) {
    auto& m = by[p];
    double wall = 0;
    for (size_t i = 0; i < runs.size(); ++i) wall += runs[i].policy == p ? outcomes[i].wall_s : 0;
    wall /= static_cast<double>(seeds.size());
    if (protocol) {
      std::string published = default_trace && kPublished.count(p)
                                  ? std::to_string(kPublished.at(p)).substr(0, 5)
                                  : "-";
      std::printf("%-14s %5zu %11.2f (%.2f) %10.2f %10.0f %10s %8.2f\n", p.c_str(), seeds.size(),
                  Mean(m["alloc"]), Std(m["alloc"]), Mean(m["frag"]), Mean(m["failed"]),
                  published.c_str(), wall);
    } else {
      std::printf("%-14s %5zu %12.2f %12.0f %12.0f %10.0f %8.2f\n", p.c_str(), seeds.size(),
                  Mean(m["alloc_mean"]), Mean(m["jct_mean"]), Mean(m["wait_mean"]),
                  Mean(m["failed"]), wall);
    }
  }
  std::printf("\nreport: %s\n", (dir / "report.html").string().c_str());
  return 0;
}

}  // namespace gantry

#include "sim/workload.h"

#include <algorithm>
#include <map>
#include <random>

namespace gantry {
namespace {

constexpr Milli kMiB = Milli{1024} * 1024 * kMilliPerUnit;

}  // namespace

TaskSpec SpecOfPod(const TracePod& pod) {
  TaskSpec spec;
  spec.role = "pod";
  spec.requests.Set(kCpu, pod.cpu_milli);
  spec.requests.Set(kMemory, pod.memory_mib * kMiB);
  if (pod.num_gpu == 1 && pod.gpu_milli < kGpuMilliWhole) {
    spec.gpu.milli = pod.gpu_milli;
  } else {
    spec.gpu.count = pod.num_gpu;
  }
  for (const std::string& model : pod.gpu_spec) spec.gpu.models.push_back(GpuModels().Intern(model));
  return spec;
}

TaskSpec SpecOfJob(const TraceJob& job) {
  TaskSpec spec;
  spec.role = "pod";
  spec.requests.Set(kCpu, job.cpu);
  spec.requests.Set(kMemory, job.memory);
  spec.gpu.count = job.gpus_per_pod;
  spec.gpu.milli = job.gpus_per_pod > 0 ? 0 : job.gpu_milli;
  for (const std::string& model : job.gpu_models) spec.gpu.models.push_back(GpuModels().Intern(model));
  spec.priority = job.priority;
  return spec;
}

std::vector<SimJob> JobsFromPods(const std::vector<TracePod>& pods) {
  int64_t start = INT64_MAX;
  for (const TracePod& p : pods) {
    if (p.has_times) start = std::min(start, p.creation_time);
  }
  if (start == INT64_MAX) start = 0;
  std::vector<SimJob> jobs;
  jobs.reserve(pods.size());
  for (const TracePod& p : pods) {
    SimJob j;
    j.name = p.name;
    j.spec = SpecOfPod(p);
    if (p.has_times) {
      j.submit = p.creation_time - start;
      j.duration = p.deletion_time > p.creation_time ? p.deletion_time - p.creation_time : 0;
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::vector<SimJob> JobsFromTraceJobs(const std::vector<TraceJob>& trace) {
  std::vector<SimJob> jobs;
  jobs.reserve(trace.size());
  for (const TraceJob& t : trace) {
    SimJob j;
    j.name = t.name;
    j.submit = t.submit_time;
    j.duration = t.duration;
    j.pods = t.pods;
    j.min_member = t.min_member;
    j.queue = t.queue;
    j.priority = t.priority;
    j.spec = SpecOfJob(t);
    jobs.push_back(std::move(j));
  }
  return jobs;
}

Result<std::vector<SimJob>> GenerateWorkload(const GeneratorOptions& o) {
  if (o.pods <= 0) return Status::Invalid("generator: pods must be positive");
  if (o.arrivals_per_s <= 0) return Status::Invalid("generator: the arrival rate must be positive");
  if (o.pct_single < 0 || o.pct_shared < 0 || o.pct_gang < 0 || o.pct_cpu < 0 ||
      o.pct_single + o.pct_shared + o.pct_gang + o.pct_cpu != 100) {
    return Status::Invalid("generator: the mix percentages must be non-negative and add up to 100");
  }
  std::mt19937_64 rng(o.seed);
  std::exponential_distribution<double> gap(o.arrivals_per_s);
  std::exponential_distribution<double> life(1.0 / static_cast<double>(std::max<int64_t>(1, o.mean_duration_s)));
  std::uniform_int_distribution<int> pct(0, 99);
  static constexpr int32_t kShares[] = {100, 250, 500, 750};
  std::vector<SimJob> jobs;
  double now = 0;
  int64_t made = 0;
  while (made < o.pods) {
    now += gap(rng);
    SimJob j;
    j.name = "gen-" + std::to_string(jobs.size());
    j.submit = static_cast<int64_t>(now);
    j.duration = std::max<int64_t>(1, static_cast<int64_t>(life(rng)));
    j.queue = "team-" + std::to_string(jobs.size() % 4);
    j.spec.role = "pod";
    int p = pct(rng);
    if (p < o.pct_single) {
      j.spec.requests = {{kCpu, 8000}, {kMemory, 64 * 1024 * kMiB}};
      j.spec.gpu.count = 1;
    } else if (p < o.pct_single + o.pct_shared) {
      j.spec.requests = {{kCpu, 4000}, {kMemory, 16 * 1024 * kMiB}};
      j.spec.gpu.milli = kShares[pct(rng) % 4];
    } else if (p < o.pct_single + o.pct_shared + o.pct_gang) {
      j.spec.requests = {{kCpu, 32000}, {kMemory, 256 * 1024 * kMiB}};
      j.spec.gpu.count = 8;
      j.pods = 4;
      j.min_member = 4;
    } else {
      j.spec.requests = {{kCpu, 4000}, {kMemory, 8 * 1024 * kMiB}};
    }
    made += j.pods;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::vector<TraceNode> GenerateNodes(int32_t count) {
  // 768 GiB, not 1 TiB: memory is counted in milli-bytes, and the cluster's int64 total
  // overflows past 8,388 nodes of 1 TiB (11,184 of 768 GiB). The generated mix never uses
  // more than 704 GiB of a node (its CPU runs out first), so memory never decides a placement.
  constexpr int64_t kNodeMemoryMiB = 768 * 1024;
  std::vector<TraceNode> nodes;
  for (int32_t i = 0; i < count; ++i) {
    nodes.push_back(TraceNode{"gen-node-" + std::to_string(i), 128000, kNodeMemoryMiB, 8, "A100"});
  }
  return nodes;
}

WorkloadProfile ProfileOf(const std::vector<SimJob>& jobs) {
  // Key: the exact shape; std::map keeps the type order deterministic.
  std::map<std::string, size_t> index;
  WorkloadProfile profile;
  for (const SimJob& j : jobs) {
    std::string key = j.spec.requests.ToString() + "|" + std::to_string(j.spec.gpu.count) + "|" +
                      std::to_string(j.spec.gpu.milli) + "|" + std::to_string(j.spec.gpu.memory_mib);
    for (GpuModelId m : j.spec.gpu.models) key += "|" + std::to_string(m);
    auto [it, inserted] = index.emplace(key, profile.types.size());
    if (inserted) profile.types.push_back(TaskType{j.spec.requests, j.spec.gpu, 0});
    profile.types[it->second].count += j.pods;
    profile.total += j.pods;
  }
  std::stable_sort(profile.types.begin(), profile.types.end(),
                   [](const TaskType& a, const TaskType& b) { return a.count > b.count; });
  return profile;
}

}  // namespace gantry

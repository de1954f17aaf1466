#include "sim/workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <unordered_map>

#include "model/limits.h"

namespace gantry {
namespace {

constexpr Milli kMiB = Milli{1024} * 1024 * kMilliPerUnit;

std::string Number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

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
  for (const std::string& model : pod.gpu_spec)
    spec.gpu.models.push_back(GpuModels().Intern(model));
  return spec;
}

TaskSpec SpecOfJob(const TraceJob& job) {
  TaskSpec spec;
  spec.role = "pod";
  spec.requests.Set(kCpu, job.cpu);
  spec.requests.Set(kMemory, job.memory);
  spec.gpu.count = job.gpus_per_pod;
  spec.gpu.milli = job.gpus_per_pod > 0 ? 0 : job.gpu_milli;
  for (const std::string& model : job.gpu_models)
    spec.gpu.models.push_back(GpuModels().Intern(model));
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
      if (p.deletion_time != 0)
        j.duration = std::max<int64_t>(1, p.deletion_time - p.creation_time);
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

Status CheckGeneratorOptions(const GeneratorOptions& o) {
  auto range = [](const char* what, int64_t v, int64_t min, int64_t max) {
    if (v >= min && v <= max) return Status::Ok();
    return Status::Invalid("generator: " + std::string(what) + " " + std::to_string(v) +
                           " is out of range [" + std::to_string(min) + ", " + std::to_string(max) +
                           "]");
  };
  GANTRY_RETURN_IF_ERROR(range("nodes", o.nodes, 1, kMaxNodes));
  GANTRY_RETURN_IF_ERROR(range("pods", o.pods, 1, kMaxTasks));
  // Written to refuse NaN: every comparison with it is false.
  if (!(o.arrivals_per_s >= kMinArrivalRate && o.arrivals_per_s <= kMaxArrivalRate)) {
    return Status::Invalid("generator: rate (arrivals per second) " + Number(o.arrivals_per_s) +
                           " is out of range [" + Number(kMinArrivalRate) + ", " +
                           Number(kMaxArrivalRate) + "]");
  }
  GANTRY_RETURN_IF_ERROR(range("duration (mean seconds)", o.mean_duration_s, 1, kMaxMeanDurationS));
  GANTRY_RETURN_IF_ERROR(range("movable (percent of jobs)", o.pct_movable, 0, 100));
  if (o.queues.size() > kMaxGeneratedQueues) {
    return Status::Invalid("generator: " + std::to_string(o.queues.size()) +
                           " queues, more than the limit of " +
                           std::to_string(kMaxGeneratedQueues));
  }
  for (const auto& [name, weight] : o.queues) {
    if (name.empty() || name.size() > kMaxNameLength)
      return Status::Invalid("generator: a queue name must have 1 to " +
                             std::to_string(kMaxNameLength) + " characters");
    GANTRY_RETURN_IF_ERROR(
        range(("weight of queue " + name).c_str(), weight, 1, kMaxGeneratedQueueWeight));
  }
  const int32_t pct[] = {o.pct_single, o.pct_shared, o.pct_gang, o.pct_cpu};
  int64_t sum = 0;
  for (int32_t p : pct) sum += p;
  if (*std::min_element(std::begin(pct), std::end(pct)) < 0 || sum != 100) {
    return Status::Invalid(
        "generator: the mix percentages must be non-negative and add up to 100, got " +
        std::to_string(o.pct_single) + "/" + std::to_string(o.pct_shared) + "/" +
        std::to_string(o.pct_gang) + "/" + std::to_string(o.pct_cpu));
  }
  return Status::Ok();
}

namespace {

// A stream of draws apart from the generator's: choosing movable jobs changes nothing else.
constexpr uint64_t kMovableStream = 0x6d6f7661626c6521ULL;

// A number in [0, 100) from a seed and an index (splitmix64's finalizer).
int32_t PercentDraw(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<int32_t>((z ^ (z >> 31)) % 100);
}

}  // namespace

bool SelectsMovable(const MovableSelection& selection, const SimJob& job, size_t index,
                    uint64_t seed) {
  switch (selection.kind) {
    case MovableSelection::Kind::kNone:
      return false;
    case MovableSelection::Kind::kAll:
      return true;
    case MovableSelection::Kind::kShared:
      return job.spec.gpu.shared();
    case MovableSelection::Kind::kPercent:
      return PercentDraw(seed ^ kMovableStream, index) < selection.pct;
  }
  return false;
}

Result<std::vector<SimJob>> GenerateWorkload(const GeneratorOptions& o) {
  GANTRY_RETURN_IF_ERROR(CheckGeneratorOptions(o));
  std::mt19937_64 rng(o.seed);
  std::exponential_distribution<double> gap(o.arrivals_per_s);
  std::exponential_distribution<double> life(1.0 / static_cast<double>(o.mean_duration_s));
  std::uniform_int_distribution<int> pct(0, 99);
  static constexpr int32_t kShares[] = {100, 250, 500, 750};
  std::vector<SimJob> jobs;
  double now = 0;
  int64_t made = 0;
  while (made < o.pods) {
    now += gap(rng);
    SimJob j;
    j.name = "gen-" + std::to_string(jobs.size());
    // Within range by the checks above (at most kMaxTasks arrivals at kMinArrivalRate), but
    // a double must be checked before it becomes an integer.
    if (!(now <= static_cast<double>(kMaxTraceSeconds))) {
      return Status::Invalid("generator: arrivals at rate " + Number(o.arrivals_per_s) + " pass " +
                             std::to_string(kMaxTraceSeconds) + " s: raise the rate or lower pods");
    }
    j.submit = static_cast<int64_t>(now);
    j.duration = std::clamp<int64_t>(
        static_cast<int64_t>(std::min(life(rng), static_cast<double>(kMaxTraceSeconds))), 1,
        kMaxTraceSeconds);
    j.queue = "team-" + std::to_string(jobs.size() % 4);
    j.spec.role = "pod";
    int p = pct(rng);
    if (!o.queues.empty()) {
      static constexpr int32_t kGangSizes[] = {1, 2, 4, 8};
      j.queue = o.queues[static_cast<size_t>(pct(rng)) % o.queues.size()].first;
      j.spec.requests = {{kCpu, 8000}, {kMemory, 64 * 1024 * kMiB}};
      j.spec.gpu.count = 1;
      j.pods = kGangSizes[pct(rng) % 4];
      j.min_member = p < 20 ? 1 : j.pods;  // one in five elastic
      j.priority = pct(rng) % 3;
    } else if (p < o.pct_single) {
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
    // At the very limit, the last gang is cut to fit.
    if (made + j.pods > kMaxTasks) j.pods = j.min_member = static_cast<int32_t>(kMaxTasks - made);
    if (j.min_member > 1) j.topology = o.gang_topology;
    j.movable = PercentDraw(o.seed ^ kMovableStream, jobs.size()) < o.pct_movable;
    made += j.pods;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

Status AddGeneratedQueues(const GeneratorOptions& options, ClusterState* cluster) {
  for (const auto& [name, weight] : options.queues) {
    if (cluster->FindQueue(name) != kNone) continue;
    Queue queue;
    queue.name = name;
    queue.weight = weight;
    auto added = cluster->AddQueue(std::move(queue));
    if (!added.ok()) return added.status().WithPrefix("--generate queues");
  }
  return Status::Ok();
}

Result<std::vector<TraceNode>> GenerateNodes(int64_t count) {
  if (count < 1 || count > kMaxNodes) {
    return Status::Invalid("generator: nodes " + std::to_string(count) + " is out of range [1, " +
                           std::to_string(kMaxNodes) + "]");
  }
  // 768 GiB, not 1 TiB: memory is counted in milli-bytes, and the cluster's int64 total
  // overflows past 8,388 nodes of 1 TiB (11,184 of 768 GiB). The generated mix never uses
  // more than 704 GiB of a node (its CPU runs out first), so memory never decides a placement.
  constexpr int64_t kNodeMemoryMiB = 768 * 1024;
  std::vector<TraceNode> nodes;
  nodes.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    nodes.push_back(
        TraceNode{"gen-node-" + std::to_string(i), 128000, kNodeMemoryMiB, 8, "A100", 0});
  }
  return nodes;
}

WorkloadProfile ProfileOf(const std::vector<SimJob>& jobs, const ClusterState* waiting) {
  // A type per task shape (where a task may run does not make another type), in the
  // order first seen; the sort below keeps that order among equal counts.
  std::unordered_map<TaskShape, size_t, TaskShapeHash> index;
  WorkloadProfile profile;
  auto count = [&](const TaskSpec& spec, int64_t n) {
    auto [it, inserted] = index.try_emplace(TaskShape::Of(spec), profile.types.size());
    if (inserted) profile.types.push_back(TaskType{spec.requests, spec.gpu, 0});
    profile.types[it->second].count += n;
    profile.total += n;
  };
  if (waiting != nullptr) {
    for (JobId j : waiting->jobs_with_pending()) {
      for (TaskId t : waiting->job(j).tasks) {
        if (waiting->task(t).state == TaskState::kPending) count(waiting->spec_of(t), 1);
      }
    }
  }
  for (const SimJob& j : jobs) count(j.spec, j.pods);
  std::stable_sort(profile.types.begin(), profile.types.end(),
                   [](const TaskType& a, const TaskType& b) { return a.count > b.count; });
  return profile;
}

}  // namespace gantry

#include "sim/protocol.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

#include "model/limits.h"

#include "engine/fragmentation.h"
#include "engine/random.h"
#include "engine/session.h"
#include "sim/workload.h"

namespace gantry {
namespace {

int64_t GpuDemand(const TracePod& p) {
  return static_cast<int64_t>(p.num_gpu) * p.gpu_milli;
}

std::string Number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

// Positions 0..n-1, each alive or removed: the k-th alive one found and removed in
// O(log n) (a Fenwick tree of counts), so that dropping most of a long list is not
// quadratic as erasing from a vector is.
class AlivePositions {
 public:
  explicit AlivePositions(size_t n) : tree_(n + 1, 0), alive_(n, true) {
    for (size_t i = 1; i <= n; ++i) {
      tree_[i] += 1;
      const size_t parent = i + (i & (~i + 1));
      if (parent <= n) tree_[parent] += tree_[i];
    }
    while ((top_ << 1) <= n) top_ <<= 1;
  }
  // REQUIRES: k < the number alive. Removes the k-th alive position (0-based), returns it.
  size_t RemoveKth(size_t k) {
    size_t pos = 0;
    for (size_t step = top_; step > 0; step >>= 1) {
      if (pos + step < tree_.size() && tree_[pos + step] <= k) {
        pos += step;
        k -= tree_[pos];
      }
    }
    alive_[pos] = false;
    for (size_t i = pos + 1; i < tree_.size(); i += i & (~i + 1)) --tree_[i];
    return pos;
  }
  bool alive(size_t i) const { return alive_[i]; }

 private:
  std::vector<size_t> tree_;
  std::vector<bool> alive_;
  size_t top_ = 1;
};

// With --gpu-api dra: the devices DRA allocated the pod's claim are the GPUs the engine
// placed it on (the same set; DRA lists them in the order the policy chose them).
Status CheckDraAllocation(const PublishedGpus& published, const ClusterState& cluster,
                          const BindDecision& bind) {
  const TaskSpec& spec = cluster.spec_of(bind.task);
  if (spec.resource_claims.empty()) return Status::Ok();
  const Node& node = cluster.node(bind.node);
  const std::string where = "pod " + cluster.task(bind.task).name + " on node " + node.name;
  if (bind.devices.size() != 1 || !bind.devices[0]) {
    return Status::Failed(where + ": placed without its claim allocated");
  }
  auto allocated = published.GpusOf(node, *bind.devices[0]);
  if (!allocated.ok()) return allocated.status().WithPrefix(where);
  std::vector<int32_t> chosen = bind.gpus;
  std::sort(allocated->begin(), allocated->end());
  std::sort(chosen.begin(), chosen.end());
  if (*allocated != chosen) {
    auto list = [](const std::vector<int32_t>& gpus) {
      std::string text;
      for (int32_t g : gpus) text += (text.empty() ? "" : ",") + std::to_string(g);
      return "[" + text + "]";
    };
    return Status::Failed(where + ": DRA allocated GPUs " + list(*allocated) +
                          ", the engine placed it on " + list(chosen));
  }
  return Status::Ok();
}

}  // namespace

int64_t RoundHalfEven(int64_t numerator, int64_t denominator) {
  int64_t q = numerator / denominator;
  int64_t r = numerator % denominator;
  if (2 * r > denominator || (2 * r == denominator && q % 2 == 1)) ++q;
  return q;
}

Status CheckProtocolOptions(const ProtocolOptions& options) {
  // Written to refuse NaN: every comparison with it is false.
  if (!(options.arrival_scale >= kMinArrivalScale && options.arrival_scale <= kMaxArrivalScale)) {
    return Status::Invalid("the arrival scale must be in [" + Number(kMinArrivalScale) + ", " +
                           Number(kMaxArrivalScale) + "], got " + Number(options.arrival_scale));
  }
  if (!(options.typical_coverage > 0 && options.typical_coverage <= 1)) {
    return Status::Invalid("the typical coverage must be above 0 and at most 1, got " +
                           Number(options.typical_coverage));
  }
  return Status::Ok();
}

Result<std::vector<size_t>> ProtocolSequence(const std::vector<TracePod>& pods,
                                             int64_t capacity_milli, uint64_t seed,
                                             double arrival_scale) {
  ProtocolOptions options;
  options.arrival_scale = arrival_scale;
  GANTRY_RETURN_IF_ERROR(CheckProtocolOptions(options));
  if (capacity_milli <= 0) return Status::Invalid("the cluster has no GPUs");
  const std::string too_long = "the arrival sequence passes the limit of " +
                               std::to_string(kMaxTasks) + " tasks in a workload (arrival scale " +
                               Number(arrival_scale) + ")";
  if (static_cast<int64_t>(pods.size()) > kMaxTasks) return Status::Invalid(too_long);
  const double target_milli = arrival_scale * static_cast<double>(capacity_milli);
  if (!(target_milli < 0x1p62)) return Status::Invalid(too_long);
  const auto target = static_cast<int64_t>(target_milli);

  Rng rng(seed);
  std::vector<size_t> order(pods.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Uniform(i)]);
  int64_t total = 0;
  for (const TracePod& p : pods) total += GpuDemand(p);
  // Too much already: drop pods at random until the demand is within the target (the k-th
  // of those left each time, keeping the others' order).
  if (total > target) {
    AlivePositions alive(order.size());
    size_t left = order.size();
    while (total > target && left > 0) {
      const size_t position = alive.RemoveKth(rng.Uniform(left--));
      total -= GpuDemand(pods[order[position]]);
    }
    std::vector<size_t> kept;
    kept.reserve(left);
    for (size_t i = 0; i < order.size(); ++i) {
      if (alive.alive(i)) kept.push_back(order[i]);
    }
    order = std::move(kept);
  }
  // A workload that asks for no GPU share can never reach the target: no tail.
  const bool any_gpu =
      std::any_of(pods.begin(), pods.end(), [](const TracePod& p) { return p.gpu_milli > 0; });
  // Too little: draw pods with replacement, stopping at the first one whose per-GPU share
  // would pass the target (the paper's simulator tests the per-GPU share, then adds the
  // pod's whole demand; kept as it is, so a multi-GPU pod may overshoot a little).
  while (any_gpu) {
    size_t k = rng.Uniform(pods.size());
    if (total + pods[k].gpu_milli > target) break;
    if (static_cast<int64_t>(order.size()) >= kMaxTasks) return Status::Invalid(too_long);
    order.push_back(k);
    total += GpuDemand(pods[k]);
  }
  return order;
}

WorkloadProfile PodProfile(const std::vector<TracePod>& pods) {
  using Key = std::tuple<int64_t, int32_t, int32_t, std::string>;  // cpu, milli, count, models
  std::map<Key, int64_t> counts;
  std::map<Key, const TracePod*> example;
  for (const TracePod& p : pods) {
    std::string models;
    for (const auto& m : p.gpu_spec) models += (models.empty() ? "" : "|") + m;
    Key key{p.cpu_milli, p.gpu_milli, p.num_gpu, models};
    counts[key]++;
    example.emplace(key, &p);
  }
  std::vector<std::pair<Key, int64_t>> sorted(counts.begin(), counts.end());
  // Most frequent first; ties by the key, descending (as the paper's simulator sorts).
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return a.first > b.first;
  });
  WorkloadProfile profile;
  for (const auto& [key, count] : sorted) {
    TaskSpec spec = SpecOfPod(*example[key]);
    profile.types.push_back(TaskType{spec.requests, spec.gpu, count});
    profile.total += count;
  }
  return profile;
}

Result<ProtocolResult> RunFgdProtocol(const ClusterState& nodes, const std::vector<TracePod>& pods,
                                      const SchedulerConfig& config, uint64_t seed,
                                      const ProtocolOptions& options) {
  GANTRY_RETURN_IF_ERROR(CheckProtocolOptions(options));
  auto policy = Policy::Compile(config);
  if (!policy.ok()) return policy.status();
  if (pods.empty()) return Status::Invalid("the workload is empty");
  if (static_cast<int64_t>(pods.size()) > kMaxTasks) {
    return Status::Invalid("the workload has " + std::to_string(pods.size()) +
                           " pods, above the limit of " + std::to_string(kMaxTasks) +
                           " tasks in a workload");
  }
  for (const TracePod& pod : pods) GANTRY_RETURN_IF_ERROR(CheckTracePod(pod));
  if (std::none_of(pods.begin(), pods.end(), [](const TracePod& p) { return p.num_gpu > 0; })) {
    return Status::Invalid("the workload asks for no GPUs: the protocol measures GPU allocation");
  }
  const bool dra = options.gpu_api == GpuApi::kDra;
  if (dra && options.dra_verdicts == nullptr) {
    return Status::Invalid(
        "--gpu-api dra needs CEL for the device class's selector: this build "
        "of Gantry has no CEL evaluator (GANTRY_DRA_CEL=OFF)");
  }
  ClusterState cluster = nodes;
  const int64_t capacity = cluster.capacity().Get(kGpu);
  if (capacity <= 0) return Status::Invalid("the cluster has no GPUs");
  cluster.SetWorkloadProfile(PodProfile(pods));
  std::optional<PublishedGpus> published;
  if (dra) published.emplace(cluster);

  Queue queue;
  queue.name = "default";
  const QueueId queue_id = cluster.AddQueue(std::move(queue)).value();
  // Pods of one trace row share a spec, so that the engine's per-spec caches apply.
  std::vector<SpecId> spec_of_pod(pods.size(), kNone);
  auto drawn = ProtocolSequence(pods, capacity, seed, options.arrival_scale);
  if (!drawn.ok()) return drawn.status();
  const std::vector<size_t> sequence = std::move(drawn).value();
  std::vector<TaskId> task_of(sequence.size());
  for (size_t i = 0; i < sequence.size(); ++i) {
    const TracePod& pod = pods[sequence[i]];
    Job job;
    job.name = pod.name + "#" + std::to_string(i);
    SpecId spec = spec_of_pod[sequence[i]];
    if (dra && pod.num_gpu > 0) {
      // Each pod's own claim (as one made from a template): a spec of its own.
      TaskSpec with_claim = SpecOfPod(pod);
      with_claim.namespace_ = std::string(kSimClaimNamespace);
      auto claim = published->AddClaim(pod.name + "-" + std::to_string(i), with_claim.gpu);
      if (!claim.ok()) return claim.status();
      with_claim.resource_claims.push_back(std::move(*claim));
      spec = cluster.AddSpec(std::move(with_claim));
    } else if (spec == kNone) {
      spec = spec_of_pod[sequence[i]] = cluster.AddSpec(SpecOfPod(pod));
    }
    job.queue = queue_id;
    job.creation = static_cast<int64_t>(i);
    auto job_id = cluster.AddJob(std::move(job));
    if (!job_id.ok()) return job_id.status();
    auto task = cluster.AddTask(*job_id, spec, pod.name);
    if (!task.ok()) return task.status();
    task_of[i] = *task;
  }

  // One session places every pod in arrival order (job order is creation order) and never
  // retries one: exactly the protocol, since nothing departs.
  Decisions decisions;
  {
    Snapshot snapshot(cluster);
    if (dra) snapshot.set_devices(published->Inputs(options.dra_verdicts));
    Session session(snapshot, *policy, SessionOptions{0, seed});
    decisions = session.Run();
  }
  std::vector<const BindDecision*> bind_of(cluster.tasks().size(), nullptr);
  for (const BindDecision& b : decisions.binds) bind_of[b.task] = &b;

  // Replay the binds in arrival order to record allocation and fragmentation per pod.
  FragmentationMeasure measure(cluster.workload_profile(), options.typical_coverage);
  std::vector<double> node_frag(cluster.nodes().size(), 0);
  double frag_total = 0;
  auto frag_of = [&](NodeId n) {
    const Node& node = cluster.node(n);
    std::vector<int32_t> free;
    for (const GpuDevice& g : node.gpus) free.push_back(g.free_milli());
    GpuModelId model = node.gpus.empty() ? 0 : node.gpus[0].model;
    return measure.NodeFragmentation(node.allocatable.Get(kCpu) - node.used.Get(kCpu), model, free);
  };
  for (NodeId n = 0; n < cluster.nodes().size(); ++n) frag_total += node_frag[n] = frag_of(n);

  // Buckets 0..round(100 x scale) percent of capacity arrived.
  const auto buckets = static_cast<size_t>(std::llround(options.arrival_scale * 100)) + 1;
  std::vector<double> alloc_sum(buckets, 0), frag_sum(buckets, 0);
  std::vector<int64_t> events(buckets, 0);
  ProtocolResult result;
  int64_t arrived = 0;
  int64_t used = 0;
  for (size_t i = 0; i < sequence.size(); ++i) {
    arrived += GpuDemand(pods[sequence[i]]);
    const BindDecision* bind = bind_of[task_of[i]];
    if (bind == nullptr) {
      result.failed_pods++;
    } else {
      if (dra) GANTRY_RETURN_IF_ERROR(CheckDraAllocation(*published, cluster, *bind));
      // Place() checks again that the engine's decision fits: an invariant, not trust.
      GANTRY_RETURN_IF_ERROR(cluster.Place(bind->task, bind->node, bind->gpus));
      used += static_cast<int64_t>(bind->gpus.size()) * cluster.task(bind->task).gpu_milli_each;
      frag_total -= node_frag[bind->node];
      frag_total += node_frag[bind->node] = frag_of(bind->node);
    }
    auto bucket = static_cast<size_t>(RoundHalfEven(100 * arrived, capacity));
    if (bucket >= buckets) continue;
    alloc_sum[bucket] += 100.0 * static_cast<double>(used) / static_cast<double>(capacity);
    frag_sum[bucket] += 100.0 * frag_total / static_cast<double>(capacity);
    events[bucket]++;
  }
  result.pods = static_cast<int64_t>(sequence.size());
  // A percent no pod's arrival landed on takes the mean of its neighbours' events.
  result.alloc_pct.assign(buckets, 0);
  result.frag_pct.assign(buckets, 0);
  for (size_t b = 0; b < buckets; ++b) {
    double a = alloc_sum[b], f = frag_sum[b];
    int64_t n = events[b];
    if (n == 0) {
      for (size_t k = b == 0 ? 0 : b - 1; k <= b + 1 && k < buckets; ++k) {
        a += alloc_sum[k];
        f += frag_sum[k];
        n += events[k];
      }
    }
    result.alloc_pct[b] = n == 0 ? 0 : a / static_cast<double>(n);
    result.frag_pct[b] = n == 0 ? 0 : f / static_cast<double>(n);
  }
  return result;
}

}  // namespace gantry

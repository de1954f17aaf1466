// The experiment of Weng et al., "Beware of Fragmentation" (USENIX ATC '23), on Gantry's
// engine (`gantry sim --protocol fgd-atc23`): the pod list shuffled, then pods drawn at
// random with replacement until their GPU requests reach arrival_scale x the cluster's
// GPUs; placed one by one, no departures, a pod that fits nowhere fails and is not
// retried. See docs/research/fgd-simulator-notes.md for the details reproduced here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "model/cluster.h"
#include "model/dra_verdicts.h"
#include "sim/dra_gpus.h"
#include "sim/trace_csv.h"

namespace gantry {

// The GPU demand the protocol lets arrive, x capacity: the paper's is 1.3; below 1 % the
// curve has no point past 0, and past a few times capacity every further pod fails. The
// maximum bounds the percent buckets (100 x scale).
inline constexpr double kMinArrivalScale = 0.01;
inline constexpr double kMaxArrivalScale = 100;

struct ProtocolOptions {
  double arrival_scale = 1.3;
  // Fragmentation is reported against the task types that make up this share of pods
  // (the paper's "typical pods"; policies choose their own, see the fgd plugin).
  double typical_coverage = 0.95;
  // kDra: the nodes' GPUs are DRA devices and each pod's GPUs a ResourceClaim
  // (sim/dra_gpus.h), allocated by the engine's DRA allocator with CEL's verdicts from
  // `dra_verdicts` (required then; one run's, not shared between threads).
  GpuApi gpu_api = GpuApi::kDevicePlugin;
  const dra::SelectorVerdicts* dra_verdicts = nullptr;
};

struct ProtocolResult {
  int64_t pods = 0;         // arrived
  int64_t failed_pods = 0;  // found no node
  // Index p = 0..round(100 * arrival_scale): the mean over the pods whose arrival took the
  // arrived GPU demand to p% (rounded) of capacity, of the GPU allocation (% of capacity)
  // and of the fragmented GPU capacity (% of capacity), right after each such pod.
  std::vector<double> alloc_pct;
  std::vector<double> frag_pct;
};

// The arrival scale in [kMinArrivalScale, kMaxArrivalScale] and the coverage in (0, 1]; NaN and
// infinities are refused. Errors name the option and quote the value.
Status CheckProtocolOptions(const ProtocolOptions& options);

// The arrival sequence for a seed: indexes into `pods`. Refuses a scale that
// CheckProtocolOptions refuses, a capacity that is not positive, and a sequence longer than
// kMaxTasks (found as it is drawn, so memory stays bounded).
Result<std::vector<size_t>> ProtocolSequence(const std::vector<TracePod>& pods,
                                             int64_t capacity_milli, uint64_t seed,
                                             double arrival_scale);

// The pods' task types, most frequent first, grouped by CPU, GPU count, GPU share and
// allowed models (not memory), as the paper's simulator does.
WorkloadProfile PodProfile(const std::vector<TracePod>& pods);

// REQUIRES: `nodes` holds nodes only (no queues or jobs). Refuses invalid options, an
// invalid config and pods that CheckTracePod refuses, naming what is wrong. With
// GpuApi::kDra, fails where DRA allocated a pod other devices than the GPUs the engine
// placed it on (the two views would part).
Result<ProtocolResult> RunFgdProtocol(const ClusterState& nodes, const std::vector<TracePod>& pods,
                                      const SchedulerConfig& config, uint64_t seed,
                                      const ProtocolOptions& options);

// Python's round(): to nearest, halves to even. For the percent buckets.
int64_t RoundHalfEven(int64_t numerator, int64_t denominator);

}  // namespace gantry

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
#include "sim/trace_csv.h"

namespace gantry {

struct ProtocolOptions {
  double arrival_scale = 1.3;
  // Fragmentation is reported against the task types that make up this share of pods
  // (the paper's "typical pods"; policies choose their own, see the fgd plugin).
  double typical_coverage = 0.95;
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

// The arrival sequence for a seed: indexes into `pods`.
std::vector<size_t> ProtocolSequence(const std::vector<TracePod>& pods, int64_t capacity_milli,
                                     uint64_t seed, double arrival_scale);

// The pods' task types, most frequent first, grouped by CPU, GPU count, GPU share and
// allowed models (not memory), as the paper's simulator does.
WorkloadProfile PodProfile(const std::vector<TracePod>& pods);

// REQUIRES: `nodes` holds nodes only (no queues or jobs).
Result<ProtocolResult> RunFgdProtocol(const ClusterState& nodes,
                                      const std::vector<TracePod>& pods,
                                      const SchedulerConfig& config, uint64_t seed,
                                      const ProtocolOptions& options);

// Python's round(): to nearest, halves to even. For the percent buckets.
int64_t RoundHalfEven(int64_t numerator, int64_t denominator);

}  // namespace gantry

// The replay's measure of fragmentation as waiting jobs feel it: GPUs that are idle while
// a job that needs whole GPUs waits although the idle GPUs in total would hold it.
#pragma once

#include <span>

#include "engine/decisions.h"
#include "model/cluster.h"

namespace gantry {

struct IdleGpus {
  double idle = 0;  // GPUs free on nodes that take tasks, less those promised to pipelined tasks
  // Of `idle`, those that waiting jobs wanted: the GPUs the pending jobs that need whole
  // GPUs (none of whose tasks is pipelined) ask for, for their gang minimum (or their next
  // task), counting only jobs that the free totals (GPUs, CPU, memory) would hold, at most
  // `idle`. Fragments kept them waiting, or other limits on where they may go (selectors,
  // GPU models): the measure does not tell them apart.
  double unusable = 0;
};

// `nominated`: tasks pipelined onto room being released, which bind at the next session.
IdleGpus MeasureIdleGpus(const ClusterState& cluster, std::span<const PipelineDecision> nominated);

}  // namespace gantry

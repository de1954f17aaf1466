// `gantry sim --gpu-api dra` in a time-driven replay: the cluster's GPUs published as DRA
// devices (sim/dra_gpus.h) and each GPU pod given a claim of its own, which is allocated
// when the pod is placed (by a session, or bound onto a victim's room as it was pipelined)
// and deallocated when it ends or is evicted, as the resourceclaim controller does for a
// claim made from a template. Each session so sees the devices the running pods hold, and
// the engine's GPU choice is what DRA allocates (checked at every bind, as the protocol
// checks it).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/decisions.h"
#include "engine/snapshot.h"
#include "model/cluster.h"
#include "model/dra_verdicts.h"
#include "model/status.h"
#include "sim/dra_gpus.h"

namespace gantry {

class ReplayDevices {
 public:
  // REQUIRES: `verdicts` outlives this. Refused: a cluster that starts with running GPU
  // tasks (their devices would have no claims).
  static Result<ReplayDevices> Make(const ClusterState& cluster,
                                    const dra::SelectorVerdicts* verdicts);

  // `spec` with a claim of its own named `name` for its GPUs; `spec` as it is when it asks
  // for none.
  Result<TaskSpec> WithClaim(TaskSpec spec, const std::string& name);
  // What a session reads. REQUIRES: this outlives the session and is not changed during it.
  DeviceInputs Inputs() const {
    DeviceInputs inputs = published_.Inputs(verdicts_);
    inputs.allocated = &allocated_;
    return inputs;
  }

  // A session placed the task: its claim gets what the session allocated, which must be
  // the GPUs the engine chose.
  Status Bound(const ClusterState& cluster, const BindDecision& bind);
  // The task is bound outside a session (pipelined onto its victims' room): its claim is
  // allocated there, the engine's GPUs first; an error where they cannot be.
  Status BoundOutside(const ClusterState& cluster, TaskId task, NodeId node,
                      std::span<const int32_t> gpus);
  // The task ended or was evicted: its claim is deallocated. An error where it was not
  // allocated (a placement that skipped its claim).
  Status Released(const ClusterState& cluster, TaskId task);

 private:
  ReplayDevices(const ClusterState& cluster, const dra::SelectorVerdicts* verdicts)
      : published_(cluster), verdicts_(verdicts) {}
  // The task's claim, or null when it has none.
  dra::ResourceClaim* ClaimOf(const ClusterState& cluster, TaskId task);
  // Sets the claim's allocation, reserved for the task, after checking it is on the
  // engine's GPUs.
  Status Allocated(const ClusterState& cluster, TaskId task, NodeId node,
                   std::span<const int32_t> gpus, dra::Allocation allocation);

  PublishedGpus published_;
  const dra::SelectorVerdicts* verdicts_;
  dra::AllocatedState allocated_;  // every claim's allocation, kept as they change
};

}  // namespace gantry

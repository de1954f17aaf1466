// What a scheduling session decides: binds, evictions, and why jobs stay pending.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include "model/cluster.h"
#include "model/dra.h"

namespace gantry {

// Per claim of a spec's resource_claims, in order: the allocation a placement made for it,
// or nullopt where the claim was allocated already (in the cluster, or earlier in the
// session by a task sharing it, whose decision carries it).
using DeviceAllocations = std::vector<std::optional<dra::Allocation>>;

struct BindDecision {
  JobId job = kNone;
  TaskId task = kNone;
  NodeId node = kNone;
  std::vector<int32_t> gpus;  // device indexes on the node; empty for CPU-only tasks
  // Per delayed claim of its spec (TaskSpec::delayed_claims), the volume chosen for it,
  // or "" where it is provisioned on the node. Empty for a task without such claims.
  std::vector<std::string> volumes = {};
  // Per claim of its spec (TaskSpec::resource_claims), what it was allocated: the daemon
  // writes these, and reserves the claims for the pod, before it binds. Empty for a task
  // without claims.
  DeviceAllocations devices = {};
  // What its extended resources served by DRA were allocated (TaskSpec::device_backed,
  // engine/dra/extended_resources.h), requests named "resource-<k>": the daemon makes the
  // claim with it before it binds. Unset where the node's device plugin serves them.
  std::optional<dra::Allocation> extended_devices = std::nullopt;
};

// Why a running task would be evicted: for a pending task of higher priority in its own
// queue (preempt), to give a queue below its deserved share what it is owed (reclaim), or
// to free a node for a job that needs whole GPUs, the task being movable (defragment).
enum class EvictionCause : uint8_t { kPreempt, kReclaim, kDefragment };

// "preempt", "reclaim", "defragment": for metrics and messages.
inline std::string_view EvictionCauseName(EvictionCause cause) {
  switch (cause) {
    case EvictionCause::kPreempt:
      return "preempt";
    case EvictionCause::kReclaim:
      return "reclaim";
    case EvictionCause::kDefragment:
      return "defragment";
  }
  return "preempt";
}

struct EvictDecision {
  JobId job = kNone;
  TaskId task = kNone;
  NodeId node = kNone;
  std::string reason;
  JobId for_job = kNone;  // the preemptor: the job the eviction makes room for
  // ---- Why (defragment's evictions are counted against its budget, and reported apart).
  EvictionCause cause = EvictionCause::kPreempt;
};

// A task placed onto room that is being released (its victims are terminating): it binds
// in a later session, once that room is free.
struct PipelineDecision {
  JobId job = kNone;
  TaskId task = kNone;
  NodeId node = kNone;
  std::vector<int32_t> gpus;
};

// What holds a pending job when it is not a lack of room: more nodes would not place it.
// Autoscalers (Cluster Autoscaler, Karpenter) read a pod's PodScheduled=False condition
// with reason Unschedulable as "a node would help", so the daemon writes another reason
// for these.
enum class PendingHold : uint8_t {
  kNone,        // it waits for room (or an action that would make it)
  kQueueLimit,  // its queue's capability, or its queue is unusable (a tree problem)
  kGang,        // its gang cannot start as it is (fewer tasks than its minimum)
};

struct PendingJob {
  JobId job = kNone;
  int32_t pending_tasks = 0;  // tasks of the job still unplaced after the session
  std::string reason;
  PendingHold hold = PendingHold::kNone;
};

// Nodes held for a starving job (the reserve action): no other job's task was placed on them.
struct Reservation {
  JobId job = kNone;
  std::vector<NodeId> nodes;  // ascending
};

struct Decisions {
  std::vector<BindDecision> binds;          // in decision order
  std::vector<EvictDecision> evictions;     // in decision order
  std::vector<PipelineDecision> pipelined;  // in decision order
  std::vector<PendingJob> pending;          // in job id order
  std::vector<Reservation> reservations;    // in job id order
  // Per queue id, its fair share, when a plugin computes one (proportion); else empty.
  std::vector<ResourceVector> deserved;
};

}  // namespace gantry

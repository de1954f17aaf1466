// What a task asks for (TaskSpec, with its GpuRequest), and the two identities specs are
// told apart by:
//  - a TaskSpec is the same as another when every field is (operator==, TaskSpecHash):
//    tasks of one spec share the engine's per-spec caches, so every caller that gives
//    tasks of the same shape one spec (the daemon's pods, the replay's jobs) must tell
//    specs apart by all of it;
//  - a TaskShape is what a task takes from a node, its requests and GPUs and nothing of
//    where it may go: the task types of a workload profile (the fragmentation measure's
//    "typical tasks") are shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/labels.h"
#include "model/resources.h"

namespace gantry {

using SpecId = uint32_t;
using GpuModelId = uint32_t;

// What a task asks of GPUs: `count` whole devices, or one shared device with `milli`
// thousandths of it and/or `memory_mib` of its memory; optionally only some models.
struct GpuRequest {
  int32_t count = 0;
  int32_t milli = 0;  // 1..999 when shared
  int64_t memory_mib = 0;
  std::vector<GpuModelId> models;  // empty: any model

  bool wants_gpu() const { return count > 0 || milli > 0 || memory_mib > 0; }
  bool shared() const { return count == 0 && (milli > 0 || memory_mib > 0); }
  bool AllowsModel(GpuModelId model) const { return models.empty() || AllowsListedModel(model); }
  bool AllowsListedModel(GpuModelId model) const;
  bool operator==(const GpuRequest&) const = default;
};

// What a group of identical tasks (one role of a job) asks for. Tasks share specs, so
// the engine's per-spec caches (static predicates, known-unschedulable) apply to all.
// Equal when every field is: lists (models, tolerations, affinity terms) in their order.
struct TaskSpec {
  std::string role;
  ResourceVector requests;  // without nvidia.com/gpu: GPUs are in `gpu`
  GpuRequest gpu;
  int32_t priority = 0;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  NodeAffinity affinity;
  bool operator==(const TaskSpec&) const = default;
};

struct TaskSpecHash {
  size_t operator()(const TaskSpec& spec) const;
};

// The node label keys a spec reads (its node selector's and its affinity's), each once,
// sorted. Static predicates see a node's labels only through these.
std::vector<std::string> LabelKeysOf(const TaskSpec& spec);

// What a task takes from a node: its requests and GPUs, not where it may run.
struct TaskShape {
  ResourceVector requests;
  GpuRequest gpu;
  static TaskShape Of(const TaskSpec& spec) { return TaskShape{spec.requests, spec.gpu}; }
  bool operator==(const TaskShape&) const = default;
};

struct TaskShapeHash {
  size_t operator()(const TaskShape& shape) const;
};

}  // namespace gantry

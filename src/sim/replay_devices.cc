#include "sim/replay_devices.h"

#include <algorithm>
#include <utility>

#include "engine/dra/allocator.h"
#include "engine/dra_gpus.h"

namespace gantry {

Result<ReplayDevices> ReplayDevices::Make(const ClusterState& cluster,
                                          const dra::SelectorVerdicts* verdicts) {
  if (verdicts == nullptr) {
    return Status::Invalid(
        "--gpu-api dra needs CEL for the device class's selector: this build of Gantry has "
        "no CEL evaluator (GANTRY_DRA_CEL=OFF)");
  }
  for (const Task& task : cluster.tasks()) {
    if (task.state == TaskState::kRunning && !task.gpus.empty()) {
      return Status::Invalid("--gpu-api dra: task " + task.name +
                             " runs on GPUs as the replay starts, and its devices would have no "
                             "claim; a replay under DRA starts without running GPU tasks");
    }
  }
  return ReplayDevices(cluster, verdicts);
}

Result<TaskSpec> ReplayDevices::WithClaim(TaskSpec spec, const std::string& name) {
  if (!spec.gpu.wants_gpu()) return spec;
  auto claim = published_.AddClaim(name, spec.gpu);
  if (!claim.ok()) return claim.status();
  spec.namespace_ = std::string(kSimClaimNamespace);
  spec.resource_claims.push_back(std::move(*claim));
  return spec;
}

dra::ResourceClaim* ReplayDevices::ClaimOf(const ClusterState& cluster, TaskId task) {
  const TaskSpec& spec = cluster.spec_of(task);
  return spec.resource_claims.empty() ? nullptr
                                      : published_.FindClaim(spec.resource_claims.front());
}

Status ReplayDevices::Allocated(const ClusterState& cluster, TaskId task, NodeId node_id,
                                std::span<const int32_t> gpus, dra::Allocation allocation) {
  const Node& node = cluster.node(node_id);
  const std::string where = "pod " + cluster.task(task).name + " on node " + node.name;
  auto allocated = published_.GpusOf(node, allocation);
  if (!allocated.ok()) return allocated.status().WithPrefix(where);
  std::vector<int32_t> chosen(gpus.begin(), gpus.end());
  std::sort(allocated->begin(), allocated->end());
  std::sort(chosen.begin(), chosen.end());
  if (*allocated != chosen) {
    return Status::Failed(where + ": DRA allocated other GPUs than the engine placed it on");
  }
  dra::ResourceClaim& claim = *ClaimOf(cluster, task);
  if (claim.allocation) return Status::Failed(where + ": its claim is allocated already");
  allocated_.Add(allocation);
  claim.allocation = std::move(allocation);
  claim.reserved_for = {
      dra::ConsumerReference{"", "pods", cluster.task(task).name, "uid-" + std::to_string(task)}};
  return Status::Ok();
}

Status ReplayDevices::Bound(const ClusterState& cluster, const BindDecision& bind) {
  if (ClaimOf(cluster, bind.task) == nullptr) return Status::Ok();
  if (bind.devices.size() != 1 || !bind.devices[0]) {
    return Status::Failed("pod " + cluster.task(bind.task).name +
                          " placed without its claim allocated");
  }
  return Allocated(cluster, bind.task, bind.node, bind.gpus, *bind.devices[0]);
}

Status ReplayDevices::BoundOutside(const ClusterState& cluster, TaskId task, NodeId node_id,
                                   std::span<const int32_t> gpus) {
  const dra::ResourceClaim* claim = ClaimOf(cluster, task);
  if (claim == nullptr) return Status::Ok();
  const Node& node = cluster.node(node_id);
  GpuChoice choice;
  choice.devices.assign(gpus.begin(), gpus.end());
  const GpuChoicePreference preference(published_, node, choice);
  dra::AllocateOptions options;
  options.preference = &preference;
  options.pack_shared = true;
  const dra::ResourceClaim* const claims[] = {claim};
  auto result = dra::Allocate(published_.inventory(), dra::NodeRef{node.name, node.labels}, claims,
                              allocated_, *verdicts_, options);
  const std::string where = "pod " + cluster.task(task).name + " on node " + node.name;
  if (!result.ok()) return result.status().WithPrefix(where);
  if (!result->has_value()) {
    return Status::Failed(where + ": its claim cannot be allocated on its victims' room");
  }
  return Allocated(cluster, task, node_id, gpus, std::move((**result)[0]));
}

Status ReplayDevices::Released(const ClusterState& cluster, TaskId task) {
  dra::ResourceClaim* claim = ClaimOf(cluster, task);
  if (claim == nullptr) return Status::Ok();
  if (!claim->allocation) {
    return Status::Failed("pod " + cluster.task(task).name + " ran without its claim allocated");
  }
  allocated_.Remove(*claim->allocation);
  claim->allocation.reset();
  claim->reserved_for.clear();
  return Status::Ok();
}

}  // namespace gantry

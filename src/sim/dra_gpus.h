// `gantry sim --gpu-api dra`: a trace's GPUs published as Dynamic Resource Allocation
// devices and its pods' GPU requests made ResourceClaims, so that a user sees what moving
// from the device plugin (nvidia.com/gpu) to DRA does to packing.
//
// What is published, as NVIDIA's DRA driver would (close to it; the fields the protocol
// needs):
//   - DeviceClass gpu.nvidia.com, selector `device.driver == "gpu.nvidia.com"`;
//   - per node with GPUs, one ResourceSlice: driver gpu.nvidia.com, pool = the node's name
//     (one slice, generation 1), nodeName = the node; device gpu-<i> per GPU with
//     attributes `index` (i) and `productName` (the GPU model), capacity `cores` of 1000
//     (a GPU in thousandths, the traces' gpu_milli), and allowMultipleAllocations, so that
//     pods share a GPU through consumable capacity (DRAConsumableCapacity).
//   - per pod asking GPUs, a ResourceClaim default/<pod>: one request `gpu` of the class;
//     whole GPUs: ExactCount N, no capacity requested, so that each device's `cores` are
//     all consumed (upstream's rule for a capacity without a request policy); a share of
//     one GPU: count 1 with capacity.requests cores = the share; allowed models: a selector
//     `device.attributes["gpu.nvidia.com"].productName in [...]`.
// GPU memory is not published: the openb traces ask none.
//
// The engine keeps its own view of the GPUs (Node::gpus) and of a pod's demand (its
// GpuRequest), so every policy scores nodes as for the device plugin; which of a node's
// devices a claim gets is the policy's choice, tried first by the allocator
// (engine/dra_gpus.h). The claim must still be allocatable there, and the protocol checks
// that what DRA allocated is what the policy chose.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/dra_gpus.h"
#include "engine/snapshot.h"
#include "model/cluster.h"
#include "model/dra.h"
#include "model/dra_inventory.h"
#include "model/status.h"

namespace gantry {

enum class GpuApi { kDevicePlugin, kDra };

inline constexpr std::string_view kSimGpuDriver = "gpu.nvidia.com";
inline constexpr std::string_view kSimGpuClass = "gpu.nvidia.com";
inline constexpr std::string_view kSimClaimNamespace = "default";

class PublishedGpus final : public GpuDeviceMap {
 public:
  // The GPUs of `nodes` (their models and indexes; usage is not read).
  explicit PublishedGpus(const ClusterState& nodes);

  // A claim in kSimClaimNamespace named `name` for `gpu` (which asks for GPUs); returns its
  // key for TaskSpec::resource_claims. Refused: a name taken, a GPU memory request.
  Result<std::string> AddClaim(const std::string& name, const GpuRequest& gpu);

  // What a session reads. REQUIRES: this and `verdicts` outlive the session.
  DeviceInputs Inputs(const dra::SelectorVerdicts* verdicts) const {
    DeviceInputs inputs;
    inputs.inventory = &inventory_;
    inputs.claims = &claims_;
    inputs.verdicts = verdicts;
    inputs.gpu_devices = this;
    return inputs;
  }

  int32_t GpuIndex(const Node& node, const dra::ResourceSlice& slice,
                   const dra::Device& device) const override;

  // The GPU indexes on `node` of the devices an allocation holds, in its order; an error
  // names a device that is none of the node's GPUs.
  Result<std::vector<int32_t>> GpusOf(const Node& node, const dra::Allocation& allocation) const;

  const dra::Inventory& inventory() const { return inventory_; }
  const dra::ClaimTable& claims() const { return claims_; }
  // The claim of `key`, to allocate or deallocate (sim/replay_devices.h); null when none.
  dra::ResourceClaim* FindClaim(const std::string& key) {
    auto it = claims_.find(key);
    return it == claims_.end() ? nullptr : &it->second;
  }

 private:
  dra::Inventory inventory_;
  dra::ClaimTable claims_;
};

}  // namespace gantry

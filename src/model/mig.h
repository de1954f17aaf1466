// NVIDIA Multi-Instance GPU (MIG): the profiles a physical GPU can be cut into, and a
// node's MIG devices, read the way the GPU operator and GPU feature discovery publish
// them:
//  - mixed strategy (label nvidia.com/mig.strategy=mixed): one extended resource per
//    profile, nvidia.com/mig-<profile> (nvidia.com/mig-1g.10gb: 7), beside nvidia.com/gpu
//    for the GPUs that are not cut;
//  - single strategy (mig.strategy=single): nvidia.com/gpu counts MIG devices, all of one
//    profile, and nvidia.com/gpu.product ends in "-MIG-<profile>";
//  - nvidia.com/mig.config.state: the MIG manager's progress; a node whose state is set
//    and not "success" is being re-cut and takes no new MIG pods.
// A device takes compute and memory slices of one physical GPU (A100: 7 and 8); knowing
// which GPU each device is on lets placement fill GPUs that are already cut into use and
// keep whole GPUs untouched, and lets fragmentation count what is left on a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/labels.h"
#include "model/resources.h"
#include "model/status.h"

namespace gantry {

inline constexpr std::string_view kMigStrategyLabel = "nvidia.com/mig.strategy";
inline constexpr std::string_view kMigConfigStateLabel = "nvidia.com/mig.config.state";
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";

// A MIG profile of one GPU family: "3g.40gb" on an 80 GB A100 or H100.
struct MigProfile {
  std::string_view name;
  int32_t compute_slices;  // of the family's gpu_compute_slices
  int32_t memory_slices;   // of the family's gpu_memory_slices
  int64_t memory_mib;
};

// A GPU family: how many slices one GPU has and the profiles it offers.
struct MigFamily {
  std::string_view name;  // "A100-40GB"
  int32_t gpu_compute_slices;
  int32_t gpu_memory_slices;
  std::vector<MigProfile> profiles;
};

// The families Gantry knows (NVIDIA's MIG user guide: A30, A100 40/80 GB, H100 80/94/96
// GB, H200, B200), in the order used to settle a profile name two families share.
const std::vector<MigFamily>& MigFamilies();

// The family and profile for `profile` names ("1g.10gb"); `hint` (a GPU product label
// such as "NVIDIA-A100-SXM4-40GB") chooses between families that share a name. Errors
// quote the name and list the known profiles.
struct MigProfileRef {
  const MigFamily* family = nullptr;
  const MigProfile* profile = nullptr;
};
Result<MigProfileRef> FindMigProfile(std::string_view profile, std::string_view hint);
// Like FindMigProfile for every name at once: the one family that offers all of them.
Result<std::vector<MigProfileRef>> FindMigProfiles(const std::vector<std::string>& profiles,
                                                   std::string_view hint);

// "1g.10gb" for "nvidia.com/mig-1g.10gb", "" for a resource that is not a MIG profile's.
std::string_view MigProfileOfResource(std::string_view resource_name);
// The first MIG resource named in `requests` with a profile no family has, as an error
// that names it (after `where` and a dot, when `where` is set); Ok when there is none.
Status CheckMigRequests(const ResourceVector& requests, const std::string& where);
// Whether `requests` name any MIG profile's resource.
bool RequestsMig(const ResourceVector& requests);

enum class MigStrategy : uint8_t { kNone, kSingle, kMixed };

inline constexpr uint32_t kNoMigHolder = UINT32_MAX;

// One MIG device of a mixed-strategy node.
struct MigDevice {
  ResourceId resource = 0;  // nvidia.com/mig-<profile>
  int32_t gpu = 0;          // the physical GPU it is cut from (0.. NodeMig::gpus-1)
  int32_t compute_slices = 0;
  int32_t memory_slices = 0;
  uint32_t holder = kNoMigHolder;  // the task using it, kept by ClusterState
  bool operator==(const MigDevice&) const = default;
};

struct NodeMig {
  MigStrategy strategy = MigStrategy::kNone;
  // nvidia.com/mig.config.state when it is set and not "success": MIG pods wait.
  std::string unready_state;
  // Mixed strategy: the MIG devices, by physical GPU. A loader that knows the layout
  // fills them (the scenario format); otherwise ClusterState infers one from the counts.
  std::vector<MigDevice> devices;
  int32_t gpus = 0;  // physical GPUs cut into MIG devices (mixed)
  bool ready() const { return unready_state.empty(); }
  bool operator==(const NodeMig&) const = default;
};

// Reads a node's MIG state from its labels and allocatable (mixed strategy) or its GPU
// product (single). Mixed: keeps `mig->devices` when a loader filled them, after checking
// they match the allocatable counts; else lays the devices out on as few GPUs as hold
// their slices (largest first). Single: returns in *single_profile the devices' profile,
// for the caller to group devices by GPU. Errors name the node and the label or resource.
Status PrepareNodeMig(const std::string& node_name, const Labels& labels,
                      const ResourceVector& allocatable, std::string_view product, NodeMig* mig,
                      MigProfileRef* single_profile);

// How many devices of `profile` one GPU of its family holds (1g.10gb: 7, 3g.40gb: 2,
// 1g.10gb+me: 1, as it takes all the GPU's media engines).
int32_t MigDevicesPerGpu(const MigProfileRef& profile);

// Chooses `count` free devices of `resource` for a task and marks them held by it: on
// the GPU that has the most slices in use already (so that whole GPUs stay untouched),
// ties to the lowest GPU, then the lowest device. Takes as many as are free when fewer
// are (a pod bound by someone else). Returns the device indexes.
std::vector<int32_t> TakeMigDevices(NodeMig& mig, ResourceId resource, int64_t count,
                                    uint32_t holder);

// A node's MIG devices in use and free, and what that leaves whole.
struct MigUsage {
  int32_t devices = 0;
  int32_t used = 0;
  int32_t gpus = 0;
  int32_t untouched_gpus = 0;  // cut GPUs none of whose devices is in use
  // Free devices on GPUs that have a device in use: what is left in pieces.
  int32_t stranded = 0;
};
MigUsage CountMig(const NodeMig& mig);

}  // namespace gantry

// NUMA alignment as the kubelet's topology manager enforces it, described the way Node
// Feature Discovery's topology updater publishes it (NodeResourceTopology,
// topology.node.k8s.io/v1alpha2): per node, the topology manager's policy and scope, and
// per NUMA node (a zone) what it can hold (cpu, memory, hugepages, devices).
//
// What the kubelet does, and so what the model does:
//  - under policy single-numa-node, a pod is admitted only when each unit of it (the whole
//    pod under scope `pod`; each container under scope `container`) fits in one NUMA node;
//    best-effort and restricted prefer that and admit it anyway (restricted can refuse a
//    pod too wide for any set of NUMA nodes; like scheduler-plugins' NodeResourceTopologyMatch,
//    only single-numa-node is enforced here);
//  - the unit goes to the lowest-numbered NUMA node that holds it (the topology manager
//    prefers the narrowest affinity, and among those the first);
//  - what is aligned: for a Guaranteed pod every resource the zones list (exclusive CPUs,
//    NUMA memory and hugepages, devices); for any other pod only devices (cpu, memory and
//    hugepages come from the shared pool), as the CPU and memory managers treat them.
// GPUs are devices (Node::gpus), each on a NUMA node (GpuDevice::numa_node): a zone's room
// in whole GPUs is its devices that are entirely free.
//
// Gantry counts what each placed unit takes from its zone itself (ClusterState), with the
// rule above, instead of reading the objects' `available`: that figure lags every bind by
// the updater's period, which is what scheduler-plugins' reserve cache works around.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/resources.h"
#include "model/status.h"

namespace gantry {

enum class NumaPolicy : uint8_t { kNone, kBestEffort, kRestricted, kSingleNumaNode };
enum class NumaScope : uint8_t { kContainer, kPod };  // the kubelet's default is container

// "none", "best-effort", "restricted", "single-numa-node" (the kubelet's names).
std::string_view NumaPolicyName(NumaPolicy policy);
Result<NumaPolicy> ParseNumaPolicy(std::string_view name);
std::string_view NumaScopeName(NumaScope scope);
Result<NumaScope> ParseNumaScope(std::string_view name);

// The kubelet allows 8 NUMA nodes; NodeResourceTopology objects may list more zones.
inline constexpr size_t kMaxNumaZones = 64;

struct NumaZone {
  int32_t id = 0;              // the NUMA node's number (zone "node-<id>")
  ResourceVector allocatable;  // what it holds, nvidia.com/gpu as devices x 1000 milli
  // What aligned units placed here take (kept by ClusterState; GPUs are not in it: they
  // are counted on the devices).
  ResourceVector used;
  bool operator==(const NumaZone&) const = default;
};

struct NodeNuma {
  NumaPolicy policy = NumaPolicy::kNone;
  NumaScope scope = NumaScope::kContainer;
  std::vector<NumaZone> zones;  // by id, ascending
  // The resources some zone has (sorted; filled by PrepareNodeNuma): a resource no zone
  // has is not aligned (the kubelet gives it no NUMA affinity).
  std::vector<ResourceId> listed;
  bool aligns() const { return policy != NumaPolicy::kNone && !zones.empty(); }
  bool enforces() const { return policy == NumaPolicy::kSingleNumaNode && !zones.empty(); }
  bool Lists(ResourceId id) const;
  bool operator==(const NodeNuma&) const = default;
};

// One container as the topology manager aligns it under the container scope.
struct NumaContainer {
  ResourceVector requests;  // nvidia.com/gpu included (milli)
  // False for an init container that runs to completion before the next starts: it must
  // fit alone and gives its room back. App containers and sidecars keep theirs.
  bool holds = true;
  bool operator==(const NumaContainer&) const = default;
};

// What of a task the topology manager aligns.
struct NumaDemand {
  bool guaranteed = false;  // the pod's QoS class is Guaranteed
  // Its containers in the order the kubelet admits them (init containers, then app
  // containers), when it has more than one; empty: the pod is one unit under either scope.
  std::vector<NumaContainer> containers;
  bool operator==(const NumaDemand&) const = default;
};

// One unit to align: a container, or the whole pod.
struct NumaUnit {
  const ResourceVector* requests = nullptr;  // nvidia.com/gpu, if any, is not read here
  Milli gpu_milli = 0;                       // whole GPUs x 1000
  bool holds = true;
};

// The units of a task on a node of `scope`: the pod as one (its requests and whole GPUs),
// or each container. `pod_requests` and `demand` must outlive the units.
std::vector<NumaUnit> NumaUnitsOf(const NumaDemand& demand, const ResourceVector& pod_requests,
                                  int32_t pod_whole_gpus, NumaScope scope);

// Whether a zone aligns resource `id` for a pod of this QoS class (see the top).
bool NumaAligns(ResourceId id, bool guaranteed);
// Whether any unit asks a node like `numa` for something it aligns (a task that does not
// is never refused and takes nothing from a zone).
bool NeedsAlignment(const NodeNuma& numa, std::span<const NumaUnit> units, bool guaranteed);

// The room of each zone (by index in NodeNuma::zones) as a caller sees it: the aligned
// resources free, and nvidia.com/gpu as whole free devices x 1000.
using ZoneRoom = std::vector<ResourceVector>;

// Places the units in order, each in the lowest zone whose room holds what it aligns,
// taking that room from *room when the unit holds it. `zones` gets each unit's zone index
// (into NodeNuma::zones), or -1 for a unit no zone holds (the kubelet refuses the pod
// under single-numa-node; under best-effort the unit spreads and no zone is charged).
// Returns whether every unit found a zone.
bool FitZones(const NodeNuma& numa, std::span<const NumaUnit> units, bool guaranteed,
              ZoneRoom* room, std::vector<int32_t>* zones);

// What a unit placed in a zone takes from the zone's `used`: what it aligns, GPUs aside.
ResourceVector ZoneCharge(const NodeNuma& numa, const NumaUnit& unit, bool guaranteed);

// Checks a node's NUMA description against its devices: zone ids distinct and at most
// kMaxNumaZones zones, amounts not negative, and, when the zones list nvidia.com/gpu, their
// GPUs adding up to the node's devices. Then sorts the zones, fills `listed`, and puts
// each GPU device on its zone (devices in index order, zone by zone), returning the zone
// id of each device in *device_zones. Errors name the node and the zone.
Status PrepareNodeNuma(const std::string& node_name, size_t gpu_devices, NodeNuma* numa,
                       std::vector<int32_t>* device_zones);

}  // namespace gantry

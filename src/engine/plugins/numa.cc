// numa: NUMA alignment as the kubelet's topology manager enforces it (model/numa.h), on
// the nodes whose NodeResourceTopology gives their NUMA nodes and policy:
//  - predicate: under single-numa-node, each unit of a task (the pod, or each container
//    under the container scope) fits in one NUMA node's room, or the node is refused;
//  - score: under best-effort and restricted, a node where the task cannot be aligned
//    scores 0, any other node full marks, so that such tasks go where they align;
//  - devices: whole GPUs on the NUMA node their unit goes to (asked before any other
//    chooser: it is a rule of the node, not a preference);
//  - listener: what each unit takes from its zone as the session places, pipelines and
//    evicts, in the session's views: `idle` counts running (releasing too) and allocated
//    tasks, `future` running (not releasing), allocated and pipelined ones; room now is
//    what the larger of the two leaves, room in the future what `future` leaves.
// A unit goes to the lowest NUMA node that holds it, as the kubelet picks, in the search
// (which devices) as in ClusterState (which zone it charges), so the two agree.
// Without a node that aligns the plugin is out of the session and costs nothing.
#include <algorithm>
#include <unordered_map>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"

namespace gantry {
namespace {

// Could `spec` ask some node for something it aligns? A coarse test per spec (the exact
// one, NeedsAlignment, is per node): Guaranteed pods, whole GPUs, other devices.
bool MayNeedAlignment(const TaskSpec& spec) {
  if (spec.numa.guaranteed || spec.gpu.count > 0) return true;
  for (const auto& e : spec.requests.entries()) {
    if (e.id != kPods && NumaAligns(e.id, /*guaranteed=*/false) &&
        ResourceName(e.id) != "ephemeral-storage") {
      return true;
    }
  }
  for (const NumaContainer& c : spec.numa.containers) {
    if (c.requests.Get(kGpu) >= kMilliPerUnit) return true;
  }
  return false;
}

// A node's devices' free shares in one of the session's tables.
std::span<const int32_t> FreeMilliIn(const NodeTable& t, NodeId node) {
  const NodeWork& w = t.nodes[node];
  return std::span<const int32_t>(t.gpu_free_milli)
      .subspan(static_cast<size_t>(w.gpu_begin), static_cast<size_t>(w.gpu_count));
}

class NumaPlugin : public SessionCopyable<NumaPlugin>,
                   public NodePredicate,
                   public NodeScorer,
                   public DeviceChooser,
                   public PlacementListener {
 public:
  explicit NumaPlugin(int64_t weight) : weight_(weight) {}
  std::string_view name() const override { return "numa"; }

  void OnSessionOpen(Session& s) override;
  bool ActiveInSession() const override { return !slot_.empty(); }

  // Zones are not part of a node's shape class: nothing here is static.
  FilterResult FilterStatic(const TaskSpec& /*spec*/, const Node& /*node*/) const override {
    return FilterResult::Ok();
  }
  bool FiltersDynamically(const Session& /*s*/, const TaskSpec& spec) const override {
    return enforcing_ && MayNeedAlignment(spec);
  }
  FilterResult FilterDynamic(const Session& s, const TaskSpec& spec, NodeId node) const override;

  int64_t weight() const override { return weight_; }
  bool Scores(const Session& /*s*/, const TaskSpec& spec) const override {
    return preferring_ && MayNeedAlignment(spec);
  }
  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId node,
                    const GpuChoice& gpus) const override;

  bool constrains_devices() const override { return true; }
  bool ChooseDevices(const Session& s, const TaskSpec& spec, NodeId node, GpuChoice* out,
                     int64_t* score) const override;

  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                     const GpuChoice& gpus, int sign) override;

 private:
  struct ZoneUse {
    ResourceVector idle;
    ResourceVector future;
  };
  // The zones of an aligning node, by index in Node::numa.zones.
  using NodeUse = std::vector<ZoneUse>;

  const NodeUse* UseOf(NodeId node) const {
    return node < slot_.size() && slot_[node] >= 0 ? &uses_[static_cast<size_t>(slot_[node])]
                                                   : nullptr;
  }
  // Each zone's room in the `future` view or the view of room now, with whole GPUs free
  // in `free_milli` (the task's own devices `own`, if any, counted free).
  ZoneRoom RoomOf(const Session& s, NodeId node, bool future, std::span<const int32_t> free_milli,
                  const GpuChoice* own) const;
  // The zone of each unit of `spec` on `node` in the current view; false when some unit
  // fits none. *units gets the units, *needs whether the node aligns anything of it.
  bool Fit(const Session& s, const TaskSpec& spec, NodeId node, std::vector<NumaUnit>* units,
           std::vector<int32_t>* zones, bool* needs) const;
  // Adds (sign +1) or takes away what the units take from their zones, in the idle and/or
  // the future counts.
  void Charge(const Node& n, const TaskSpec& spec, const std::vector<int32_t>& zones, NodeId node,
              bool idle, bool future, int sign);

  int64_t weight_;
  bool enforcing_ = false;     // some node's policy is single-numa-node
  bool preferring_ = false;    // some node's policy is best-effort or restricted
  std::vector<int32_t> slot_;  // per node: its index in uses_, -1 when it does not align
  std::vector<NodeUse> uses_;
  // The zones of the tasks this session placed or pipelined, for undoing them exactly.
  std::unordered_map<TaskId, std::vector<int32_t>> placed_zones_;
};

void NumaPlugin::OnSessionOpen(Session& s) {
  const ClusterState& c = s.cluster();
  slot_.clear();
  uses_.clear();
  placed_zones_.clear();
  enforcing_ = preferring_ = false;
  if (c.numa_node_count() == 0) return;
  slot_.assign(c.nodes().size(), -1);
  for (NodeId id = 0; id < c.nodes().size(); ++id) {
    const Node& n = c.node(id);
    if (n.removed || !n.numa.aligns()) continue;
    enforcing_ = enforcing_ || n.numa.enforces();
    preferring_ = preferring_ || !n.numa.enforces();
    slot_[id] = static_cast<int32_t>(uses_.size());
    NodeUse& use = uses_.emplace_back(n.numa.zones.size());
    for (size_t z = 0; z < n.numa.zones.size(); ++z) {
      use[z].idle = n.numa.zones[z].used;
      use[z].future = n.numa.zones[z].used;
    }
  }
  // Terminating tasks give their zones back in the future.
  for (TaskId t : c.releasing_tasks()) {
    const Task& task = c.task(t);
    if (task.node < slot_.size() && slot_[task.node] >= 0) {
      Charge(c.node(task.node), c.spec(task.spec), task.numa_zones, task.node, false, true, -1);
    }
  }
}

ZoneRoom NumaPlugin::RoomOf(const Session& s, NodeId node, bool future,
                            std::span<const int32_t> free_milli, const GpuChoice* own) const {
  const Node& n = s.cluster().node(node);
  const NodeUse& use = *UseOf(node);
  ZoneRoom room(n.numa.zones.size());
  for (size_t z = 0; z < n.numa.zones.size(); ++z) {
    room[z] = n.numa.zones[z].allocatable;
    room[z].Subtract(future ? use[z].future : Max(use[z].idle, use[z].future));
    Milli gpus = 0;
    for (size_t d = 0; d < n.gpus.size() && d < free_milli.size(); ++d) {
      if (n.gpus[d].numa_node != n.numa.zones[z].id) continue;
      const bool mine = own != nullptr && std::find(own->devices.begin(), own->devices.end(),
                                                    static_cast<int32_t>(d)) != own->devices.end();
      const int32_t free = free_milli[d] + (mine ? own->milli_each : 0);
      if (free >= kGpuMilliWhole) gpus += kMilliPerUnit;
    }
    room[z].Set(kGpu, gpus);
  }
  return room;
}

bool NumaPlugin::Fit(const Session& s, const TaskSpec& spec, NodeId node,
                     std::vector<NumaUnit>* units, std::vector<int32_t>* zones, bool* needs) const {
  const Node& n = s.cluster().node(node);
  *units = NumaUnitsOf(spec.numa, spec.requests, spec.gpu.count, n.numa.scope);
  *needs = NeedsAlignment(n.numa, *units, spec.numa.guaranteed);
  if (!*needs) return true;
  ZoneRoom room = RoomOf(s, node, s.searching_future(), s.searched_gpus(node).free_milli, nullptr);
  return FitZones(n.numa, *units, spec.numa.guaranteed, &room, zones);
}

FilterResult NumaPlugin::FilterDynamic(const Session& s, const TaskSpec& spec, NodeId node) const {
  if (UseOf(node) == nullptr || !s.cluster().node(node).numa.enforces()) {
    return FilterResult::Ok();
  }
  std::vector<NumaUnit> units;
  std::vector<int32_t> zones;
  bool needs = false;
  if (Fit(s, spec, node, &units, &zones, &needs)) return FilterResult::Ok();
  // Detail: 0 for the pod as one unit, else 1 + the first container that fits nowhere.
  const auto first =
      static_cast<uint32_t>(std::find(zones.begin(), zones.end(), -1) - zones.begin());
  const bool pod = units.size() == 1 && spec.numa.containers.size() <= 1;
  return FilterResult::Fail(FilterCode::kNumaAlignment, pod ? 0 : first + 1);
}

int64_t NumaPlugin::ScoreNode(const Session& s, const TaskSpec& spec, NodeId node,
                              const GpuChoice& /*gpus*/) const {
  if (UseOf(node) == nullptr || s.cluster().node(node).numa.enforces()) return kMaxNodeScore;
  std::vector<NumaUnit> units;
  std::vector<int32_t> zones;
  bool needs = false;
  return Fit(s, spec, node, &units, &zones, &needs) ? kMaxNodeScore : 0;
}

bool NumaPlugin::ChooseDevices(const Session& s, const TaskSpec& spec, NodeId node, GpuChoice* out,
                               int64_t* score) const {
  *score = -1;
  if (spec.gpu.count == 0 || UseOf(node) == nullptr) return false;
  const Node& n = s.cluster().node(node);
  if (!n.numa.Lists(kGpu)) return false;
  std::vector<NumaUnit> units;
  std::vector<int32_t> zones;
  bool needs = false;
  if (!Fit(s, spec, node, &units, &zones, &needs) || !needs) return false;
  const NodeGpus gpus = s.searched_gpus(node);
  // Each unit's GPUs on its NUMA node: the other devices (and those taken by an earlier
  // unit) look full to the usual choice.
  std::vector<int32_t> masked(gpus.free_milli.begin(), gpus.free_milli.end());
  const GpuPacking packing = s.packing() == GpuPacking::kNone ? GpuPacking::kTight : s.packing();
  out->Clear();
  for (size_t u = 0; u < units.size(); ++u) {
    if (units[u].gpu_milli == 0) continue;
    const int32_t zone_id = n.numa.zones[static_cast<size_t>(zones[u])].id;
    std::vector<int32_t> free = masked;
    for (size_t d = 0; d < free.size(); ++d) {
      if (n.gpus[d].numa_node != zone_id) free[d] = 0;
    }
    GpuRequest request = spec.gpu;
    request.count = static_cast<int32_t>(units[u].gpu_milli / kMilliPerUnit);
    NodeGpus zone_gpus = gpus;
    zone_gpus.free_milli = free;
    zone_gpus.one_nvlink_domain = false;  // the devices left are not all of the node's
    GpuChoice part;
    if (!ChooseGpus(request, zone_gpus, packing, &part)) {
      out->Clear();
      return false;
    }
    for (int32_t d : part.devices) {
      masked[static_cast<size_t>(d)] = 0;
      out->devices.push_back(d);
    }
  }
  std::sort(out->devices.begin(), out->devices.end());
  out->milli_each = kGpuMilliWhole;
  out->memory_each = 0;
  return static_cast<int32_t>(out->devices.size()) == spec.gpu.count;
}

void NumaPlugin::Charge(const Node& n, const TaskSpec& spec, const std::vector<int32_t>& zones,
                        NodeId node, bool idle, bool future, int sign) {
  NodeUse& use = uses_[static_cast<size_t>(slot_[node])];
  const std::vector<NumaUnit> units =
      NumaUnitsOf(spec.numa, spec.requests, spec.gpu.count, n.numa.scope);
  for (size_t u = 0; u < units.size() && u < zones.size(); ++u) {
    if (zones[u] < 0 || static_cast<size_t>(zones[u]) >= use.size() || !units[u].holds) continue;
    const ResourceVector charge = ZoneCharge(n.numa, units[u], spec.numa.guaranteed);
    ZoneUse& zone = use[static_cast<size_t>(zones[u])];
    for (ResourceVector* count : {idle ? &zone.idle : nullptr, future ? &zone.future : nullptr}) {
      if (count == nullptr) continue;
      if (sign > 0) {
        count->Add(charge);
      } else {
        count->Subtract(charge);
      }
    }
  }
}

void NumaPlugin::OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                               const GpuChoice& gpus, int sign) {
  if (UseOf(node) == nullptr) return;
  const ClusterState& c = s.cluster();
  const Node& n = c.node(node);
  const TaskSpec& spec = c.spec_of(task);
  if (change == StateChange::kEvict) {
    // A running task: its zones are the cluster's. Its room comes back in the future.
    Charge(n, spec, c.task(task).numa_zones, node, false, true, -sign);
    return;
  }
  const bool pipelined = change == StateChange::kPipeline;
  if (sign < 0) {
    auto it = placed_zones_.find(task);
    if (it == placed_zones_.end()) return;
    Charge(n, spec, it->second, node, !pipelined, true, -1);
    placed_zones_.erase(it);
    return;
  }
  const std::vector<NumaUnit> units =
      NumaUnitsOf(spec.numa, spec.requests, spec.gpu.count, n.numa.scope);
  if (!NeedsAlignment(n.numa, units, spec.numa.guaranteed)) return;
  // The room the search saw: this task's devices were taken since, its zones not yet.
  const WorkingState& state = s.state();
  const NodeTable& table = pipelined ? state.future_table() : state.free_table();
  ZoneRoom room = RoomOf(s, node, pipelined, FreeMilliIn(table, node), &gpus);
  std::vector<int32_t> zones;
  FitZones(n.numa, units, spec.numa.guaranteed, &room, &zones);
  Charge(n, spec, zones, node, !pipelined, true, +1);
  placed_zones_[task] = std::move(zones);
}

}  // namespace

Result<std::unique_ptr<Plugin>> NewNumaPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  int64_t weight = 1;
  GANTRY_RETURN_IF_ERROR(args.Int("weight", &weight));
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new NumaPlugin(weight));
}

}  // namespace gantry

// nodevolumelimits: kube-scheduler's NodeVolumeLimits (CSILimits). Per CSI driver, a node
// takes no more distinct attached volumes than its CSINode object allows: the volumes of
// the tasks on it, and those its VolumeAttachments name that no task there uses, plus the
// task's volumes not attached there yet. A volume shared by two tasks on one node counts
// once. A driver whose CSIDriver asks for it (preventPodSchedulingIfMissing) must also be
// installed on the node.
//
// The volumes in use per node are an index of the session (NodeHoldings, as nodeports
// keeps its ports): a releasing task keeps its volumes attached until it has ended, a
// pipelined task holds them once the releasing ones have. A session in which no spec has
// attachable volumes builds nothing and is never asked per node.
//
// As kube-scheduler does, a task's volume that only a VolumeAttachment names on the node
// counts as attached and as new (CSILimits subtracts only the pods' volumes from the new
// ones).
#include <algorithm>
#include <map>

#include "engine/node_holdings.h"
#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"

namespace gantry {
namespace {

class NodeVolumeLimitsPlugin : public SessionCopyable<NodeVolumeLimitsPlugin>,
                               public NodePredicate,
                               public PlacementListener {
 public:
  std::string_view name() const override { return "nodevolumelimits"; }

  // Node CSI objects are not part of a node's shape class, so nothing here is static.
  FilterResult FilterStatic(const TaskSpec& /*spec*/, const Node& /*node*/) const override {
    return FilterResult::Ok();
  }

  bool FiltersDynamically(const Session& /*s*/, const TaskSpec& spec) const override {
    return !spec.attachable_volumes.empty();
  }
  void OnSessionOpen(Session& s) override {
    const auto& specs = s.cluster().specs();
    active_ = std::any_of(specs.begin(), specs.end(),
                          [](const TaskSpec& spec) { return !spec.attachable_volumes.empty(); });
  }
  bool ActiveInSession() const override { return active_; }

  FilterResult FilterDynamic(const Session& s, const TaskSpec& spec, NodeId id) const override {
    if (spec.attachable_volumes.empty()) return FilterResult::Ok();
    const NodeCsi& csi = s.cluster().node(id).csi;
    // The task's volumes that count here: a migrated in-tree volume only where the node
    // has a CSINode object.
    bool any = false;
    for (size_t i = 0; i < spec.attachable_volumes.size(); ++i) {
      const AttachableVolume& v = spec.attachable_volumes[i];
      if (v.migrated && !csi.has_csi_node) continue;
      any = true;
      if (v.driver_required && csi.FindDriver(v.driver) == nullptr) {
        return FilterResult::Fail(FilterCode::kCsiDriverMissing, static_cast<uint32_t>(i));
      }
    }
    if (!any || !csi.has_limits()) return FilterResult::Ok();
    const bool future = s.searching_future();
    const auto& uses = volumes_.On(s, id);
    auto used_by_tasks = [&](const AttachableVolume& v) {
      return std::any_of(uses.begin(), uses.end(), [&](const auto& use) {
        return use.HeldIn(future) && use.item->SameVolume(v);
      });
    };
    // Per driver with a limit: attached (tasks' volumes, and attachments no task uses) and
    // new (the task's volumes no task there uses).
    std::map<std::string_view, std::pair<int64_t, int64_t>> counts;
    for (const AttachableVolume& v : spec.attachable_volumes) {
      if (v.migrated && !csi.has_csi_node) continue;
      const NodeCsiDriver* driver = csi.FindDriver(v.driver);
      if (driver == nullptr || !driver->limit) continue;
      if (!used_by_tasks(v)) counts[v.driver].second++;
    }
    if (counts.empty()) return FilterResult::Ok();
    for (const auto& use : uses) {
      if (!use.HeldIn(future)) continue;
      auto it = counts.find(use.item->driver);
      if (it != counts.end()) it->second.first++;
    }
    for (const AttachableVolume& v : csi.attached) {
      auto it = counts.find(v.driver);
      if (it != counts.end() && !used_by_tasks(v)) it->second.first++;
    }
    for (const auto& [driver, count] : counts) {
      const int64_t limit = *csi.FindDriver(driver)->limit;
      if (count.first + count.second > limit) {
        return FilterResult::Fail(FilterCode::kMaxVolumeCount);
      }
    }
    return FilterResult::Ok();
  }

  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                     const GpuChoice& /*gpus*/, int sign) override {
    volumes_.OnStateChange(s, change, task, node, sign);
  }

 private:
  struct SameVolume {
    bool operator()(const AttachableVolume& a, const AttachableVolume& b) const {
      return a.SameVolume(b);
    }
  };
  bool active_ = true;  // some spec of the session has attachable volumes
  NodeHoldings<AttachableVolume, &TaskSpec::attachable_volumes, SameVolume> volumes_;
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewNodeVolumeLimitsPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new NodeVolumeLimitsPlugin());
}

}  // namespace gantry

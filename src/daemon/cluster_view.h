// What the live page shows (page_server.h, docs/live-page.md): the cluster as the scheduler
// sees it. The scheduler thread builds a ClusterView (ClusterViewBuilder) and publishes it
// on a ClusterViewBoard; the page server's threads take the latest one and render it.
// A view is immutable once published, so readers need no lock beyond the swap.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "daemon/device_claims.h"
#include "engine/decisions.h"
#include "model/cluster.h"

namespace gantry {

// One physical GPU as the page draws it.
enum class GpuCellState : uint8_t {
  kFree,        // nothing on it
  kWhole,       // held whole by one task
  kShared,      // shared by tasks taking fractions, none left
  kFragmented,  // shared, with a free share that only fractions can use
  kMig,         // cut into MIG devices
};
std::string_view GpuCellStateName(GpuCellState state);  // "free", "whole", ...

struct MigDeviceView {
  std::string profile;  // "1g.10gb"
  bool used = false;
};

struct GpuCellView {
  GpuCellState state = GpuCellState::kFree;
  int32_t used_milli = 0;          // share in use; for a MIG GPU, of its devices
  std::vector<MigDeviceView> mig;  // a MIG GPU's devices
};

struct NodeView {
  std::string name;
  std::string gpu_model;  // "" without GPUs
  bool unschedulable = false;
  Milli cpu_allocatable = 0;
  Milli cpu_used = 0;
  int32_t tasks = 0;
  Milli gpu_used_milli = 0;  // GPUs its tasks take (fractions summed)
  std::vector<GpuCellView> gpus;
  // Free GPU share that a whole-GPU task cannot use: the free share of fragmented GPUs and
  // of MIG GPUs with a device in use (milli-GPUs).
  int64_t fragmented_milli = 0;
  // The engine's fragmentation measure (engine/fragmentation.h) against the workload
  // profile, when the cluster has one; -1 when not.
  int64_t fgd_milli = -1;
};

// The nodes sharing one topology path (the values of the daemon's topology keys).
struct DomainView {
  std::vector<std::string> path;  // "" for a key the nodes lack
  // By name. Shared between views while the node does not change (ClusterState's stamps).
  std::vector<std::shared_ptr<const NodeView>> nodes;
};

// Per queue, GPUs (whole devices, fractions summed) at one time.
struct QueueSample {
  int64_t time = 0;      // seconds since the epoch
  double deserved = -1;  // -1: no plugin computed a share
  double allocated = 0;
  double pending = 0;
};

struct QueueView {
  std::string name;
  std::string parent;  // "" for a top-level queue
  int64_t weight = 1;
  bool has_deserved = false;
  ResourceVector deserved;   // its fair share as the last cycle computed it
  ResourceVector allocated;  // what its running tasks hold
  ResourceVector pending;    // what its pending tasks ask for
  int32_t pending_jobs = 0;
  int64_t pending_tasks = 0;
  int64_t running_tasks = 0;
};

struct PendingView {
  std::string kind;  // "pod", "podgroup", or "job" outside the daemon
  std::string name;  // "namespace/name"
  std::string queue;
  int32_t priority = 0;
  int32_t pending_tasks = 0;
  int32_t running_tasks = 0;
  int32_t min_member = 1;
  int64_t submitted = 0;   // seconds since the epoch
  ResourceVector pending;  // what its pending tasks ask for
  std::string reason;
};

struct EvictionView {
  int64_t time = 0;    // when the API server answered, seconds since the epoch
  std::string pod;     // "namespace/name"
  std::string cause;   // "preempt", "reclaim", "defragment"
  std::string result;  // "evicted", "refused", "not_found", "failed"
  std::string reason;  // the engine's, naming the job it makes room for
};

struct HealthView {
  bool leader = false;
  int64_t cycles = 0;
  double last_cycle_s = 0;
  double mean_cycle_s = 0;  // over the last minute's cycles
  double max_cycle_s = 0;   // the same
  double binds_per_s = 0;   // over the last minute
  int64_t binds_total = 0;
  int64_t bind_failures_total = 0;
  std::map<std::string, int64_t> bind_failures_by_reason;
  int64_t evictions_total = 0;
  int64_t pending_tasks = 0;
  int64_t nodes = 0;
  double view_build_s = 0;  // building the view before this one
};

inline constexpr size_t kQueueHistorySamples = 360;  // an hour at one per 10 s
inline constexpr int64_t kQueueSampleEveryS = 10;
inline constexpr size_t kRecentEvictions = 200;
inline constexpr size_t kMaxPendingShown = 500;  // the longest waiting first

struct ClusterView {
  int64_t time = 0;  // when it was built, seconds since the epoch
  std::vector<std::string> topology_keys;
  std::vector<DomainView> domains;  // by path
  int64_t gpus = 0;                 // physical GPUs on schedulable... on live nodes
  double gpus_allocated = 0;
  int64_t gpus_free = 0;  // whole GPUs with nothing on them
  int64_t fragmented_milli = 0;
  // DRA devices published for one node, by node name (DeviceClaims::DevicesByNode): which
  // claims hold each. Null when the cluster publishes none. Shared between views until
  // the scheduler notes new ones.
  std::shared_ptr<const std::map<std::string, std::vector<DeviceClaims::NodeDevice>>> dra_devices;
  std::vector<QueueView> queues;  // by name
  // Per queue name, its samples, oldest first; shared between views until the next sample.
  std::shared_ptr<const std::map<std::string, std::vector<QueueSample>>> history;
  std::vector<PendingView> pending;     // the longest waiting first, at most kMaxPendingShown
  int64_t pending_jobs = 0;             // all of them
  std::vector<EvictionView> evictions;  // the latest first
  HealthView health;
};

// The latest view, for any thread.
class ClusterViewBoard {
 public:
  void Publish(std::shared_ptr<const ClusterView> view);
  // Null until the first Publish().
  std::shared_ptr<const ClusterView> Latest() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ClusterView> view_;
};

// Kept by the scheduler thread: what one cluster state does not hold (the last cycle's
// decisions, binds, evictions, history), and the view built from it all.
class ClusterViewBuilder {
 public:
  // After a cycle on `state`: its pending jobs' reasons, the fair shares, how long it took.
  void NoteCycle(const ClusterState& state, const Decisions& decisions, double seconds,
                 double now_s);
  void NoteBind(bool ok, const std::string& failure_reason);
  void NoteEviction(EvictionView eviction);
  void NoteLeader(bool leader) { health_.leader = leader; }
  // The DRA devices the next views show (see ClusterView::dra_devices).
  void NoteDraDevices(std::map<std::string, std::vector<DeviceClaims::NodeDevice>> devices);
  void NoteViewBuild(double seconds) { health_.view_build_s = seconds; }

  // The view of `state` at `now_s` (seconds since the epoch); samples queues when due.
  std::shared_ptr<const ClusterView> Build(const ClusterState& state, double now_s);

 private:
  void AddNodes(const ClusterState& state, ClusterView& view);
  void Sample(const ClusterView& view, int64_t now);

  std::unordered_map<std::string, std::string> reasons_;  // by job name
  std::map<std::string, ResourceVector> deserved_;        // by queue name
  HealthView health_;
  std::deque<std::pair<double, double>> cycle_times_;   // (when, seconds), the last minute
  std::deque<std::pair<double, int64_t>> bind_counts_;  // (when, binds_total), the last minute
  std::deque<EvictionView> evictions_;                  // the latest last
  std::map<std::string, std::deque<QueueSample>> samples_;
  std::shared_ptr<const std::map<std::string, std::vector<QueueSample>>> history_;
  std::shared_ptr<const std::map<std::string, std::vector<DeviceClaims::NodeDevice>>> dra_devices_;
  int64_t last_sample_ = 0;
  // Per node id, the view built at its stamp: the nodes that did not change are not built
  // again (most of them, between two views a second apart).
  struct CachedNode {
    uint64_t stamp = 0;
    std::vector<std::string> topology;
    std::shared_ptr<const NodeView> view;  // null for a removed node
  };
  std::vector<CachedNode> nodes_;
  std::vector<NodeId> order_;   // live nodes by topology path, then name
  int64_t profile_total_ = -1;  // the workload profile the cached fgd values were computed for
};

}  // namespace gantry

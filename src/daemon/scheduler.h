// The scheduler service: informers feed a queue of watch events; one thread applies
// them to the ClusterCache and runs scheduling cycles (on events, coalesced, and every
// schedulePeriod); binds and status go out through the ApiWriter's pools.
//
// Only the leader schedules. The others keep their caches warm, so that one can take
// over at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "daemon/api_writer.h"
#include "daemon/cluster_cache.h"
#include "daemon/cluster_view.h"
#include "daemon/config.h"
#include "daemon/dashboard_metrics.h"
#include "daemon/explain_api.h"
#include "daemon/metrics.h"
#include "daemon/watch_sources.h"
#include "engine/node_table.h"
#include "engine/policy.h"
#include "k8s/client.h"
#include "k8s/informer.h"
#include "model/usage_memory.h"

namespace gantry {

class Scheduler {
 public:
  // `policy`: config.engine, compiled.
  Scheduler(DaemonConfig config, Policy policy, k8s::Client& client, MetricsRegistry& metrics,
            std::string identity);
  ~Scheduler();

  // Starts the informers and runs the scheduling loop on the calling thread until
  // `stop` is set.
  void Run(const std::atomic<bool>& stop);
  // The API collections the informers list and watch ("/api/v1/pods", ...), for RBAC.
  static std::vector<std::string> WatchedCollections();

  // Whether cycles may bind (set by leader election; true when it is off).
  void SetLeader(bool leader);
  // Every informer has delivered its first list.
  bool synced() const;
  // The loop went round recently (for /healthz).
  bool alive() const;
  int64_t cycles() const { return cycles_.load(); }
  // Why pods and PodGroups are pending, published for /api/explain (daemon/explain_api.h).
  const ExplainBoard& explain_board() const { return explain_board_; }
  // Publishes a view of the cluster for the live page on `board` about once a second
  // (cluster_view.h). Without a call no view is built. REQUIRES: before Run(); `board`
  // outlives the scheduler.
  void PublishViews(ClusterViewBoard* board);

 private:
  struct WatchItem {
    WatchKind kind;
    k8s::EventType type;
    nlohmann::json object;
  };
  using Item = std::variant<WatchItem, BindResult, VolumeWriteResult, EvictResult>;

  void Push(Item item);
  void Apply(Item& item);
  void ApplyEviction(const EvictResult& result);
  void RunCycle();
  // Sends the cache's volume writes and the binds of pods whose claims are now bound.
  void SendVolumeWork();
  void PublishGauges();
  void PublishView();

  DaemonConfig config_;
  Policy policy_;
  k8s::Client& client_;
  std::string identity_;
  ClusterCache cache_;
  NodeTableCache node_table_;  // the engine's per-node table, kept in step between cycles
  // Fair share with memory: each queue's decayed usage, advanced before every cycle. Kept
  // in this process only: a new leader starts with none.
  UsageMemory usage_memory_;
  std::vector<std::unique_ptr<k8s::Informer>> informers_;
  std::vector<std::thread> informer_threads_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> items_;

  std::atomic<bool> leader_{false};
  std::atomic<int64_t> cycles_{0};
  std::atomic<int64_t> heartbeat_ns_{0};
  std::atomic<bool> dirty_{true};  // something changed since the last cycle
  uint64_t seed_ = 1;

  struct Metrics {
    HistogramFamily* cycle_seconds;
    CounterFamily* scheduled;
    CounterFamily* bind_failures;
    CounterFamily* unschedulable;
    HistogramFamily* bind_seconds;
    GaugeFamily* pending_by_queue;
    GaugeFamily* queue_allocated;
    GaugeFamily* queue_deserved;
    GaugeFamily* gpus_allocated;
    GaugeFamily* gpus_capacity;
    GaugeFamily* leader;
    GaugeFamily* nodes;
    GaugeFamily* events_dropped;
    CounterFamily* evictions;
  } m_{};
  std::optional<DashboardMetrics> dashboard_;
  // The kind of each pending job's reason in the last cycle (and preempting for jobs
  // placed onto room being freed), for gantry_pending_pods_by_reason.
  std::unordered_map<JobId, PendingKind> pending_kinds_;

  ExplainBoard explain_board_;
  double explained_at_ = -1;  // SteadySeconds() of the last explaining cycle
  // The live page's view: built only when a board is given.
  ClusterViewBoard* view_board_ = nullptr;
  std::unique_ptr<ClusterViewBuilder> view_;

  std::unique_ptr<ApiWriter> writer_;  // last: its threads stop first
};

}  // namespace gantry

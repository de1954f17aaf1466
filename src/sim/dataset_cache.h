// The simulator's model of dataset caches on nodes (issue 13, dataset locality): what
// placing a task where its data is not cached costs, so that the time locality saves can
// be measured.
//
// A task that reads datasets (TaskSpec::datasets) and is placed on a node starts its run
// once every one of them is ready there: a dataset the node caches is ready; one that a
// task placed earlier is still filling is ready when that fill ends; one it does not
// cache is filled, taking the dataset's warm-up time (DatasetInfo::warmup_s, else its
// size over `bandwidth_bytes_per_s`, else `unknown_warmup_s`). Fills run side by side, so
// the task waits for the longest. Its run (its duration) starts after the wait, holding
// its room meanwhile, as a pod does while its data loads.
// From the fill on, the node caches the dataset (ClusterState::SetCachedDatasets, what the
// engine's datalocality plugin sees). Each node holds at most
// kMaxCachedDatasetsPerNode of them and, with `capacity_bytes`, at most that many bytes of
// those of known size; beyond that, the least recently read go first (never one the
// placed task reads). What a node caches when the run starts (its cachedDatasets, Fluid's
// labels) is ready and never dropped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"

namespace gantry {

struct DatasetCacheOptions {
  int64_t bandwidth_bytes_per_s = int64_t{1} << 30;  // 1 GiB/s
  int64_t unknown_warmup_s = 300;                    // a dataset of unknown size and warm-up
  int64_t capacity_bytes = 0;                        // per node; 0: no limit but the count
};

// Reads of datasets over a run: each (task run, dataset) once, as the task was placed.
struct DatasetStats {
  int64_t tasks = 0;     // task runs that read at least one dataset
  int64_t reads = 0;     // (task run, dataset) pairs
  int64_t hits = 0;      // ready on the node
  int64_t filling = 0;   // being filled by an earlier task: waited for the rest
  int64_t misses = 0;    // not cached: filled for this task
  int64_t warmup_s = 0;  // seconds the task runs waited for their data, summed
  int64_t dropped = 0;   // datasets dropped from a node's cache for room
  double hit_pct() const { return reads == 0 ? 0 : 100.0 * static_cast<double>(hits) / reads; }
};

class DatasetCache {
 public:
  // What the nodes of `cluster` cache now is ready; the sizes and warm-ups are its table's.
  DatasetCache(const ClusterState& cluster, const DatasetCacheOptions& options);

  // A task of `spec` placed on `node` at `t`: the seconds before its run starts. The node
  // caches its datasets from now on (and `cluster`'s node says so).
  int64_t Place(ClusterState* cluster, const TaskSpec& spec, NodeId node, int64_t t);

  const DatasetStats& stats() const { return stats_; }

  // A dataset's fill time on one node, by the rules above.
  int64_t WarmupOf(const ClusterState& cluster, const std::string& dataset) const;

 private:
  struct Entry {
    std::string dataset;
    int64_t ready_at = 0;
    int64_t last_read = 0;
    int64_t bytes = 0;    // 0: unknown
    bool pinned = false;  // cached when the run began: never dropped
  };
  // Drops the least recently read entries of `node` (not those read at `t`) until it is
  // within its bounds.
  void MakeRoom(std::vector<Entry>& entries, int64_t t);

  DatasetCacheOptions options_;
  std::vector<std::vector<Entry>> nodes_;  // by NodeId
  DatasetStats stats_;
};

}  // namespace gantry

// A Snapshot is what a session schedules against: the cluster as it stood when the
// snapshot was taken.
//
// REQUIRES: the ClusterState outlives the snapshot and is not changed while a session
// built on it runs. The daemon and the simulator apply world changes between sessions;
// the engine never changes a ClusterState (trial placements live in the session's own
// working copy, see Session and Statement).
#pragma once

#include "engine/node_table.h"
#include "model/cluster.h"

namespace gantry {

class Snapshot {
 public:
  explicit Snapshot(const ClusterState& cluster) : cluster_(&cluster) {}
  // With a cache that the caller keeps from session to session: the session copies the
  // cache's table (brought up to date here) instead of building its own from every node.
  Snapshot(const ClusterState& cluster, NodeTableCache* cache)
      : cluster_(&cluster), node_table_(&cache->Sync(cluster)) {}
  const ClusterState& cluster() const { return *cluster_; }
  // The per-node table of the cluster, or null when the session must build it.
  const NodeTable* node_table() const { return node_table_; }

 private:
  const ClusterState* cluster_;
  const NodeTable* node_table_ = nullptr;
};

}  // namespace gantry

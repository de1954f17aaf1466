// A Snapshot is what a session schedules against: the cluster as it stood when the
// snapshot was taken.
//
// REQUIRES: the ClusterState outlives the snapshot and is not changed while a session
// built on it runs. The daemon and the simulator apply world changes between sessions;
// the engine never changes a ClusterState (trial placements live in the session's own
// working copy, see Session and Statement).
#pragma once

#include "model/cluster.h"

namespace gantry {

class Snapshot {
 public:
  explicit Snapshot(const ClusterState& cluster) : cluster_(&cluster) {}
  const ClusterState& cluster() const { return *cluster_; }

 private:
  const ClusterState* cluster_;
};

}  // namespace gantry

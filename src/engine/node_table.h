// The per-node state a session works on, in flat arrays: free resources, each GPU
// device's free share and memory, and a few counts per node. A session copies it and
// changes its copy as it places tasks (the ClusterState is never touched).
//
// Building it walks every Node (and the heap blocks of its resource vectors and
// devices), which on a cluster of thousands of nodes costs more than a whole scheduling
// period's decisions. A NodeTableCache keeps one table in step with a ClusterState from
// session to session instead, refreshing only the nodes whose stamp moved.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/cluster.h"

namespace gantry {

// A node's state in the session. Plain values, no heap: there is one per node.
struct NodeWork {
  int32_t gpu_begin = 0;  // its devices' slots in the flat GPU arrays
  int32_t gpu_count = 0;
  int32_t whole_free = 0;      // devices entirely free
  int32_t partial_count = 0;   // devices partly used
  Milli gpu_used = 0;          // milli-GPUs in use over all its devices
  int32_t max_free_milli = 0;  // the most free share on any one device
  int32_t tasks = 0;
  // Copied from the Node, so that the per-candidate checks stay in this array.
  uint32_t shape_class = 0;
  Milli max_pods = 0;             // allocatable pods in milli; 0: no limit
  bool removed = false;           // takes no tasks and is in no count (see Node::removed)
  bool one_nvlink_domain = true;  // all its devices in one NVLink domain (see NodeGpus)

  // One more task would pass its pod limit (kube-scheduler's "Too many pods").
  bool pods_full() const {
    return max_pods > 0 && static_cast<Milli>(tasks + 1) * kMilliPerUnit > max_pods;
  }
};

struct NodeTable {
  std::vector<NodeWork> nodes;
  // Free amounts (allocatable minus used), node-major: free[node * resource_count + id].
  // Resources are few (interned ids), so a dense table beats a sparse vector per node.
  // Every resource id that some node has has a column; a resource without one has
  // nothing free anywhere.
  std::vector<Milli> free;
  // Allocatable amounts, in the same layout: scorers read them for every candidate, and
  // a Node's own vector is two cache misses away. Shared: a session copies the table,
  // and allocatable amounts never change in one (the cache copies them before a change).
  std::shared_ptr<std::vector<Milli>> allocatable;
  uint32_t resource_count = 0;
  std::vector<int32_t> gpu_free_milli;  // per device, nodes' devices in node order
  std::vector<int64_t> gpu_free_memory;
};

// The table of a cluster, built from scratch.
NodeTable BuildNodeTable(const ClusterState& cluster);

// Keeps a NodeTable equal to BuildNodeTable(cluster) across changes to the cluster, for
// a caller that opens many sessions on one changing ClusterState (the simulator).
class NodeTableCache {
 public:
  // Brings the table up to date with `cluster` and returns it. Refreshes the nodes whose
  // stamp changed since the last call; rebuilds all when nodes were added, a node's
  // device count changed, a node has a resource without a column, or `cluster` is not
  // the one of the last call or a copy of it (its stamps come from another counter).
  const NodeTable& Sync(const ClusterState& cluster);

 private:
  NodeTable table_;
  std::vector<uint64_t> stamps_;  // per node, the stamp the table reflects
  // The counter those stamps came from (ClusterState::stamp_counter): another cluster's
  // stamps are another count, so a cluster with another counter is built from scratch.
  std::shared_ptr<std::atomic<uint64_t>> counter_;
};

}  // namespace gantry

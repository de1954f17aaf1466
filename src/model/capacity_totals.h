// What the live nodes of a cluster add up to: their allocatable, summed exactly and capped
// for comparison with allocations, and how many there are. ClusterState owns one
// (ClusterState::capacity() and the rest forward to it) and counts a node in when it is
// added or comes back, and out when it is removed or replaced. A class of its own because
// these sums belong to no node, and the rule that keeps them (exact in 128 bits, capped at
// kMilliMax where a ResourceVector must hold them) is theirs alone.
#pragma once

#include <cstddef>
#include <vector>

#include "model/int128.h"
#include "model/node.h"
#include "model/resources.h"

namespace gantry {

class CapacityTotals {
 public:
  // Adds (sign +1) or takes away (-1) a live node's allocatable and device capacity.
  void Count(const Node& node, int sign);

  // The sum of every live node's allocatable, each amount capped at kMilliMax (memory in
  // milli-bytes passes it at 8 PiB: 33,000 nodes of 256 GiB). Compare allocations with it;
  // for ratios to the whole cluster use exact().
  const ResourceVector& capped() const { return capped_; }
  // The exact sum of one resource over every live node.
  Int128 exact(ResourceId id) const { return id < exact_.size() ? exact_[id] : 0; }
  // Nodes counted in: those not removed.
  size_t live_nodes() const { return live_nodes_; }
  // Live nodes whose NUMA nodes align tasks (NodeNuma::aligns): 0 costs sessions nothing.
  size_t numa_nodes() const { return numa_nodes_; }

 private:
  ResourceVector capped_;
  std::vector<Int128> exact_;  // by resource id
  size_t live_nodes_ = 0;
  size_t numa_nodes_ = 0;
};

}  // namespace gantry

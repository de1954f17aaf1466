// The cluster's topology domains, level by level, for gangs that must (or would rather)
// stay inside one domain: a domain of level L is the set of nodes that have level L's
// label and share its value and the values of the levels above it (rack r1 of spine s1
// is not rack r1 of spine s2). Levels are ClusterState::topology_keys(), outermost first.
// Built per level on first use and kept for the session: labels do not change inside one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster.h"

namespace gantry {

// GPU feature discovery's label for a node's NVLink domain (multi-node NVLink fabrics such
// as GB200 NVL72): nodes with the same value share NVLink.
inline constexpr std::string_view kNvlinkCliqueLabel = "nvidia.com/gpu.clique";

struct TopologyDomain {
  std::string name;           // the level's values down to it, "/"-joined: "s1/r1"
  std::vector<NodeId> nodes;  // in id order; nodes removed from the cluster are left out
  // Its nodes by NVLink clique (kNvlinkCliqueLabel), each group in id order and the groups
  // in value order, nodes without the label last as one group; empty when none of its
  // nodes has the label.
  std::vector<std::vector<NodeId>> cliques;
};

// The name of the node's domain at `level` ("s1/r1"), or "" when it lacks the level's label.
std::string TopologyDomainName(const Node& node, int level);

class TopologyDomains {
 public:
  // The jobs' own label keys that are not levels are found here, once per session.
  explicit TopologyDomains(const ClusterState& cluster);

  // The index of a level's label key (a job's own key: after the cluster's levels), or -1
  // when it is none.
  int LevelOf(std::string_view key) const;
  // Whether the level is a job's own label key rather than one of the cluster's levels:
  // then it has no levels above it.
  bool Standalone(int level) const {
    return static_cast<size_t>(level) >= cluster_.topology_keys().size();
  }
  // The level's domains, in name order.
  // REQUIRES: 0 <= level < topology_keys().size().
  const std::vector<TopologyDomain>& At(int level);
  // The index in At(level) of the node's domain, or -1 when it lacks the level's label.
  int32_t DomainOf(int level, NodeId node);
  // The node's domain at `level`, or null when it lacks the level's label.
  const TopologyDomain* DomainOfNode(int level, NodeId node);

 private:
  struct Level {
    bool built = false;
    std::vector<TopologyDomain> domains;
    std::vector<int32_t> domain_of;  // by node
  };
  Level& Built(int level);

  const ClusterState& cluster_;
  std::vector<std::string> standalone_;  // jobs' label keys that are not levels, sorted
  std::vector<Level> levels_;
};

}  // namespace gantry

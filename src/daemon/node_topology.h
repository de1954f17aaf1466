// Where nodes' places come from, beside the cache: the topology levels (the configuration's
// topologyKeys, else the levels of Kueue's first Topology by name, else the tiers of
// Volcano's HyperNodes, each node labelled with the HyperNode of each tier that holds it,
// else the model's defaults), and each node's NUMA nodes and topology manager policy from
// its NodeResourceTopology (Node Feature Discovery, model/numa.h).
//
// It keeps the Topology, HyperNode and NodeResourceTopology objects from the watch and
// answers each change with what it means for the cache's nodes (a Change); the cache applies
// that. An object that cannot be read is an event, and what was read of it before holds.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "daemon/api_requests.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "model/cluster.h"
#include "model/hypernodes.h"

namespace gantry {

class NodeTopology {
 public:
  // The configuration's levels (DaemonConfig::topology_keys), outermost first: they win
  // over the objects'. REQUIRES: before the first event.
  void Configure(std::vector<std::string> keys) { configured_ = std::move(keys); }
  bool configured() const { return !configured_.empty(); }

  // What a change means for the cache's nodes and jobs.
  struct Change {
    bool levels = false;    // the levels may have changed: Levels(), and jobs read them again
    bool relabel = false;   // every node's HyperNode labels again (AddHyperNodeLabels)
    std::string numa_node;  // the node whose NUMA description may have changed (AttachNuma)
    std::vector<ObjectEvent> problems;
  };
  Change OnKueueTopology(k8s::EventType type, const nlohmann::json& object);
  Change OnHyperNode(k8s::EventType type, const nlohmann::json& object);
  Change OnNodeResourceTopology(k8s::EventType type, const nlohmann::json& object);

  // The levels the objects give now (when the configuration names none).
  std::vector<std::string> Levels() const;
  // Adds to a node's labels those of the HyperNodes that hold it.
  void AddHyperNodeLabels(Node& node) const;
  // Whether `levels` are the HyperNodes' tiers; the level of a Volcano networkTopology tier
  // then ("" when the tree has no such tier).
  bool LevelsAreTiers(const std::vector<std::string>& levels) const {
    return !hypernode_tree_.empty() && levels == hypernode_tree_.LevelKeys();
  }
  std::string LevelForTier(int32_t tier) const { return hypernode_tree_.LevelForTier(tier); }
  // Gives a node the NUMA description of its NodeResourceTopology, when there is one and it
  // matches the node's devices; otherwise none, and says why once (in *problems).
  void AttachNuma(Node& node, std::vector<ObjectEvent>* problems);

 private:
  std::vector<std::string> configured_;
  std::vector<std::string> defaults_ = ClusterState().topology_keys();
  std::map<std::string, std::vector<std::string>> kueue_topologies_;         // by name: levels
  std::map<std::string, std::pair<k8s::ObjectMeta, HyperNode>> hypernodes_;  // by name
  HyperNodeTree hypernode_tree_;
  std::set<std::string> hypernode_problems_;  // said already, while they last
  // NodeResourceTopology objects by name (their node's): what was read of each, and the
  // problem last said of it (empty when none).
  struct NumaRecord {
    k8s::ObjectMeta meta;
    NodeNuma numa;
    std::string problem;
  };
  std::map<std::string, NumaRecord> node_numa_;
};

}  // namespace gantry

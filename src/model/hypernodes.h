// Volcano's HyperNodes (topology.volcano.sh/v1alpha1): a tree of node groups by network
// tier. A HyperNode of tier 1 holds nodes (members of type Node, selected by exact name,
// by a regular expression over names, or by labels); one of a higher tier holds
// HyperNodes of lower tiers. Gantry turns the tree into topology levels: tier T is the
// label key HyperNodeLevelKey(T), whose value on a node is the HyperNode of that tier that
// holds it, so that the engine's topology domains (ClusterState::topology_keys) are the
// HyperNodes themselves, and Volcano's highestTierAllowed names a level by its tier.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/labels.h"
#include "model/pod_constraints.h"
#include "model/status.h"

namespace re2 {
class RE2;
}

namespace gantry {

// "topology.gantry.dev/hypernode-tier-2": the node label a tier's level is read from.
inline constexpr std::string_view kHyperNodeLevelPrefix = "topology.gantry.dev/hypernode-tier-";
std::string HyperNodeLevelKey(int32_t tier);

struct HyperNodeMember {
  bool hypernode = false;  // type HyperNode (else Node)
  // One selector: exactMatch.name, regexMatch.pattern (RE2 syntax, as Go's regexp, and a
  // partial match as Volcano's MatchString), or labelMatch (nodes only).
  std::string exact;
  std::string pattern;
  std::optional<LabelSelector> labels;
};

struct HyperNode {
  std::string name;
  int32_t tier = 1;
  std::vector<HyperNodeMember> members;
};

// What was wrong with the HyperNodes, each naming one, for an event or an error.
struct HyperNodeProblem {
  std::string hypernode;
  std::string message;
};

// Bounds on what a tree holds, so that what clients write cannot make building it or
// labelling nodes unbounded: HyperNodes past the first kMaxHyperNodes by name, and members
// matched by pattern or labels past the first kMaxHyperNodePatterns, are left out (and
// said). Exact names are looked up, not scanned.
inline constexpr size_t kMaxHyperNodes = 4096;
inline constexpr size_t kMaxHyperNodePatterns = 4096;

class HyperNodeTree {
 public:
  HyperNodeTree();
  ~HyperNodeTree();
  HyperNodeTree(HyperNodeTree&&) noexcept;
  HyperNodeTree& operator=(HyperNodeTree&&) noexcept;

  // Builds the tree. What cannot be used is left out and said in *problems: a pattern RE2
  // refuses (that member), a cycle of HyperNodes (all of them: "a > b > a"), a member
  // HyperNode of a tier not below its parent's (that member), a HyperNode two parents
  // claim (the first parent by name keeps it), a member naming no HyperNode.
  static HyperNodeTree Build(std::vector<HyperNode> hypernodes,
                             std::vector<HyperNodeProblem>* problems);

  bool empty() const { return nodes_.empty(); }
  // The levels' label keys, highest tier first: the tiers some HyperNode has.
  std::vector<std::string> LevelKeys() const;
  // The level of Volcano's highestTierAllowed: the highest tier at or below `tier`; ""
  // when the tier is above every HyperNode's (the whole cluster) or below all.
  std::string LevelForTier(int32_t tier) const;
  // The labels a node gets, (HyperNodeLevelKey(tier), HyperNode) for each tier of the
  // HyperNodes that hold it, directly or through their children. A node two HyperNodes of
  // one tier select is in the first of them by name.
  std::vector<std::pair<std::string, std::string>> LabelsFor(const std::string& node,
                                                             const Labels& labels) const;

 private:
  struct Entry {
    HyperNode spec;
    std::vector<std::shared_ptr<re2::RE2>> patterns;  // per member; null where none
    int32_t parent = -1;                              // index, or -1 for a root
    bool usable = true;                               // false: in a cycle
  };
  bool Selects(const Entry& e, size_t member, const std::string& name, const Labels* labels) const;
  std::vector<Entry> nodes_;  // sorted by name
  // Node members by exact name: node -> the HyperNodes naming it, in name order.
  std::map<std::string, std::vector<size_t>, std::less<>> by_node_name_;
  // HyperNodes with Node members matched by pattern or labels, in name order.
  std::vector<size_t> with_node_patterns_;
};

}  // namespace gantry

#include "model/hypernodes.h"

#include <re2/re2.h>

#include <algorithm>
#include <set>

namespace gantry {

std::string HyperNodeLevelKey(int32_t tier) {
  return std::string(kHyperNodeLevelPrefix) + std::to_string(tier);
}

HyperNodeTree::HyperNodeTree() = default;
HyperNodeTree::~HyperNodeTree() = default;
HyperNodeTree::HyperNodeTree(HyperNodeTree&&) noexcept = default;
HyperNodeTree& HyperNodeTree::operator=(HyperNodeTree&&) noexcept = default;

bool HyperNodeTree::Selects(const Entry& e, size_t member, const std::string& name,
                            const Labels* labels) const {
  const HyperNodeMember& m = e.spec.members[member];
  if (!m.exact.empty()) return m.exact == name;
  if (e.patterns[member]) return RE2::PartialMatch(name, *e.patterns[member]);
  if (m.labels && labels != nullptr) return m.labels->Matches(*labels);
  return false;
}

HyperNodeTree HyperNodeTree::Build(std::vector<HyperNode> hypernodes,
                                   std::vector<HyperNodeProblem>* problems) {
  HyperNodeTree tree;
  std::stable_sort(hypernodes.begin(), hypernodes.end(),
                   [](const HyperNode& a, const HyperNode& b) { return a.name < b.name; });
  size_t patterns = 0;
  for (HyperNode& h : hypernodes) {
    if (!tree.nodes_.empty() && tree.nodes_.back().spec.name == h.name) {
      problems->push_back({h.name, "hypernode " + h.name + " is given twice; the first holds"});
      continue;
    }
    if (tree.nodes_.size() == kMaxHyperNodes) {
      problems->push_back({h.name, "hypernode " + h.name + " is past the first " +
                                       std::to_string(kMaxHyperNodes) +
                                       " by name, the most gantry reads; left out"});
      continue;
    }
    Entry e;
    e.spec.name = h.name;
    e.spec.tier = h.tier;
    for (size_t i = 0; i < h.members.size(); ++i) {
      HyperNodeMember& m = h.members[i];
      const std::string at =
          "hypernode " + h.name + ": spec.members[" + std::to_string(i) + "].selector";
      if (m.hypernode && m.labels) {
        problems->push_back({h.name, at + ".labelMatch: selects nodes only; ignored"});
        continue;
      }
      if (m.exact.empty() && ++patterns > kMaxHyperNodePatterns) {
        problems->push_back({h.name, at + ": past the first " +
                                         std::to_string(kMaxHyperNodePatterns) +
                                         " members matched by pattern or labels; ignored"});
        continue;
      }
      std::shared_ptr<re2::RE2> pattern;
      if (m.exact.empty() && !m.labels) {
        RE2::Options options;
        options.set_log_errors(false);
        pattern = std::make_shared<re2::RE2>(m.pattern, options);
        if (!pattern->ok()) {
          problems->push_back(
              {h.name, at + ".regexMatch.pattern: " + pattern->error() + "; ignored"});
          continue;
        }
      }
      e.spec.members.push_back(std::move(m));
      e.patterns.push_back(std::move(pattern));
    }
    tree.nodes_.push_back(std::move(e));
  }
  const size_t n = tree.nodes_.size();
  std::map<std::string_view, size_t> index;
  for (size_t i = 0; i < n; ++i) index.emplace(tree.nodes_[i].spec.name, i);
  // Edges parent -> child from the HyperNode members, in name order; the node members'
  // indexes.
  std::vector<std::vector<size_t>> children(n);
  for (size_t p = 0; p < n; ++p) {
    const Entry& e = tree.nodes_[p];
    auto add = [&](size_t c) {
      if (std::find(children[p].begin(), children[p].end(), c) == children[p].end()) {
        children[p].push_back(c);
      }
    };
    bool node_patterns = false;
    for (size_t m = 0; m < e.spec.members.size(); ++m) {
      const HyperNodeMember& member = e.spec.members[m];
      if (!member.hypernode) {
        if (!member.exact.empty()) {
          auto& named = tree.by_node_name_[member.exact];
          if (named.empty() || named.back() != p) named.push_back(p);
        } else {
          node_patterns = true;
        }
        continue;
      }
      if (!member.exact.empty()) {
        if (auto it = index.find(member.exact); it != index.end()) add(it->second);
        continue;
      }
      for (size_t c = 0; c < n; ++c) {
        if (tree.Selects(e, m, tree.nodes_[c].spec.name, nullptr)) add(c);
      }
    }
    if (node_patterns) tree.with_node_patterns_.push_back(p);
  }
  // Cycles first, over every edge (depth first, iteratively: the input bounds nothing).
  std::vector<uint8_t> color(n, 0);  // 0 unseen, 1 on the path, 2 done
  for (size_t root = 0; root < n; ++root) {
    if (color[root] != 0) continue;
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
    color[root] = 1;
    while (!stack.empty()) {
      auto& [at, next] = stack.back();
      if (next == children[at].size()) {
        color[at] = 2;
        stack.pop_back();
        continue;
      }
      size_t c = children[at][next++];
      if (color[c] == 0) {
        color[c] = 1;
        stack.push_back({c, 0});
      } else if (color[c] == 1) {
        // A cycle: c ... at > c, on the path.
        size_t from = 0;
        while (stack[from].first != c) ++from;
        std::string cycle;
        for (size_t k = from; k < stack.size(); ++k) {
          cycle += tree.nodes_[stack[k].first].spec.name + " > ";
          tree.nodes_[stack[k].first].usable = false;
        }
        cycle += tree.nodes_[c].spec.name;
        problems->push_back(
            {tree.nodes_[c].spec.name, "hypernodes " + cycle + " form a cycle; they are left out"});
      }
    }
  }
  // Parents: the first claim by name; a child of a tier not below its parent's is refused.
  for (size_t p = 0; p < n; ++p) {
    Entry& parent = tree.nodes_[p];
    if (!parent.usable) continue;
    for (size_t c : children[p]) {
      Entry& child = tree.nodes_[c];
      if (!child.usable) continue;
      if (child.spec.tier >= parent.spec.tier) {
        problems->push_back({parent.spec.name, "hypernode " + parent.spec.name + " (tier " +
                                                   std::to_string(parent.spec.tier) +
                                                   ") has member " + child.spec.name + " of tier " +
                                                   std::to_string(child.spec.tier) +
                                                   ", not a lower one; ignored"});
        continue;
      }
      if (child.parent >= 0) {
        problems->push_back(
            {child.spec.name, "hypernode " + child.spec.name + " is a member of both " +
                                  tree.nodes_[static_cast<size_t>(child.parent)].spec.name +
                                  " and " + parent.spec.name + "; it stays in the first"});
        continue;
      }
      child.parent = static_cast<int32_t>(p);
    }
  }
  return tree;
}

std::vector<std::string> HyperNodeTree::LevelKeys() const {
  std::set<int32_t, std::greater<>> tiers;
  for (const Entry& e : nodes_) {
    if (e.usable) tiers.insert(e.spec.tier);
  }
  std::vector<std::string> keys;
  for (int32_t t : tiers) keys.push_back(HyperNodeLevelKey(t));
  return keys;
}

std::string HyperNodeTree::LevelForTier(int32_t tier) const {
  int32_t best = -1, lowest = -1, highest = -1;
  for (const Entry& e : nodes_) {
    if (!e.usable) continue;
    const int32_t t = e.spec.tier;
    if (t <= tier && t > best) best = t;
    if (lowest < 0 || t < lowest) lowest = t;
    highest = std::max(highest, t);
  }
  if (highest < 0 || tier > highest) return "";
  return HyperNodeLevelKey(best >= 0 ? best : lowest);
}

std::vector<std::pair<std::string, std::string>> HyperNodeTree::LabelsFor(
    const std::string& node, const Labels& labels) const {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<int32_t> tiers_done;
  // The HyperNodes that hold the node directly, in name order.
  std::vector<size_t> holders;
  if (auto it = by_node_name_.find(node); it != by_node_name_.end()) holders = it->second;
  for (size_t i : with_node_patterns_) {
    const Entry& e = nodes_[i];
    for (size_t m = 0; m < e.spec.members.size(); ++m) {
      const HyperNodeMember& member = e.spec.members[m];
      if (!member.hypernode && member.exact.empty() && Selects(e, m, node, &labels)) {
        holders.push_back(i);
        break;
      }
    }
  }
  std::sort(holders.begin(), holders.end());
  holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
  for (size_t i : holders) {
    const Entry& e = nodes_[i];
    if (!e.usable) continue;
    // Up the parents: tiers rise strictly on the way (Build refused the rest), so it ends.
    for (const Entry* x = &e; x != nullptr;
         x = x->parent >= 0 ? &nodes_[static_cast<size_t>(x->parent)] : nullptr) {
      if (tiers_done.insert(x->spec.tier).second) {
        out.emplace_back(HyperNodeLevelKey(x->spec.tier), x->spec.name);
      }
    }
  }
  return out;
}

}  // namespace gantry

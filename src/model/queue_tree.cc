#include "model/queue_tree.h"

#include <algorithm>

#include "model/limits.h"

namespace gantry {
namespace {

std::string Quoted(const std::string& name) {
  return "\"" + name + "\"";
}

// Marks every queue on a cycle of parents, naming the whole cycle.
void MarkCycles(const std::vector<Queue>& queues, std::vector<std::string>* problem) {
  const size_t n = queues.size();
  std::vector<uint8_t> state(n, 0);  // 0 unseen, 1 on the current walk, 2 done
  std::vector<QueueId> walk;
  for (QueueId start = 0; start < n; ++start) {
    walk.clear();
    QueueId q = start;
    while (q != kNone && state[q] == 0) {
      state[q] = 1;
      walk.push_back(q);
      q = queues[q].parent;
    }
    if (q != kNone && state[q] == 1) {  // the walk came back to itself: a cycle from q
      auto from = std::find(walk.begin(), walk.end(), q);
      std::string names;
      for (auto it = from; it != walk.end(); ++it) names += Quoted(queues[*it].name) + " -> ";
      names += Quoted(queues[q].name);
      for (auto it = from; it != walk.end(); ++it) {
        (*problem)[*it] =
            "queue " + Quoted(queues[*it].name) + " is on a cycle of parents: " + names;
      }
    }
    for (QueueId w : walk) state[w] = 2;
  }
}

}  // namespace

QueueTree BuildQueueTree(const std::vector<Queue>& queues) {
  const size_t n = queues.size();
  QueueTree tree;
  tree.children.assign(n, {});
  tree.problem.assign(n, "");
  tree.guarantee.assign(n, {});
  tree.depth.assign(n, 0);
  for (QueueId q = 0; q < n; ++q) {
    if (!queues[q].missing_parent.empty()) {
      tree.problem[q] = "queue " + Quoted(queues[q].name) + ": parent queue " +
                        Quoted(queues[q].missing_parent) + " does not exist";
    }
  }
  MarkCycles(queues, &tree.problem);
  // Depths, and the problem of the nearest ancestor that has one. Cycles are marked, so
  // every walk ends within n steps; it is cut at the depth limit anyway.
  for (QueueId q = 0; q < n; ++q) {
    if (!tree.problem[q].empty()) continue;
    int depth = 1;
    QueueId up = queues[q].parent;
    while (up != kNone && tree.problem[up].empty() && depth <= kMaxQueueDepth) {
      ++depth;
      up = queues[up].parent;
    }
    if (up != kNone && !tree.problem[up].empty()) {
      tree.problem[q] = "queue " + Quoted(queues[q].name) + " is below queue " +
                        Quoted(queues[up].name) + ", which is out of the tree";
    } else if (depth > kMaxQueueDepth) {
      tree.problem[q] = "queue " + Quoted(queues[q].name) + " is more than " +
                        std::to_string(kMaxQueueDepth) + " levels deep";
    } else {
      tree.depth[q] = depth;
    }
  }
  // Guarantees bottom-up: each parent's children in name order, so that which child is
  // refused when together they do not fit does not depend on ids.
  std::vector<QueueId> by_depth;
  for (QueueId q = 0; q < n; ++q) {
    if (tree.problem[q].empty()) by_depth.push_back(q);
  }
  std::vector<std::vector<QueueId>> kids(n);
  for (QueueId q : by_depth) {
    if (queues[q].parent != kNone) kids[queues[q].parent].push_back(q);
  }
  std::stable_sort(by_depth.begin(), by_depth.end(),
                   [&](QueueId a, QueueId b) { return tree.depth[a] > tree.depth[b]; });
  for (QueueId p : by_depth) {
    std::sort(kids[p].begin(), kids[p].end(),
              [&](QueueId a, QueueId b) { return queues[a].name < queues[b].name; });
    ResourceVector sum;
    for (QueueId c : kids[p]) {
      const ResourceVector& g = tree.guarantee[c];
      if (!g.FitsInNamed(queues[p].capability)) {
        tree.problem[c] = "queue " + Quoted(queues[c].name) + ": guarantee (" + g.ToString() +
                          ") exceeds the capability of its parent queue " + Quoted(queues[p].name) +
                          " (" + queues[p].capability.ToString() + ")";
        continue;
      }
      ResourceVector with = sum;
      with.Add(g);
      if (!with.FitsInNamed(queues[p].guarantee)) {
        tree.problem[c] = "queue " + Quoted(queues[c].name) + ": guarantee (" + g.ToString() +
                          "), with its siblings' before it (" + sum.ToString() +
                          "), exceeds the guarantee of its parent queue " + Quoted(queues[p].name) +
                          " (" + queues[p].guarantee.ToString() + ")";
        continue;
      }
      sum = std::move(with);
    }
    ResourceVector own = queues[p].guarantee;
    for (const auto& e : sum.entries()) {
      if (own.Get(e.id) < e.amount) own.Set(e.id, e.amount);
    }
    tree.guarantee[p] = std::move(own);
  }
  // A refused guarantee takes its subtree out too (top-down, so that it reaches the bottom).
  std::stable_sort(by_depth.begin(), by_depth.end(),
                   [&](QueueId a, QueueId b) { return tree.depth[a] < tree.depth[b]; });
  for (QueueId q : by_depth) {
    const QueueId p = queues[q].parent;
    if (tree.problem[q].empty() && p != kNone && !tree.problem[p].empty()) {
      tree.problem[q] = "queue " + Quoted(queues[q].name) + " is below queue " +
                        Quoted(queues[p].name) + ", which is out of the tree";
    }
  }
  for (QueueId q = 0; q < n; ++q) {
    if (!tree.problem[q].empty()) {
      tree.depth[q] = 0;
      continue;
    }
    if (queues[q].parent == kNone) {
      tree.roots.push_back(q);
    } else {
      tree.children[queues[q].parent].push_back(q);
    }
  }
  return tree;
}

std::string FirstQueueProblem(const QueueTree& tree, QueueId* queue) {
  for (QueueId q = 0; q < tree.problem.size(); ++q) {
    if (!tree.problem[q].empty()) {
      if (queue) *queue = q;
      return tree.problem[q];
    }
  }
  return "";
}

}  // namespace gantry

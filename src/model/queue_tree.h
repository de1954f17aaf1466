// The queue tree: which queues are in it, their children, and why the others are not.
//
// A queue is out of the tree (and so is everything below it) when it names a parent that
// does not exist, is on a cycle of parents, is deeper than kMaxQueueDepth, or has a
// guarantee that does not fit inside its parent's: each child's guarantee within the
// parent's capability, and the children's guarantees together within the parent's own
// guarantee where it names one. Problems are per queue, so one bad queue stops only its
// own subtree.
#pragma once

#include <string>
#include <vector>

#include "model/cluster.h"

namespace gantry {

struct QueueTree {
  std::vector<std::vector<QueueId>> children;  // by queue, in id order; only queues in the tree
  std::vector<QueueId> roots;                  // top-level queues in the tree, in id order
  std::vector<std::string> problem;            // by queue: why it is out ("" when in the tree)
  // By queue: its own guarantee, and where it names none of a resource, its children's
  // guarantees of it added up.
  std::vector<ResourceVector> guarantee;
  std::vector<int> depth;  // by queue in the tree: 1 for a top-level queue

  bool in_tree(QueueId q) const { return problem[q].empty(); }
  bool leaf(QueueId q) const { return children[q].empty(); }
};

QueueTree BuildQueueTree(const std::vector<Queue>& queues);

// The first problem in id order, as one message ("" when every queue is in the tree).
std::string FirstQueueProblem(const QueueTree& tree, QueueId* queue);

}  // namespace gantry

#include "model/group_tree.h"

#include <algorithm>

namespace gantry {

Status ValidateGroupTree(std::span<const TaskGroup> groups) {
  if (groups.empty()) return Status::Ok();
  std::vector<int32_t> children(groups.size(), 0);
  std::vector<int> depth(groups.size(), 1);
  for (size_t i = 0; i < groups.size(); ++i) {
    const TaskGroup& g = groups[i];
    const std::string where = "group \"" + g.name + "\"";
    if (i == 0 && g.parent != -1) return Status::Invalid(where + ": the root must come first");
    if (i > 0 && (g.parent < 0 || static_cast<size_t>(g.parent) >= i)) {
      return Status::Invalid(where + ": its parent must come before it");
    }
    if (g.min < 1) return Status::Invalid(where + ": its minimum must be at least 1");
    if (i > 0) {
      const auto parent = static_cast<size_t>(g.parent);
      if (groups[parent].leaf) {
        return Status::Invalid(where + ": its parent \"" + groups[parent].name +
                               "\" holds tasks, not groups");
      }
      ++children[parent];
      depth[i] = depth[parent] + 1;
      if (depth[i] > kMaxGroupTreeDepth) {
        return Status::Invalid(where + ": the tree is deeper than " +
                               std::to_string(kMaxGroupTreeDepth) + " levels");
      }
    }
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!groups[i].leaf && groups[i].min > children[i]) {
      return Status::Invalid("group \"" + groups[i].name + "\": needs " +
                             std::to_string(groups[i].min) + " ready groups but has " +
                             std::to_string(children[i]));
    }
  }
  return Status::Ok();
}

bool GroupTreeReady(std::span<const TaskGroup> groups, std::span<const int32_t> counts) {
  if (groups.empty()) return true;
  // Children come after their parents: one pass from the end sees every child first.
  std::vector<int32_t> ready_children(groups.size(), 0);
  bool ready = false;
  for (size_t i = groups.size(); i-- > 0;) {
    const TaskGroup& g = groups[i];
    ready = (g.leaf ? counts[i] : ready_children[i]) >= g.min;
    if (ready && g.parent >= 0) ++ready_children[static_cast<size_t>(g.parent)];
  }
  return ready;  // the root's, the last one evaluated
}

int32_t MinimumTasks(std::span<const TaskGroup> groups) {
  if (groups.empty()) return 1;
  std::vector<std::vector<int32_t>> child_minimums(groups.size());
  int32_t minimum = 0;
  for (size_t i = groups.size(); i-- > 0;) {
    const TaskGroup& g = groups[i];
    if (g.leaf) {
      minimum = g.min;
    } else {  // its `min` cheapest children
      std::vector<int32_t>& mins = child_minimums[i];
      std::sort(mins.begin(), mins.end());
      minimum = 0;
      for (size_t k = 0; k < std::min(mins.size(), static_cast<size_t>(g.min)); ++k) {
        minimum += mins[k];
      }
    }
    if (g.parent >= 0) child_minimums[static_cast<size_t>(g.parent)].push_back(minimum);
  }
  return minimum;
}

}  // namespace gantry

// A job whose tasks form a tree of groups: Kubernetes' CompositePodGroup
// (scheduling.k8s.io/v1alpha3), whose children are PodGroups or other CompositePodGroups.
// kube-scheduler admits the tree as a whole when its root is ready: a PodGroup is ready
// when `minCount` of its pods are placed, a CompositePodGroup when `minGroupCount` of its
// children are (pkg/scheduler/framework/plugins/gangscheduling, isCPGTreeReady).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/status.h"

namespace gantry {

struct TaskGroup {
  std::string name;     // for messages
  int32_t parent = -1;  // index of its parent, before its own; -1 for the root (index 0)
  // A leaf: how many of its tasks make it ready. An inner group: how many of its
  // children must be ready.
  int32_t min = 1;
  bool leaf = true;  // its tasks name it (Task::group); else groups name it as parent
  bool operator==(const TaskGroup&) const = default;
};

// A tree is at most this deep, its root included (kube-scheduler refuses deeper ones).
inline constexpr int kMaxGroupTreeDepth = 4;
// And holds at most this many groups (a bound on what a client's objects can make us build).
inline constexpr size_t kMaxGroupsPerTree = 10'000;

// An error naming the group when the tree is not one: the root is not first, a parent
// comes after its child, a minimum is below 1 or above its number of children, a leaf
// has children, or the tree is deeper than kMaxGroupTreeDepth.
Status ValidateGroupTree(std::span<const TaskGroup> groups);

// Whether the root is ready when `counts[i]` tasks of leaf i are placed (inner groups'
// entries are ignored). REQUIRES: a valid tree, counts.size() == groups.size().
bool GroupTreeReady(std::span<const TaskGroup> groups, std::span<const int32_t> counts);

// The fewest placed tasks that can make the root ready: the job's gang minimum.
// REQUIRES: a valid tree.
int32_t MinimumTasks(std::span<const TaskGroup> groups);

}  // namespace gantry

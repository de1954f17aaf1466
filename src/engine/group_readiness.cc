#include "engine/group_readiness.h"

#include <algorithm>
#include <vector>

namespace gantry {
namespace {

bool Counts(TaskStatus status, bool count_pipelined) {
  return status == TaskStatus::kRunning || status == TaskStatus::kAllocated ||
         (count_pipelined && status == TaskStatus::kPipelined);
}

}  // namespace

std::vector<int32_t> ReadyPerLeaf(const Session& s, const Job& j) {
  std::vector<int32_t> counts(j.groups.size(), 0);
  for (TaskId t : j.tasks) {
    const int32_t group = s.cluster().task(t).group;
    if (group >= 0 && Counts(s.task_status(t), /*count_pipelined=*/false)) {
      ++counts[static_cast<size_t>(group)];
    }
  }
  return counts;
}

bool GroupsReady(const Session& s, JobId job, bool count_pipelined) {
  const ClusterState& c = s.cluster();
  const Job& j = c.job(job);
  std::vector<int32_t> counts(j.groups.size(), 0);
  std::vector<bool> placed_now(j.groups.size(), false);
  for (TaskId t : j.tasks) {
    const int32_t group = c.task(t).group;
    if (group < 0) continue;
    const TaskStatus status = s.task_status(t);
    if (!Counts(status, count_pipelined)) continue;
    ++counts[static_cast<size_t>(group)];
    placed_now[static_cast<size_t>(group)] =
        placed_now[static_cast<size_t>(group)] || status != TaskStatus::kRunning;
  }
  for (size_t g = 0; g < j.groups.size(); ++g) {
    if (placed_now[g] && counts[g] < j.groups[g].min) return false;
  }
  return GroupTreeReady(j.groups, counts);
}

bool GroupsStayReadyWithout(const Session& s, JobId job, std::span<const TaskId> leaving) {
  const Job& j = s.cluster().job(job);
  std::vector<int32_t> counts = ReadyPerLeaf(s, j);
  std::vector<bool> touched(j.groups.size(), false);
  for (TaskId t : leaving) {
    const int32_t group = s.cluster().task(t).group;
    if (group < 0) continue;
    --counts[static_cast<size_t>(group)];
    touched[static_cast<size_t>(group)] = true;
  }
  for (size_t g = 0; g < j.groups.size(); ++g) {
    if (touched[g] && counts[g] > 0 && counts[g] < j.groups[g].min) return false;
  }
  return GroupTreeReady(j.groups, counts);
}

std::vector<TaskId> GroupsMayGive(const Session& s, JobId job, std::span<const TaskId> candidates) {
  const ClusterState& c = s.cluster();
  const Job& j = c.job(job);
  std::vector<int32_t> counts = ReadyPerLeaf(s, j);
  std::vector<std::vector<TaskId>> by_leaf(j.groups.size());
  std::vector<size_t> leaf_order;  // leaves in the order of their first candidate
  for (TaskId t : candidates) {
    const int32_t group = c.task(t).group;
    if (group < 0) continue;
    const auto g = static_cast<size_t>(group);
    if (by_leaf[g].empty()) leaf_order.push_back(g);
    by_leaf[g].push_back(t);
  }
  std::vector<TaskId> given;
  for (size_t g : leaf_order) {
    const auto n = static_cast<int32_t>(by_leaf[g].size());
    if (n >= counts[g]) {  // the whole leaf, if the root stays ready without it
      const int32_t before = counts[g];
      counts[g] = 0;
      if (GroupTreeReady(j.groups, counts)) {
        given.insert(given.end(), by_leaf[g].begin(), by_leaf[g].end());
        continue;
      }
      counts[g] = before;
    }
    const int32_t spare = std::max(0, std::min(n, counts[g] - j.groups[g].min));
    given.insert(given.end(), by_leaf[g].begin(), by_leaf[g].begin() + spare);
    counts[g] -= spare;
  }
  // In the candidates' order.
  std::sort(given.begin(), given.end());
  std::vector<TaskId> out;
  for (TaskId t : candidates) {
    if (std::binary_search(given.begin(), given.end(), t)) out.push_back(t);
  }
  return out;
}

std::vector<TaskId> RunningInLeafOf(const Session& s, TaskId task) {
  const ClusterState& c = s.cluster();
  std::vector<TaskId> out;
  for (TaskId t : c.job(c.task(task).job).tasks) {
    if (c.task(t).group == c.task(task).group && s.task_status(t) == TaskStatus::kRunning) {
      out.push_back(t);
    }
  }
  return out;
}

}  // namespace gantry

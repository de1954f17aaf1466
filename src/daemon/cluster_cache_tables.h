// Two tables the cluster cache (daemon/cluster_cache.h) keeps beside ClusterState: the task
// specs that pods share, and the jobs in line by creation time. Internal to the cache.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "model/cluster.h"

namespace gantry::cache {

// Specs shared by pods of one shape: each is in ClusterState once, counted, and its slot is
// reused once no task uses it.
class SpecTable {
 public:
  // The spec's id, or kNone when no task uses it.
  SpecId Find(const TaskSpec& spec) const;
  // The spec's id, added to `state` (or put in a free slot) when no task used it yet.
  SpecId Acquire(const TaskSpec& spec, ClusterState& state);
  // REQUIRES: `id` was acquired and not yet released as many times.
  void Release(SpecId id, const ClusterState& state);
  size_t size() const { return ids_.size(); }

 private:
  std::unordered_map<TaskSpec, SpecId, TaskSpecHash> ids_;  // live specs
  std::vector<int32_t> uses_;                               // SpecId -> tasks using it
  std::vector<SpecId> free_;
};

// ClusterState's jobs in line: by creation time, then key (then id, for a key that two live
// jobs share for a moment). Job::creation is created * kOrderSlots + the job's slot among
// those created in that second, so that the session's order (Job::creation, then JobId) is
// this one whatever order the objects came in.
class JobLine {
 public:
  // Puts job `id` (whose key is `key`) in line at `created` (seconds), and sets its and its
  // neighbours' Job::creation and its Job::submitted in `state`.
  void File(JobId id, const std::string& key, int64_t created, ClusterState& state);
  // Takes the job out of line; nothing when it is not in it.
  // REQUIRES: `key` is the one it was filed with.
  void Unfile(JobId id, const std::string& key);

 private:
  static constexpr int64_t kOrderSlots = int64_t{1} << 24;
  std::set<std::tuple<int64_t, std::string, JobId>> order_;
  std::vector<int64_t> filed_at_;  // JobId -> its creation time in order_
  std::vector<bool> filed_;        // JobId -> whether it is in order_
};

}  // namespace gantry::cache

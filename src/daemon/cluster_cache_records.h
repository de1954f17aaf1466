// What the cluster cache (daemon/cluster_cache.h) keeps of each pod and each job, beside
// what ClusterState holds of them. Internal to the cache; its components keep their own.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "daemon/pending_reasons.h"
#include "k8s/objects.h"
#include "model/cluster.h"

namespace gantry::cache {

struct PodRecord {
  k8s::PodInfo info;             // what could be read of it
  std::string problem;           // why we cannot schedule it as written; empty when we can
  std::string job_key;           // the job whose pods it is in; empty when none
  int32_t counted_priority = 0;  // what it adds to that job's counts
  std::string counted_queue;
  int64_t counted_created = 0;
  TopologyRequest counted_topology;
  std::string waiting_for;  // the node it is bound to and that we do not know yet
  TaskId task = kNone;
  bool assumed = false;         // placed by us; the API server has not yet shown it bound
  bool adjusted = false;        // counted as more than it asks (unreadable, or too many GPUs)
  bool profiled = false;        // counted in the workload profile
  bool evicted = false;         // the API server took its eviction: its room is being released
  std::string accounting_note;  // the last event about how it is counted on its node
  int32_t bind_failures = 0;    // in a row; 0 once it is seen bound
  double held_until = 0;        // after a failed bind: not placed again before this
  // Why a component that resolves the spec of a pod to place (its volumes, its default
  // spreading) keeps it pending, and the kind of that reason; empty when none does.
  std::string resolve_problem;
  PendingKind resolve_kind = PendingKind::kNotConsidered;
};

struct JobRecord {
  std::string key;
  k8s::GroupApi api = k8s::GroupApi::kNone;
  std::string namespace_;
  std::string group;  // empty for a pod without a group
  bool ours = true;   // false: a pod of another scheduler
  std::set<std::string> pods;
  // Over its pods: how many have each priority, each queue annotation and each creation
  // time (seconds).
  std::map<int32_t, int32_t> priorities;
  std::map<std::string, int32_t> queues;
  std::map<int64_t, int32_t> created;
  // (level, required) of the pods' Kueue topology annotations.
  std::map<std::pair<std::string, bool>, int32_t> topologies;
  JobId id = kNone;
  // Whether HoldReason said to hold it when its pods were last synced.
  bool held = false;
  // A CompositePodGroup's job (api kComposite, group: the root; cluster_cache_composite.cc):
  // its tree as built at PodGroups::tree_version() `tree_version`, each child PodGroup's
  // leaf in it, and why the tree cannot be used yet ("" when it can).
  uint64_t tree_version = UINT64_MAX;
  std::vector<TaskGroup> tree;
  std::map<std::string, int32_t> leaf_of;
  std::string tree_problem;
};

}  // namespace gantry::cache

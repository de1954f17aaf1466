// Volcano Queue objects (scheduling.volcano.sh/v1beta1) as ClusterState's queues: their
// weights, guarantees, limits and tree, and the queues made for names that workloads give
// without a Queue object. A component of the cluster cache (daemon/cluster_cache.h): it
// edits only ClusterState's queues, and says what it could not read as Warning events.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/api_requests.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "model/cluster.h"

namespace gantry {

class QueueObjects {
 public:
  // A Queue object added, changed or deleted: `state`'s queue of that name is made or
  // updated (a deleted one stays, as a plain top-level queue for the jobs that still name
  // it), and the tree is linked again (see Relink).
  void OnQueue(k8s::EventType type, const nlohmann::json& object, ClusterState& state,
               std::vector<ObjectEvent>* problems);
  // The queue's id, made on first use; kNone when a queue named by a workload (not by a
  // Queue object) would go beyond kMaxQueuesFromWorkloads.
  QueueId QueueFor(const std::string& name, bool from_workload, ClusterState& state);
  // Whether QueueFor(name, /*from_workload=*/true) would be refused.
  bool Refused(const std::string& name, const ClusterState& state) const;

  // A namespace's default queue: its annotation gantry.dev/queue, for the jobs in it that
  // name none ("" removes it). Returns whether it changed.
  bool SetNamespaceDefault(const std::string& namespace_, const std::string& queue);
  // nullptr when the namespace has none.
  const std::string* NamespaceDefault(const std::string& namespace_) const;

 private:
  // Links every Queue object to its parent (spec.parent, by name, among Queue objects;
  // "root" with no Queue of that name is the top level, as Volcano's implicit root), and
  // reports each queue that is out of the tree (a missing parent, a cycle, a guarantee
  // that does not fit its parent's) with a Warning. Their jobs wait with that reason.
  void Relink(ClusterState& state, std::vector<ObjectEvent>* problems);

  std::unordered_map<std::string, k8s::QueueInfo> queues_;  // by name, as read
  size_t from_workloads_ = 0;  // queues made for a name no Queue object had
  // By Queue object name: the tree problem last reported for it, so that each is
  // reported once (see Relink).
  std::unordered_map<std::string, std::string> problems_said_;
  std::unordered_map<std::string, std::string> namespace_defaults_;  // namespace -> queue
};

}  // namespace gantry

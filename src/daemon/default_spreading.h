// kube-scheduler's default topology spreading in the daemon: a pending pod without topology
// spread constraints of its own is spread by the selector that helper.DefaultSelector builds
// (the selectors of the Services in its namespace that select it, with its controller's when
// that is a ReplicationController, ReplicaSet or StatefulSet), when the engine's
// podtopologyspread plugin has default constraints (Enable).
//
// It keeps the Services and controllers from the watch, and the pods a change of them
// reaches: a Service re-syncs only the pending pods of its namespace whose selector it
// changes, a controller only the pods it controls. A Service or controller that cannot be
// read keeps the pods it may spread pending, saying why. It never calls back into the cache:
// each change answers with a Resync, which the cache applies.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/resync.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "k8s/workloads.h"
#include "model/cluster.h"

namespace gantry {

class DefaultSpreading {
 public:
  // Whether pending pods get TaskSpec::default_spread_selector (the engine's
  // podtopologyspread plugin has default constraints: PodTopologySpreadHasDefaults).
  // REQUIRES: before the first event.
  void Enable(bool enabled) { enabled_ = enabled; }

  Resync OnService(k8s::EventType type, const nlohmann::json& object);
  Resync OnOwner(k8s::SpreadOwnerKind kind, k8s::EventType type, const nlohmann::json& object);

  // Follows the pod while a Service's or a controller's change may alter its selector: a pod
  // of ours (`ours`), not bound, without constraints of its own. `pod` as it is now.
  void TrackPod(const std::string& key, const k8s::PodInfo& pod, bool ours);
  void ForgetPod(const std::string& key);
  // Sets spec->default_spread_selector for a pod to place, as kube-scheduler's
  // DefaultSelector builds it, and remembers which Services selected it; returns why an
  // object it needs cannot be read (the pod then waits), or "".
  std::string Resolve(const std::string& key, const k8s::PodInfo& pod, TaskSpec* spec);
  // The pod is not placed as it is now (Resolve is not asked): no Service selects it for us.
  void Unresolve(const std::string& key);

  // Pod records visited by walks over a namespace's pods, since the start: a measure of
  // work that tests hold to linear bounds.
  int64_t pods_visited() const { return pods_visited_; }
  struct Sizes {
    size_t services = 0;       // read or not
    size_t spread_owners = 0;  // ReplicationControllers, ReplicaSets, StatefulSets, read or not
    size_t spread_index = 0;   // entries of the indexes of pods by namespace and owner
    size_t pods = 0;           // pods followed
  };
  Sizes sizes() const;

 private:
  // A pod followed: what a change is compared against.
  struct PodRecord {
    std::string namespace_;
    std::string owner_key;  // its key in pods_by_owner_; "": none
    Labels labels;
    // The Services that selected it when its selector was last made (sorted), or none when
    // it was not made.
    std::vector<std::string> services;
  };

  bool enabled_ = false;
  // Services by namespace then name (their selectors, or why they could not be read), the
  // controllers by "kind|namespace/name", and the pods their changes re-sync.
  std::unordered_map<std::string, std::map<std::string, Labels>> services_;
  std::unordered_map<std::string, std::map<std::string, std::string>> bad_services_;
  std::unordered_map<std::string, k8s::SpreadOwnerInfo> owners_;
  std::unordered_map<std::string, std::string> bad_owners_;
  std::unordered_map<std::string, PodRecord> pods_;
  std::unordered_map<std::string, std::set<std::string>> pods_by_namespace_;
  std::unordered_map<std::string, std::set<std::string>> pods_by_owner_;
  int64_t pods_visited_ = 0;
};

}  // namespace gantry

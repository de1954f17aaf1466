// The daemon's view of the cluster: Kubernetes objects from the informers, applied one
// event at a time to a ClusterState that the engine schedules against (never rebuilt
// from scratch). Single-threaded: the scheduler thread owns it.
//
// What becomes what:
// - a Node is a node (GPUs from nvidia.com/gpu, model and memory from GPU feature
//   discovery's labels);
// - a pod bound to a node (by anyone) is a running task there: every bound pod counts;
// - a pending pod of ours (spec.schedulerName) is a pending task of its job, unless the
//   job is held: its PodGroup is missing or invalid;
// - a job is a PodGroup (Volcano or scheduler-plugins) or a pod without one; its queue
//   is the group's spec.queue, else the pod's gantry.dev/queue annotation, else
//   "default"; a Volcano Queue object gives a queue its weight and limits;
// - pods of other schedulers live in one queue of their own, so that their resources
//   count without taking part in fair sharing.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/decisions.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "model/cluster.h"

namespace gantry {

inline constexpr const char* kOtherSchedulersQueue = "(other schedulers)";

// A bind to send: the pod, where, and the GPU devices to write on it first (shared GPUs).
struct BindRequest {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string node;
  std::vector<int32_t> gpus;
  bool write_devices = false;
  std::string job;  // its job's key, for messages
};

// Something to tell users: a Kubernetes Event on an object.
struct ObjectEvent {
  std::string api_version;  // of the object: "v1", "scheduling.volcano.sh/v1beta1", ...
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string type;  // Normal or Warning
  std::string reason;
  std::string message;
};

// The PodScheduled=False condition for a pending pod.
struct PodCondition {
  std::string namespace_;
  std::string name;
  std::string message;
};

// A PodGroup's status.
struct GroupStatus {
  k8s::GroupApi api = k8s::GroupApi::kVolcano;
  std::string namespace_;
  std::string name;
  std::string phase;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::string unschedulable_message;  // empty: schedulable
};

class ClusterCache {
 public:
  explicit ClusterCache(std::string scheduler_name);

  ClusterState& state() { return state_; }
  const ClusterState& state() const { return state_; }

  void OnPod(k8s::EventType type, const nlohmann::json& object);
  void OnNode(k8s::EventType type, const nlohmann::json& object);
  void OnPodGroup(k8s::GroupApi api, k8s::EventType type, const nlohmann::json& object);
  void OnQueue(k8s::EventType type, const nlohmann::json& object);
  void OnPriorityClass(k8s::EventType type, const nlohmann::json& object);

  // Records a session's binds as assumed (they count at once) and returns them to send.
  std::vector<BindRequest> Assume(const Decisions& decisions);
  // A bind that did not happen: the pod is pending again, unless the API server has
  // told us meanwhile that it is bound.
  void BindFailed(const std::string& namespace_, const std::string& name, const std::string& uid);

  // What to write after a session: PodScheduled conditions for pending pods whose
  // message changed, and PodGroup statuses that changed. Reasons come from the session's
  // pending jobs, or from why a job is held.
  void CollectStatus(const Decisions& decisions, std::vector<PodCondition>* conditions,
                     std::vector<GroupStatus>* groups, std::vector<ObjectEvent>* events);
  // Events about objects that could not be read (a malformed PodGroup, a pod asking for
  // something impossible), collected since the last call.
  std::vector<ObjectEvent> TakeProblems();

  // Counts for metrics.
  int64_t pending_pods() const;  // ours, not yet placed
  int64_t assumed_pods() const { return assumed_; }
  std::map<std::string, int64_t> PendingPodsByQueue() const;

 private:
  struct PodRecord {
    k8s::PodInfo info;
    bool decoded = false;  // false: the pod could not be read (see error)
    std::string error;
    std::string job_key;
    TaskId task = kNone;
    bool assumed = false;         // placed by us; the API server has not yet shown it bound
    std::string written_message;  // PodScheduled message we last wrote
  };
  struct JobRecord {
    std::string key;
    k8s::GroupApi api = k8s::GroupApi::kNone;
    std::string namespace_;
    std::string group;  // empty for a pod without a group
    bool ours = true;   // false: a pod of another scheduler
    std::set<std::string> pods;
    JobId id = kNone;
    std::string written_phase;
    std::string written_message;
    int32_t written_running = -1;
  };

  bool Ours(const k8s::PodInfo& pod) const { return pod.scheduler_name == scheduler_name_; }
  std::string JobKeyOf(const PodRecord& pod) const;
  JobRecord& JobFor(PodRecord& pod);
  // Why a job's pending pods are not scheduled; empty when they are.
  std::string HoldReason(const JobRecord& job) const;
  const k8s::PodGroupInfo* GroupOf(const JobRecord& job) const;
  QueueId QueueFor(const std::string& name);
  // Makes the job exist in ClusterState with its current gang size, priority and queue.
  JobId EnsureStateJob(JobRecord& job);
  void RefreshJob(JobRecord& job);
  // Makes ClusterState agree with what the pod record says.
  void SyncPod(const std::string& key);
  void DropTask(PodRecord& pod);
  SpecId SpecFor(const TaskSpec& spec);
  std::vector<int32_t> DevicesFor(const PodRecord& pod, NodeId node) const;
  void Problem(ObjectEvent event);
  void ForgetJobIfEmpty(const std::string& key);

  std::string scheduler_name_;
  ClusterState state_;
  std::unordered_map<std::string, PodRecord> pods_;
  std::unordered_map<std::string, JobRecord> jobs_;
  std::vector<std::string> pod_of_task_;  // TaskId -> pod key
  std::vector<std::string> job_of_id_;    // JobId -> job key
  // PodGroups by "api|namespace/name": read, or why they could not be.
  std::unordered_map<std::string, k8s::PodGroupInfo> groups_;
  std::unordered_map<std::string, std::string> bad_groups_;
  std::unordered_map<std::string, k8s::QueueInfo> queues_;
  std::unordered_map<std::string, int32_t> priority_classes_;
  std::unordered_map<std::string, std::set<std::string>> waiting_for_node_;
  std::map<std::string, SpecId> spec_ids_;
  std::vector<ObjectEvent> problems_;
  int64_t assumed_ = 0;
  // Jobs whose pods or group changed since the last CollectStatus: with the session's
  // pending jobs, the only ones whose status can have changed.
  std::set<std::string> status_dirty_;
};

}  // namespace gantry

// What users are told after a session, beside the cache: the PodScheduled=False condition
// and FailedScheduling event of a pending pod whose reason changed (SchedulingGated for a
// gated one), and the status of a PodGroup (phase, counts, the Unschedulable condition and
// event) when it changed. It remembers what it last wrote, so that each is written once, and
// which jobs changed since the last session (the only ones, with the session's pending jobs,
// whose status can have changed). The cache walks those jobs' pods and hands it values.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/api_requests.h"
#include "k8s/objects.h"
#include "k8s/workloads.h"

namespace gantry {

// Where a session's status goes (ClusterCache::CollectStatus's outputs).
struct StatusWrites {
  std::vector<PodCondition>* conditions;
  std::vector<GroupStatus>* groups;
  std::vector<ObjectEvent>* events;
};

class StatusReporter {
 public:
  // The job's pods or group changed: its status is collected after the next session.
  void MarkChanged(const std::string& job_key) { changed_.insert(job_key); }
  // The jobs changed since the last call.
  std::set<std::string> TakeChanged() { return std::exchange(changed_, {}); }
  void ForgetJob(const std::string& job_key);
  void ForgetPod(const std::string& key);

  // A pod of ours waiting to be placed, and why (`message`, not empty; `reason`: the
  // condition's, one of api_requests.h's): a condition and an event (none for a gated pod)
  // when the two are new (neither what we last wrote nor what the pod says).
  void ReportPod(const std::string& key, const k8s::PodInfo& pod, const std::string& message,
                 const char* reason, const StatusWrites& out);
  // The status of a job's PodGroup `group`: `status` names the group and has its pods'
  // counts; its phase and condition follow from them and the job's reason to wait ("" when
  // it has none). Written, with an Unschedulable event on a new reason, when it changed.
  // A native group's status is kube-scheduler's PodGroupInitiallyScheduled condition:
  // False while it waits with a reason (SchedulerError when `status.scheduler_error`),
  // True once min_member of its pods are placed, and never written again after that.
  // The same for a native PodGroup that is a child in the tree of the job `job_key`.
  void ReportChildGroup(const std::string& job_key, GroupStatus status,
                        const k8s::PodGroupInfo& group, const std::string& reason,
                        const StatusWrites& out);
  void ReportGroup(const std::string& job_key, GroupStatus status, const k8s::PodGroupInfo& group,
                   const std::string& reason, const StatusWrites& out);

  size_t changed() const { return changed_.size(); }
  size_t remembered() const { return pods_.size() + groups_.size(); }

 private:
  void ReportNativeGroup(const std::string& job_key, GroupStatus status,
                         const k8s::PodGroupInfo& group, const std::string& reason,
                         const StatusWrites& out);

  struct Written {
    std::string phase;
    std::string message;
    int32_t running = -1;
  };
  std::set<std::string> changed_;  // job keys, of live jobs only
  // pod key -> the condition's reason and message last written
  std::unordered_map<std::string, std::pair<std::string, std::string>> pods_;
  std::unordered_map<std::string, Written> groups_;  // job key -> status last written
  // A tree's children, by its job key: their keys in groups_ ("<job key>|<child name>").
  std::unordered_map<std::string, std::set<std::string>> children_;
};

}  // namespace gantry

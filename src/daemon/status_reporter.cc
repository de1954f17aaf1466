#include "daemon/status_reporter.h"

namespace gantry {

void StatusReporter::ForgetJob(const std::string& job_key) {
  changed_.erase(job_key);
  groups_.erase(job_key);
  if (auto it = children_.find(job_key); it != children_.end()) {
    for (const std::string& child : it->second) groups_.erase(child);
    children_.erase(it);
  }
}

void StatusReporter::ReportChildGroup(const std::string& job_key, GroupStatus status,
                                      const k8s::PodGroupInfo& group, const std::string& reason,
                                      const StatusWrites& out) {
  std::string child_key = job_key + "|" + status.name;
  children_[job_key].insert(child_key);
  ReportNativeGroup(child_key, std::move(status), group, reason, out);
}

void StatusReporter::ForgetPod(const std::string& key) {
  pods_.erase(key);
}

void StatusReporter::ReportPod(const std::string& key, const k8s::PodInfo& pod,
                               const std::string& message, const char* reason,
                               const StatusWrites& out) {
  if (message == pod.unschedulable_message && reason == pod.unschedulable_reason) return;
  auto [written, inserted] = pods_.try_emplace(key);
  if (!inserted && written->second.first == reason && written->second.second == message) return;
  written->second = {reason, message};
  const k8s::ObjectMeta& meta = pod.meta;
  out.conditions->push_back({meta.namespace_, meta.name, message, reason});
  // A gated pod says so, as kube-scheduler does, and nothing else (no event).
  if (std::string_view(reason) == kSchedulingGatedReason) return;
  out.events->push_back(
      {"v1", "Pod", meta.namespace_, meta.name, meta.uid, "Warning", "FailedScheduling", message});
}

void StatusReporter::ReportGroup(const std::string& job_key, GroupStatus status,
                                 const k8s::PodGroupInfo& group, const std::string& reason,
                                 const StatusWrites& out) {
  if (status.api == k8s::GroupApi::kNative || status.api == k8s::GroupApi::kComposite) {
    return ReportNativeGroup(job_key, std::move(status), group, reason, out);
  }
  const bool volcano = status.api != k8s::GroupApi::kCoscheduling;
  if (status.succeeded >= group.min_member) {
    status.phase = volcano ? "Completed" : "Finished";
  } else if (status.running >= group.min_member) {
    status.phase = "Running";
  } else if (status.running > 0 && !volcano) {
    status.phase = "Scheduling";
  } else {
    status.phase = volcano && reason.empty() ? "Inqueue" : "Pending";
  }
  status.unschedulable_message = status.running >= group.min_member ? "" : reason;
  Written& written = groups_[job_key];
  if (status.phase == written.phase && status.running == written.running &&
      status.unschedulable_message == written.message) {
    return;
  }
  if (!status.unschedulable_message.empty() && status.unschedulable_message != written.message) {
    out.events->push_back({GroupApiVersion(status.api), "PodGroup", status.namespace_, status.name,
                           group.meta.uid, "Warning", "Unschedulable",
                           status.unschedulable_message});
  }
  written.phase = status.phase;
  written.running = status.running;
  written.message = status.unschedulable_message;
  out.groups->push_back(std::move(status));
}

void StatusReporter::ReportNativeGroup(const std::string& job_key, GroupStatus status,
                                       const k8s::PodGroupInfo& group, const std::string& reason,
                                       const StatusWrites& out) {
  if (group.initially_scheduled) return;  // terminal
  // As kube-scheduler says it once the group's cycle placed it: placed (assumed or bound,
  // however soon they finish), not running.
  status.scheduled = status.api == k8s::GroupApi::kComposite ? status.tree_ready
                                                             : status.placed >= group.min_member;
  if (!status.scheduled && reason.empty()) return;  // not tried yet: nothing to say
  status.phase = status.scheduled ? "True" : "False";
  status.unschedulable_message = status.scheduled ? "" : reason;
  status.generation = group.generation;
  Written& written = groups_[job_key];
  if (status.phase == written.phase && status.unschedulable_message == written.message) return;
  status.transition = status.phase != written.phase;
  if (!status.scheduled) {
    out.events->push_back({GroupApiVersion(status.api), GroupKind(status.api), status.namespace_,
                           status.name, group.meta.uid, "Warning", "Unschedulable",
                           status.unschedulable_message});
  }
  written.phase = status.phase;
  written.message = status.unschedulable_message;
  out.groups->push_back(std::move(status));
}

}  // namespace gantry

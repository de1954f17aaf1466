// What the daemon's cluster cache reports: the status to write after a session (pod
// conditions, PodGroup statuses, events) and the counts for metrics. Applying the world's
// changes is cluster_cache.cc.
#include "daemon/cluster_cache.h"

#include <unordered_map>

namespace gantry {
namespace {

constexpr size_t kRefusedNodesNamed = 3;

}  // namespace

std::string ClusterCache::RefusedNodesNote() const {
  if (refused_nodes_.empty()) return "";
  std::string out =
      "; gantry refused " + std::to_string(refused_nodes_.size()) + " node(s) it cannot read: ";
  size_t named = 0;
  for (const auto& [name, why] : refused_nodes_) {
    if (named == kRefusedNodesNamed) {
      out += "; and " + std::to_string(refused_nodes_.size() - named) + " more";
      break;
    }
    out += (named++ ? "; " : "") + Bounded(name, 100) + " (" + why + ")";
  }
  return out;
}

void ClusterCache::CollectStatus(const Decisions& decisions, std::vector<PodCondition>* conditions,
                                 std::vector<GroupStatus>* groups,
                                 std::vector<ObjectEvent>* events) {
  std::unordered_map<JobId, const std::string*> reasons;
  for (const PendingJob& p : decisions.pending) {
    reasons[p.job] = &p.reason;
    if (p.job < job_of_id_.size() && !job_of_id_[p.job].empty()) {
      status_dirty_.insert(job_of_id_[p.job]);
    }
  }
  const std::string refused_note = RefusedNodesNote();
  const std::set<std::string> keys = std::exchange(status_dirty_, {});
  for (const std::string& job_key : keys) {
    auto found = jobs_.find(job_key);
    if (found == jobs_.end()) continue;
    JobRecord& job = found->second;
    if (!job.ours) continue;
    std::string reason = HoldReason(job);
    if (reason.empty() && job.id != kNone) {
      auto r = reasons.find(job.id);
      if (r != reasons.end()) reason = Bounded(*r->second, kMaxMessage) + refused_note;
    }
    int32_t running = 0, succeeded = 0, failed = 0;
    for (const std::string& key : job.pods) {
      pod_records_visited_++;
      auto it = pods_.find(key);
      if (it == pods_.end()) continue;
      PodRecord& pod = it->second;
      const k8s::PodInfo& info = pod.info;
      if (info.phase == "Succeeded") succeeded++;
      if (info.phase == "Failed") failed++;
      if (!info.node_name.empty() && !info.finished()) running++;
      bool waiting =
          info.node_name.empty() && !pod.assumed && !info.meta.deleting && !info.finished();
      // A gated pod says so, as kube-scheduler does, and nothing else (no event). A pod
      // that cannot be scheduled as written says why, whatever its job's state.
      const bool gated = !info.scheduling_gates.empty();
      const std::string& message = gated                  ? std::string(kSchedulingGatedMessage)
                                   : !pod.problem.empty() ? pod.problem
                                   : !pod.volume_problem.empty() ? pod.volume_problem
                                   : !pod.spread_problem.empty() ? pod.spread_problem
                                                                 : reason;
      if (!waiting || message.empty()) continue;
      if (message == pod.written_message || message == info.unschedulable_message) continue;
      pod.written_message = message;
      if (gated) {
        conditions->push_back({info.meta.namespace_, info.meta.name, message, "SchedulingGated"});
        continue;
      }
      conditions->push_back({info.meta.namespace_, info.meta.name, message});
      events->push_back({"v1", "Pod", info.meta.namespace_, info.meta.name, info.meta.uid,
                         "Warning", "FailedScheduling", message});
    }
    const k8s::PodGroupInfo* group = GroupOf(job);
    if (!group) continue;
    GroupStatus s;
    s.api = job.api;
    s.namespace_ = job.namespace_;
    s.name = job.group;
    s.running = running;
    s.succeeded = succeeded;
    s.failed = failed;
    const bool volcano = job.api != k8s::GroupApi::kCoscheduling;
    if (succeeded >= group->min_member) {
      s.phase = volcano ? "Completed" : "Finished";
    } else if (running >= group->min_member) {
      s.phase = "Running";
    } else if (running > 0 && !volcano) {
      s.phase = "Scheduling";
    } else {
      s.phase = volcano && reason.empty() ? "Inqueue" : "Pending";
    }
    s.unschedulable_message = running >= group->min_member ? "" : reason;
    if (s.phase == job.written_phase && s.running == job.written_running &&
        s.unschedulable_message == job.written_message) {
      continue;
    }
    if (!s.unschedulable_message.empty() && s.unschedulable_message != job.written_message) {
      events->push_back({ApiVersionOf(job.api), "PodGroup", job.namespace_, job.group,
                         group->meta.uid, "Warning", "Unschedulable", s.unschedulable_message});
    }
    job.written_phase = s.phase;
    job.written_running = s.running;
    job.written_message = s.unschedulable_message;
    groups->push_back(std::move(s));
  }
}

// ---------------------------------------------------------------------------------------
// Counts

int64_t ClusterCache::pending_pods() const {
  int64_t n = 0;
  for (JobId id : state_.jobs_with_pending()) n += state_.job(id).pending;
  return n;
}

std::map<std::string, int64_t> ClusterCache::PendingPodsByQueue() const {
  std::map<std::string, int64_t> out;
  for (const Queue& q : state_.queues()) {
    if (q.name != kOtherSchedulersQueue) out[q.name] = 0;
  }
  for (JobId id : state_.jobs_with_pending()) {
    const Job& job = state_.job(id);
    out[state_.queue(job.queue).name] += job.pending;
  }
  return out;
}

ClusterCache::NodeCounts ClusterCache::CountNodes() const {
  NodeCounts counts;
  for (const Node& n : state_.nodes()) {
    if (n.removed) continue;
    counts.nodes++;
    counts.gpus_allocated += n.used.Get(kGpu);
  }
  counts.gpus_capacity = state_.capacity().Get(kGpu);
  return counts;
}

ClusterCache::Sizes ClusterCache::sizes() const {
  Sizes s;
  s.pods = pods_.size();
  s.jobs = jobs_.size();
  s.groups = groups_.size() + bad_groups_.size();
  for (const auto& [node, keys] : waiting_for_node_) s.waiting_for_node += keys.size();
  s.specs = spec_ids_.size();
  s.status_dirty = status_dirty_.size();
  s.refused_nodes = refused_nodes_.size();
  s.claims = claims_.size() + bad_claims_.size();
  s.volumes = volumes_.size() + bad_volumes_.size();
  s.storage_classes = storage_classes_.size() + bad_storage_classes_.size();
  for (const auto* index :
       {&pods_by_claim_, &claims_by_volume_, &claims_by_class_, &volumes_by_class_}) {
    for (const auto& [key, keys] : *index) s.claim_index += keys.size();
  }
  s.volume_waits = volume_waits_.size() + volume_failures_.size() + volume_writes_.size();
  s.volume_overlays = assumed_claim_refs_.size() + assumed_selected_nodes_.size();
  for (const auto& [ns, names] : services_) s.services += names.size();
  for (const auto& [ns, names] : bad_services_) s.services += names.size();
  s.spread_owners = spread_owners_.size() + bad_spread_owners_.size();
  for (const auto* index : {&spread_pods_by_namespace_, &spread_pods_by_owner_}) {
    for (const auto& [key, keys] : *index) s.spread_index += keys.size();
  }
  return s;
}

}  // namespace gantry

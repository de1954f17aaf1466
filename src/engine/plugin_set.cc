#include "engine/plugin_set.h"

#include <algorithm>

#include "model/cluster.h"

namespace gantry {

PluginSet::PluginSet(const Policy& policy, const ClusterState& cluster) : cluster_(cluster) {
  for (const auto& prototype : policy.plugin_prototypes()) {
    plugins_.push_back(prototype->NewSessionCopy());
  }
  Collect(/*only_active=*/false);
}

void PluginSet::Collect(bool only_active) {
  queue_orders_.clear();
  job_orders_.clear();
  task_orders_.clear();
  admissions_.clear();
  predicates_.clear();
  scorer_weights_.clear();
  device_choosers_.clear();
  scorers_.clear();
  readiness_.clear();
  queue_limits_.clear();
  victim_filters_.clear();
  listeners_.clear();
  packing_ = GpuPacking::kTight;
  for (const auto& plugin : plugins_) {
    Plugin* p = plugin.get();
    if (only_active && !p->ActiveInSession()) continue;
    if (auto* x = dynamic_cast<const QueueOrder*>(p)) queue_orders_.push_back(x);
    if (auto* x = dynamic_cast<const JobOrder*>(p)) job_orders_.push_back(x);
    if (auto* x = dynamic_cast<const TaskOrder*>(p)) task_orders_.push_back(x);
    if (auto* x = dynamic_cast<JobAdmission*>(p)) admissions_.push_back(x);
    if (auto* x = dynamic_cast<const NodePredicate*>(p)) predicates_.push_back(x);
    if (auto* x = dynamic_cast<const NodeScorer*>(p)) {
      scorers_.push_back(x);
      scorer_weights_.push_back(x->weight());
    }
    if (auto* x = dynamic_cast<const DeviceChooser*>(p)) {
      device_choosers_.push_back({x, dynamic_cast<const NodeScorer*>(p)});
    }
    if (auto* x = dynamic_cast<const JobReadiness*>(p)) readiness_.push_back(x);
    if (auto* x = dynamic_cast<const QueueLimits*>(p)) queue_limits_.push_back(x);
    if (auto* x = dynamic_cast<const VictimFilter*>(p)) victim_filters_.push_back(x);
    if (auto* x = dynamic_cast<PlacementListener*>(p)) {
      if (!only_active || x->ListensInSession()) listeners_.push_back(x);
    }
  }
  std::stable_partition(device_choosers_.begin(), device_choosers_.end(),
                        [](const Chooser& c) { return c.chooser->constrains_devices(); });
  for (const NodeScorer* scorer : scorers_) {
    if (scorer->packing() != GpuPacking::kNone) {
      packing_ = scorer->packing();
      break;
    }
  }
}

void PluginSet::Open(Session& s) {
  for (auto& plugin : plugins_) plugin->OnSessionOpen(s);
  bool all_active = true;
  for (const auto& plugin : plugins_) {
    all_active = all_active && plugin->ActiveInSession();
    if (const auto* listener = dynamic_cast<const PlacementListener*>(plugin.get())) {
      all_active = all_active && listener->ListensInSession();
    }
  }
  if (!all_active) Collect(/*only_active=*/true);
}

void PluginSet::Close(const Session& s, Decisions* out) const {
  for (const auto& plugin : plugins_) plugin->OnSessionClose(s, out);
}

int PluginSet::CompareQueues(const Session& s, QueueId a, QueueId b) const {
  for (const QueueOrder* order : queue_orders_) {
    if (int r = order->CompareQueues(s, a, b)) return r;
  }
  return a < b ? -1 : (a > b ? 1 : 0);
}

int PluginSet::CompareJobs(const Session& s, JobId a, JobId b) const {
  for (const JobOrder* order : job_orders_) {
    if (int r = order->CompareJobs(s, a, b)) return r;
  }
  const Job& ja = cluster_.job(a);
  const Job& jb = cluster_.job(b);
  if (ja.creation != jb.creation) return ja.creation < jb.creation ? -1 : 1;
  return a < b ? -1 : (a > b ? 1 : 0);
}

int PluginSet::CompareTasks(const Session& s, TaskId a, TaskId b) const {
  for (const TaskOrder* order : task_orders_) {
    if (int r = order->CompareTasks(s, a, b)) return r;
  }
  return a < b ? -1 : (a > b ? 1 : 0);
}

bool PluginSet::Admit(Session& s, JobId job, std::string* reason, PendingHold* hold) const {
  for (JobAdmission* admission : admissions_) {
    if (!admission->Admit(s, job, reason)) {
      *hold = admission->RefusalHold();
      return false;
    }
  }
  return true;
}

bool PluginSet::JobReady(const Session& s, JobId job) const {
  for (const JobReadiness* r : readiness_) {
    if (!r->JobReady(s, job)) return false;
  }
  return true;
}

bool PluginSet::JobPipelined(const Session& s, JobId job) const {
  for (const JobReadiness* r : readiness_) {
    if (!r->JobPipelined(s, job)) return false;
  }
  return true;
}

bool PluginSet::QueueOverused(const Session& s, QueueId queue, std::string* reason) const {
  for (const QueueLimits* limits : queue_limits_) {
    if (limits->Overused(s, queue, reason)) return true;
  }
  return false;
}

bool PluginSet::QueueHoldsOwnShare(const Session& s, QueueId queue, std::string* reason) const {
  for (const QueueLimits* limits : queue_limits_) {
    if (limits->HoldsOwnShare(s, queue, reason)) return true;
  }
  return false;
}

bool PluginSet::QueueAllocatable(const Session& s, QueueId queue, const ResourceVector& request,
                                 std::string* reason) const {
  for (const QueueLimits* limits : queue_limits_) {
    if (!limits->Allocatable(s, queue, request, reason)) return false;
  }
  return true;
}

std::vector<TaskId> PluginSet::Victims(const Session& s, EvictionCause cause, TaskId preemptor,
                                       std::vector<TaskId> candidates) const {
  // Defragment's victims granted it themselves (they are movable, which the action checks).
  const bool granted = cause == EvictionCause::kDefragment ||
                       std::any_of(victim_filters_.begin(), victim_filters_.end(),
                                   [&](const VictimFilter* f) { return f->Grants(cause); });
  if (!granted) return {};
  for (const VictimFilter* filter : victim_filters_) {
    if (candidates.empty()) break;
    filter->FilterVictims(s, cause, preemptor, &candidates);
  }
  return candidates;
}

void PluginSet::Notify(const Session& s, StateChange change, TaskId task, NodeId node,
                       const GpuChoice& gpus, int sign) const {
  for (PlacementListener* listener : listeners_) {
    listener->OnStateChange(s, change, task, node, gpus, sign);
  }
}

}  // namespace gantry

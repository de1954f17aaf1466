// The plugins of one session, by extension point: each interface asked of every plugin
// that implements it, in configured order (DESIGN.md, "The engine").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/decisions.h"
#include "engine/gpu_placement.h"
#include "engine/plugin.h"
#include "engine/policy.h"

namespace gantry {

class PluginSet {
 public:
  // Copies the policy's plugin prototypes for one session on `cluster`.
  PluginSet(const Policy& policy, const ClusterState& cluster);
  PluginSet(const PluginSet&) = delete;
  PluginSet& operator=(const PluginSet&) = delete;

  // Opens every plugin, then leaves out those not active in the session.
  void Open(Session& s);
  void Close(const Session& s, Decisions* out) const;

  // Orderings: < 0 when `a` goes first. Ties: creation order, then id.
  int CompareQueues(const Session& s, QueueId a, QueueId b) const;
  int CompareJobs(const Session& s, JobId a, JobId b) const;
  int CompareTasks(const Session& s, TaskId a, TaskId b) const;
  // False with *reason and *hold (the refusing plugin's RefusalHold) when one refuses.
  bool Admit(Session& s, JobId job, std::string* reason, PendingHold* hold) const;
  bool JobReady(const Session& s, JobId job) const;
  bool JobPipelined(const Session& s, JobId job) const;
  bool QueueOverused(const Session& s, QueueId queue, std::string* reason) const;
  bool QueueHoldsOwnShare(const Session& s, QueueId queue, std::string* reason) const;
  bool QueueAllocatable(const Session& s, QueueId queue, const ResourceVector& request,
                        std::string* reason) const;
  // The candidates every victim filter keeps, in their order.
  std::vector<TaskId> Victims(const Session& s, EvictionCause cause, TaskId preemptor,
                              std::vector<TaskId> candidates) const;
  void Notify(const Session& s, StateChange change, TaskId task, NodeId node, const GpuChoice& gpus,
              int sign) const;

  const std::vector<const NodePredicate*>& predicates() const { return predicates_; }
  const std::vector<const NodeScorer*>& scorers() const { return scorers_; }
  // Each scorer's weight, in the order of scorers(): asked once, not per candidate.
  const std::vector<int64_t>& scorer_weights() const { return scorer_weights_; }
  struct Chooser {
    const DeviceChooser* chooser;
    const NodeScorer* as_scorer;  // the same plugin's NodeScorer side, or null
  };
  const std::vector<Chooser>& device_choosers() const { return device_choosers_; }
  // The first configured scorer's packing preference that has one, else tight.
  GpuPacking packing() const { return packing_; }

 private:
  // Fills the lists by extension point from the plugins (those active in the session).
  void Collect(bool only_active);

  const ClusterState& cluster_;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::vector<const QueueOrder*> queue_orders_;
  std::vector<const JobOrder*> job_orders_;
  std::vector<const TaskOrder*> task_orders_;
  std::vector<JobAdmission*> admissions_;
  std::vector<const NodePredicate*> predicates_;
  std::vector<int64_t> scorer_weights_;
  std::vector<Chooser> device_choosers_;
  std::vector<const NodeScorer*> scorers_;
  std::vector<const JobReadiness*> readiness_;
  std::vector<const QueueLimits*> queue_limits_;
  std::vector<const VictimFilter*> victim_filters_;
  std::vector<PlacementListener*> listeners_;
  GpuPacking packing_ = GpuPacking::kTight;
};

}  // namespace gantry

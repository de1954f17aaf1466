// Plugins and their typed extension points.
//
// A plugin is a small object that implements one or more of the interfaces below. A
// Session asks every configured plugin that implements an interface, in configured order
// (see DESIGN.md, "The engine"). There are no untyped callback tables: a plugin is an
// ordering, a predicate, a scorer, ... because its class says so.
//
// A Policy (policy.h) makes each configured plugin once, parsing its arguments; each
// session works on its own copy of that prototype (NewSessionCopy), so a plugin may keep
// per-session state (the proportion plugin keeps each queue's deserved share) and no
// session sees another's.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/decisions.h"
#include "engine/filter.h"
#include "engine/gpu_placement.h"
#include "model/cluster.h"

namespace gantry {

class Session;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  // A copy for one session: the arguments as parsed, no session state (the prototype is
  // never opened). See SessionCopyable.
  virtual std::unique_ptr<Plugin> NewSessionCopy() const = 0;
  // Called once when the session opens, after its working state is built and before any
  // action runs. Plugins compute what they need here (shares, deserved amounts).
  virtual void OnSessionOpen(Session& /*session*/) {}
  // Whether the plugin has anything to do in this session, asked once right after
  // OnSessionOpen. One that has not is left out of the session's extension points, so
  // that it costs nothing there (InterPodAffinity in a session where no pod has a term).
  virtual bool ActiveInSession() const { return true; }
  // Called once after the actions ran, to add what the plugin knows to the decisions
  // (the proportion plugin reports each queue's deserved share). The pending jobs are in
  // *out by then, so that a plugin may add to why they wait.
  virtual void OnSessionClose(const Session& /*session*/, Decisions* /*out*/) const {}
};

// Implements NewSessionCopy by copying the plugin: `class X : public SessionCopyable<X>`,
// or `SessionCopyable<X, Base>` for a plugin that extends another.
template <typename Derived, typename Base = Plugin>
class SessionCopyable : public Base {
 public:
  using Base::Base;
  std::unique_ptr<Plugin> NewSessionCopy() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

// Orderings return < 0 when `a` goes first, > 0 when `b` does, and 0 for no opinion;
// the session asks the next plugin on 0 and finally breaks ties by creation order and id.
class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  virtual int CompareQueues(const Session& s, QueueId a, QueueId b) const = 0;
};

class JobOrder {
 public:
  virtual ~JobOrder() = default;
  virtual int CompareJobs(const Session& s, JobId a, JobId b) const = 0;
};

class TaskOrder {
 public:
  virtual ~TaskOrder() = default;
  virtual int CompareTasks(const Session& s, TaskId a, TaskId b) const = 0;
};

// Admission (the enqueue action): may this job start to be placed at all?
class JobAdmission {
 public:
  virtual ~JobAdmission() = default;
  // False with *reason when the job must wait. A job admitted by every plugin is inqueue.
  virtual bool Admit(Session& s, JobId job, std::string* reason) = 0;
  // What holds a job this plugin does not admit: never a lack of room (see PendingHold).
  virtual PendingHold RefusalHold() const = 0;
};

// May this task run on this node?
class NodePredicate {
 public:
  virtual ~NodePredicate() = default;
  // Only the node's static properties (labels, taints, allocatable, GPU models): the
  // session caches the answer per (task spec, node shape class). Classes tell nodes apart
  // only by the label keys some spec reads through its node selector and affinity
  // (LabelKeysOf in model/task_spec.h): a predicate that reads any other label must have
  // its keys counted there too, or nodes it tells apart would share a verdict.
  virtual FilterResult FilterStatic(const TaskSpec& spec, const Node& node) const = 0;
  // The node's current free resources in the session.
  virtual FilterResult FilterDynamic(const Session& s, const TaskSpec& spec, NodeId node) const = 0;
  // False when FilterDynamic passes every node for tasks of this spec all session long (a
  // rule the spec does not use: host ports for a pod that asks for none, pod affinity for
  // a spec that no term bears on): the search then does not ask it for them. Asked once
  // per spec and session, after OnSessionOpen.
  virtual bool FiltersDynamically(const Session& /*s*/, const TaskSpec& /*spec*/) const {
    return true;
  }
  // Whether placing other tasks can make a node pass FilterDynamic for `spec` that did not
  // (beyond TaskSpec::placements_can_unblock, which the spec alone says): the default
  // spread constraints of podtopologyspread, when they are DoNotSchedule. Such a spec's
  // "fits nowhere" is not remembered in the session. Asked once per spec and session.
  virtual bool PlacementsCanUnblock(const TaskSpec& /*spec*/) const { return false; }
};

inline constexpr int64_t kMaxNodeScore = 1'000'000;

// Where is this task best placed? Scores are in [0, kMaxNodeScore], higher is better;
// the session adds them up, each times its configured weight.
class NodeScorer {
 public:
  virtual ~NodeScorer() = default;
  virtual int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId node,
                            const GpuChoice& gpus) const = 0;
  // The order of candidate nodes (and of GPU devices on a node) this scorer favours, so
  // that the session can visit the likely best nodes first and stop early.
  virtual GpuPacking packing() const { return GpuPacking::kNone; }
  // The factor its scores are multiplied by (the plugin's `weight` argument).
  virtual int64_t weight() const { return 1; }
  // False when it scores every node alike for tasks of this spec all session long
  // (preferred node affinity for a pod with no preferred terms: kube-scheduler's PreScore
  // answers Skip): the search then neither asks it for them nor scores every candidate
  // first for its normalization. Asked once per spec and session, after OnSessionOpen.
  virtual bool Scores(const Session& /*s*/, const TaskSpec& /*spec*/) const { return true; }
  // A scorer whose scores only mean something relative to the other candidates (min-max
  // scaling) rescales the raw scores of all candidates of one task here. When any scorer
  // does, the session scores every candidate before choosing.
  virtual bool normalizes() const { return false; }
  virtual void NormalizeScores(std::span<int64_t> /*scores*/) const {}
  // A scorer that normalizes only some specs' scores (those with rules of their own) says
  // which here, so that the others' candidates are scored as they are found: asked once
  // per spec and session, and only of scorers whose normalizes() is true.
  virtual bool NormalizesFor(const TaskSpec& /*spec*/) const { return normalizes(); }
  // The normalization, told the candidates the scores are of (in the same order), for a
  // scorer whose scores depend on the whole set of candidates (kube-scheduler's
  // PodTopologySpread weighs a domain by how many domains the candidates are in).
  virtual void NormalizeCandidates(const Session& /*s*/, const TaskSpec& /*spec*/,
                                   std::span<const NodeId> /*nodes*/,
                                   std::span<int64_t> scores) const {
    NormalizeScores(scores);
  }
  // Nodes a search over every node should visit before the packing order, beside the
  // nodesToScore it scores in that order (datalocality: the nodes caching the task's
  // data, which the packing order may reach too late to score). Each is filtered and
  // scored as any other candidate; a list longer than nodesToScore is not used. Asked
  // once per spec and session, only for specs it Scores; the list must stay valid for the
  // session. nullptr: none.
  virtual const std::vector<NodeId>* VisitFirst(const Session& /*s*/,
                                                const TaskSpec& /*spec*/) const {
    return nullptr;
  }
};

// Which devices does a task get on a node? A scorer that cares chooses them: return true
// with *out filled (the devices must fit). The first configured chooser that does
// decides; else the search chooses by its packing order (see ChooseGpus). A chooser that
// is also a NodeScorer and scored its choice on the way sets *score to what its ScoreNode
// would say of that choice, so that the search does not ask again; it leaves *score
// negative otherwise.
class DeviceChooser {
 public:
  virtual ~DeviceChooser() = default;
  virtual bool ChooseDevices(const Session& s, const TaskSpec& spec, NodeId node, GpuChoice* out,
                             int64_t* score) const = 0;
  // True for a chooser whose choice is a rule of the node rather than a preference (numa:
  // the GPUs must be on the NUMA node the kubelet will use): such choosers are asked
  // before the others, whatever the configured order.
  virtual bool constrains_devices() const { return false; }
};

// How the working state changed (see Statement): a task took room on a node now
// (allocated), took room that is being released (pipelined), or started to give its room
// back (evicted: its node's room comes free once it has terminated).
enum class StateChange : uint8_t { kAllocate, kPipeline, kEvict };

// Told of every change the session makes (sign +1) or takes back (-1), for plugins that
// keep per-node state of their own.
class PlacementListener {
 public:
  virtual ~PlacementListener() = default;
  virtual void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                             const GpuChoice& gpus, int sign) = 0;
  // Whether it needs to be told in this session, asked once right after OnSessionOpen (the
  // predicates plugin keeps claims only when some spec has claims). One that does not is
  // not told, and costs the session's changes nothing.
  virtual bool ListensInSession() const { return true; }
};

// Gang semantics.
class JobReadiness {
 public:
  virtual ~JobReadiness() = default;
  // True when enough of the job is placed (in the session) to commit its statement.
  virtual bool JobReady(const Session& s, JobId job) const = 0;
  // True when enough of the job is placed counting its pipelined tasks (those waiting for
  // room being released): what the preempt and reclaim actions commit on.
  virtual bool JobPipelined(const Session& s, JobId job) const { return JobReady(s, job); }
};

// Queue limits: shares (soft, per session) and capabilities (hard).
class QueueLimits {
 public:
  virtual ~QueueLimits() = default;
  // True with *reason when the queue has what it deserves and should wait for others. A
  // null `reason` asks for the answer alone (the words cost more than the check).
  virtual bool Overused(const Session& s, QueueId queue, std::string* reason) const = 0;
  // The same for the queue alone, its ancestors not counted: a queue that has not its own
  // share may still reclaim from its siblings when their parent has its share.
  virtual bool HoldsOwnShare(const Session& s, QueueId queue, std::string* reason) const {
    return Overused(s, queue, reason);
  }
  // False with *reason when giving `request` to the queue would break a hard limit.
  virtual bool Allocatable(const Session& s, QueueId queue, const ResourceVector& request,
                           std::string* reason) const = 0;
};

// Why a running task would be evicted: EvictionCause, in decisions.h.

// Which running tasks may be evicted for a preemptor. Every plugin that implements it has
// its say (priority, gang, proportion, ...): the session passes the candidates through
// each in configured order, and a task is a victim only if every one of them keeps it.
class VictimFilter {
 public:
  virtual ~VictimFilter() = default;
  // Removes from *victims (running tasks, in the caller's order) those this plugin does
  // not let `preemptor` evict for `cause`, keeping the order of the rest.
  virtual void FilterVictims(const Session& s, EvictionCause cause, TaskId preemptor,
                             std::vector<TaskId>* victims) const = 0;
  // Whether this filter is what makes evictions for `cause` safe (priority: only lower
  // priorities for preempt; proportion: only what queues hold above their deserved share
  // for reclaim). Without a configured filter that grants a cause, nothing is evicted for
  // it: a policy that leaves out priority cannot preempt blindly. Defragment needs no
  // grant: its victims opted in (movable), and it moves only what fits elsewhere at once.
  virtual bool Grants(EvictionCause /*cause*/) const { return false; }
};

}  // namespace gantry

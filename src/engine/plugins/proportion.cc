// proportion: fair shares between queues, over the queue tree.
//
// Each queue deserves a share of its parent's deserved amount (the cluster's capacity for
// a top-level queue), water-filled by weight after guarantees and capped by capability and
// demand: see engine/queue_shares.h. Queues are ordered by hierarchical DRF (a queue below
// its guarantee first, then the lowest dominant share of the cluster divided by weight,
// then the name, among siblings at each level; a tree with memory, Queue::usage_half_life_s,
// takes the mean of what a queue holds and what it held lately); admission and allocations respect
// the capability of the queue and of each of its ancestors; a queue is overused when it or an
// ancestor has its deserved share. Jobs in inner queues, or in queues out of the tree
// (a cycle, a missing parent, a guarantee that does not fit), wait with the reason.
#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/queue_shares.h"
#include "engine/session.h"
#include "model/int128.h"
#include "model/queue_tree.h"
#include "model/usage_memory.h"

namespace gantry {
namespace {

constexpr int64_t kShareScale = 1'000'000;
// Dominant shares of the cluster for the queue order, in units of 10^-12: fine enough to
// tell one milli-unit from the next on any cluster, small enough that share * weight fits.
constexpr int64_t kOrderScale = 1'000'000'000'000;

// What each queue's running jobs hold, by priority: the room a job's preemption could make
// in its own queue. Built once per session, at the first question (admission runs first).
class HeldByPriority {
 public:
  void Clear() { by_queue_.clear(); }

  // What the queue's running jobs of a priority below `priority` hold: their running
  // tasks, as accounted.
  ResourceVector Below(const Session& s, QueueId queue, int32_t priority) {
    if (by_queue_.empty()) Build(s);
    const auto& list = by_queue_[queue];
    auto below = std::lower_bound(list.begin(), list.end(), priority,
                                  [](const auto& e, int32_t p) { return e.first < p; });
    return below == list.begin() ? ResourceVector{} : std::prev(below)->second;
  }

 private:
  void Build(const Session& s) {
    const ClusterState& c = s.cluster();
    by_queue_.resize(c.queues().size());
    for (JobId j = 0; j < c.jobs().size(); ++j) {
      const Job& job = c.job(j);
      if (job.queue >= c.queues().size() || job.running == 0) continue;
      ResourceVector held;
      for (TaskId t : job.tasks) {
        if (s.task_status(t) != TaskStatus::kRunning) continue;
        const Task& task = c.task(t);
        held.Add(ClusterState::Accounted(c.spec_of(t), static_cast<int32_t>(task.gpus.size()),
                                         task.gpu_milli_each));
      }
      by_queue_[job.queue].emplace_back(job.priority, std::move(held));
    }
    for (auto& list : by_queue_) {
      std::sort(list.begin(), list.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t i = 1; i < list.size(); ++i) list[i].second.Add(list[i - 1].second);
    }
  }

  // By queue: (priority, what its running jobs of at most that priority hold), by priority.
  std::vector<std::vector<std::pair<int32_t, ResourceVector>>> by_queue_;
};

// Whether a queue holding `allocated` holds more than `deserved` of some resource that
// `gives` gives back: its surplus, which reclaim may take. As Volcano's proportion and KAI's
// reclaimable rule check it, before the victim goes: the last victim may take the queue
// below its share, by less than that victim (a queue above its share by half a GPU gives a
// whole one), and then it is within its share, so not reclaimable itself.
bool HoldsSurplusOf(const ResourceVector& allocated, const ResourceVector& deserved,
                    const ResourceVector& gives) {
  for (const auto& e : allocated.entries()) {
    if (e.amount > deserved.Get(e.id) && gives.Get(e.id) > 0) return true;
  }
  return false;
}

class ProportionPlugin : public SessionCopyable<ProportionPlugin>,
                         public QueueOrder,
                         public JobAdmission,
                         public QueueLimits,
                         public VictimFilter {
 public:
  std::string_view name() const override { return "proportion"; }

  void OnSessionOpen(Session& s) override;

  // Hierarchical DRF: the two queues compare as their ancestors do just below the lowest
  // ancestor they share, so that the least of all queues is the one reached by going down
  // the best child at each level. A queue out of the tree compares as a top-level one.
  int CompareQueues(const Session& s, QueueId a, QueueId b) const override;
  bool Admit(Session& s, JobId job_id, std::string* reason) override;
  PendingHold RefusalHold() const override { return PendingHold::kQueueLimit; }

  bool Grants(EvictionCause cause) const override { return cause == EvictionCause::kReclaim; }

  // Reclaim, so that it never loops. Between the reclaimer's queue and a victim's, only
  // the queues below the lowest ancestor they share change hands (what moves inside that
  // ancestor leaves it as it was). On the reclaimer's side each of them must stay within
  // its deserved share once the preemptor is placed (what the other victims offered
  // inside it give back counted as gone); on the victim's side each must hold more than
  // its deserved share of some resource the victim gives back, counting the victims kept
  // before (in the caller's order), as Volcano's and KAI's rules check. So no queue is
  // lifted above its share, and a queue taken below it, by less than its last victim, is
  // not reclaimable and cannot take back from its reclaimer, which is within its own. A
  // queue that is not reclaimable (or below one that is not) keeps what it borrowed.
  // Preemption stays inside one queue: no opinion.
  void FilterVictims(const Session& s, EvictionCause cause, TaskId preemptor,
                     std::vector<TaskId>* victims) const override;

  // The queue, or one of its ancestors, has its deserved share.
  bool Overused(const Session& s, QueueId leaf, std::string* reason) const override;

  bool HoldsOwnShare(const Session& s, QueueId leaf, std::string* reason) const override;

  bool Allocatable(const Session& s, QueueId leaf, const ResourceVector& request,
                   std::string* reason) const override;

  const ResourceVector& deserved(QueueId q) const { return deserved_[q]; }
  void OnSessionClose(const Session& /*session*/, Decisions* out) const override {
    out->deserved = deserved_;
  }

 private:
  static std::string Amount(ResourceId r, Milli amount) {
    return FormatQuantity(amount, /*binary=*/r == kMemory);
  }
  static ResourceVector RequestOf(const Session& s, TaskId task) {
    const TaskSpec& spec = s.cluster().spec_of(task);
    const int32_t n_gpus = spec.gpu.shared() ? 1 : spec.gpu.count;
    return ClusterState::Accounted(spec, n_gpus, s.cluster().EstimatedGpuShare(spec.gpu));
  }
  // Whether the queue's subtree, with what it holds and has pipelined plus `need`, less
  // what `leaving` gives back, stays within its deserved share in every resource `need`
  // asks for.
  bool WithinDeservedWith(const Session& s, QueueId q, const ResourceVector& need,
                          const ResourceVector& leaving) const {
    const ResourceVector& held = SubtreeAllocated(s, q);
    const ResourceVector pipelined = Subtree(s, q, &QueueWork::pipelined);
    for (const auto& e : need.entries()) {
      if (e.amount <= 0) continue;
      const Milli after =
          SaturatingAdd(SaturatingAdd(held.Get(e.id), pipelined.Get(e.id)), e.amount) -
          leaving.Get(e.id);
      if (after > deserved_[q].Get(e.id)) return false;
    }
    return true;
  }
  // The parent in the tree; none for a top-level queue or one out of the tree.
  QueueId Up(const Session& s, QueueId q) const {
    return tree_.in_tree(q) ? s.cluster().queue(q).parent : kNone;
  }
  // The lowest queue both are in (kNone: only the cluster).
  QueueId SharedAncestor(const Session& s, QueueId a, QueueId b) const {
    auto depth = [&](QueueId q) { return tree_.in_tree(q) ? tree_.depth[q] : 1; };
    int da = depth(a), db = depth(b);
    for (; da > db; --da) a = Up(s, a);
    for (; db > da; --db) b = Up(s, b);
    while (a != b) a = Up(s, a), b = Up(s, b);
    return a;
  }
  static int64_t Ratio(Milli used, Milli of) {
    if (of <= 0) return 0;
    return static_cast<int64_t>(MulDiv(used, kShareScale, of));
  }
  // Jobs belong to leaf queues in the tree.
  bool UsableQueue(const Session& s, QueueId q, std::string* reason) const {
    if (!tree_.in_tree(q)) {
      *reason = tree_.problem[q];
      return false;
    }
    if (!tree_.leaf(q)) {
      *reason = "queue " + s.cluster().queue(q).name +
                " has child queues; jobs belong to leaf queues only";
      return false;
    }
    return true;
  }
  // What the queue's subtree holds (a leaf's own; inner queues hold only through leaves),
  // with its place in the order. Kept until an amount in the subtree changes: the allocate
  // action compares queues once per job it places, and most comparisons find it unchanged.
  struct Held {
    uint64_t changes = UINT64_MAX;  // the subtree's QueueWork::changes, added up
    ResourceVector allocated;
    bool below_guarantee = false;
    int64_t dominant_share = 0;  // of the cluster, in kOrderScale
  };
  const Held& HeldBy(const Session& s, QueueId q) const {
    Held& held = held_[q];
    const uint64_t changes = SubtreeChanges(s, q);
    if (held.changes == changes) return held;
    // A leaf's own amounts are copied into the kept vector (no new allocation each time).
    if (!tree_.in_tree(q) || tree_.leaf(q)) {
      held.allocated = s.queue(q).allocated;
    } else {
      held.allocated = Subtree(s, q, &QueueWork::allocated);
    }
    held.below_guarantee = BelowGuarantee(held.allocated, q);
    held.dominant_share =
        DominantShare(s, remembers_[q] ? WithMemory(s, held.allocated, q) : held.allocated);
    held.changes = changes;
    return held;
  }
  // Fair share with memory: the mean of what the subtree holds now and what it held lately
  // (Queue::usage, kept between sessions by UsageMemory), so that a queue that used more
  // yesterday comes later among its siblings today.
  ResourceVector WithMemory(const Session& s, const ResourceVector& allocated, QueueId q) const {
    ResourceVector usage = SubtreeUsage(s, q);
    ResourceVector mean;
    const ResourceVector either = Max(allocated, usage);  // every resource either names
    for (const auto& e : either.entries()) {
      const Milli a = allocated.Get(e.id), u = usage.Get(e.id);
      mean.Set(e.id, a / 2 + u / 2 + (a % 2 + u % 2) / 2);  // (a + u) / 2 without overflow
    }
    return mean;
  }
  ResourceVector SubtreeUsage(const Session& s, QueueId q) const {
    ResourceVector sum = s.cluster().queue(q).usage;
    if (tree_.in_tree(q)) {
      for (QueueId c : tree_.children[q]) sum.Add(SubtreeUsage(s, c));
    }
    return sum;
  }
  const ResourceVector& SubtreeAllocated(const Session& s, QueueId q) const {
    return HeldBy(s, q).allocated;
  }
  // Each counter only grows, so the sum changes whenever one of them does.
  uint64_t SubtreeChanges(const Session& s, QueueId q) const {
    uint64_t sum = s.queue(q).changes;
    if (tree_.in_tree(q) && !tree_.leaf(q)) {
      for (QueueId c : tree_.children[q]) sum += SubtreeChanges(s, c);
    }
    return sum;
  }
  ResourceVector Subtree(const Session& s, QueueId q, ResourceVector QueueWork::*amount) const {
    if (!tree_.in_tree(q) || tree_.leaf(q)) return s.queue(q).*amount;
    ResourceVector sum = s.queue(q).*amount;
    for (QueueId c : tree_.children[q]) sum.Add(Subtree(s, c, amount));
    return sum;
  }
  int64_t DeservedShare(const ResourceVector& allocated, QueueId q) const {
    int64_t share = 0;
    for (const auto& e : deserved_[q].entries()) {
      share = std::max(share, Ratio(allocated.Get(e.id), e.amount));
    }
    return share;
  }
  // Siblings' order: below its guarantee first; then the lower dominant share of the
  // cluster divided by weight (with memory, of the mean of now and lately); then the name.
  int CompareSiblings(const Session& s, QueueId a, QueueId b) const {
    const Held& held_a = HeldBy(s, a);
    const Held& held_b = HeldBy(s, b);
    if (held_a.below_guarantee != held_b.below_guarantee) return held_a.below_guarantee ? -1 : 1;
    const auto& queues = s.cluster().queues();
    const Int128 share_a = static_cast<Int128>(held_a.dominant_share) * queues[b].weight;
    const Int128 share_b = static_cast<Int128>(held_b.dominant_share) * queues[a].weight;
    if (share_a != share_b) return share_a < share_b ? -1 : 1;
    const int c = queues[a].name.compare(queues[b].name);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  bool BelowGuarantee(const ResourceVector& allocated, QueueId q) const {
    if (!tree_.in_tree(q)) return false;
    for (const auto& e : tree_.guarantee[q].entries()) {
      if (allocated.Get(e.id) < e.amount) return true;
    }
    return false;
  }
  // The largest allocated / capacity ratio over the cluster's resources, in kOrderScale.
  static int64_t DominantShare(const Session& s, const ResourceVector& allocated) {
    int64_t share = 0;
    for (const auto& e : allocated.entries()) {
      const Milli total = s.capacity().Get(e.id);
      if (total <= 0 || e.amount <= 0) continue;
      share = std::max(share,
                       static_cast<int64_t>(MulDiv(std::min(e.amount, total), kOrderScale, total)));
    }
    return share;
  }
  // The queue's dominant share of what it deserves, in millionths. Kept until the
  // queue's amounts change: the allocate action compares queues once per job it places.
  int64_t Share(const Session& s, QueueId q) const {
    const QueueWork& work = s.queue(q);
    KnownShare& known = shares_[q];
    if (known.changes == work.changes) return known.share;
    int64_t share = 0;
    for (const auto& e : deserved_[q].entries()) {
      share = std::max(share, Ratio(work.allocated.Get(e.id), e.amount));
    }
    known = {work.changes, share};
    return share;
  }

  struct KnownShare {
    uint64_t changes = UINT64_MAX;  // the QueueWork::changes it was computed at
    int64_t share = 0;
  };

  QueueTree tree_;
  std::vector<ResourceVector> deserved_;    // by queue
  std::vector<ResourceVector> admitted_;    // min resources of jobs admitted this session
  mutable std::vector<KnownShare> shares_;  // by queue
  mutable std::vector<Held> held_;          // by queue
  std::vector<bool> remembers_;             // by queue: its tree orders by usage with memory
  HeldByPriority held_by_priority_;
};

void ProportionPlugin::OnSessionOpen(Session& s) {
  const auto& queues = s.cluster().queues();
  const size_t n = queues.size();
  tree_ = BuildQueueTree(queues);
  admitted_.assign(n, {});
  shares_.assign(n, {});
  held_.assign(n, {});
  remembers_.assign(n, false);
  held_by_priority_.Clear();
  for (size_t q = 0; q < n; ++q) {
    const auto id = static_cast<QueueId>(q);
    remembers_[q] = tree_.in_tree(id) && TreeUsageHalfLife(s.cluster(), id) > 0;
  }
  std::vector<ResourceVector> requests(n);
  for (size_t q = 0; q < n; ++q) requests[q] = s.queue(static_cast<QueueId>(q)).request;
  deserved_ = DeservedShares(queues, tree_, requests, s.capacity());
}

int ProportionPlugin::CompareQueues(const Session& s, QueueId a, QueueId b) const {
  if (a == b) return 0;
  const auto& queues = s.cluster().queues();
  auto depth = [&](QueueId q) { return tree_.in_tree(q) ? tree_.depth[q] : 1; };
  auto up = [&](QueueId q) { return tree_.in_tree(q) ? queues[q].parent : kNone; };
  QueueId x = a, y = b;
  int dx = depth(x), dy = depth(y);
  for (; dx > dy; --dx) x = up(x);
  for (; dy > dx; --dy) y = up(y);
  if (x == y) return a == x ? -1 : 1;  // one is inside the other: the inner queue first
  while (up(x) != up(y)) x = up(x), y = up(y);
  return CompareSiblings(s, x, y);
}

bool ProportionPlugin::Admit(Session& s, JobId job_id, std::string* reason) {
  const Job& job = s.cluster().job(job_id);
  if (!UsableQueue(s, job.queue, reason)) return false;
  // What the job needs to start: its first (minMember - running) tasks in task order.
  ResourceVector need;
  int32_t missing = job.min_member - s.job(job_id).ready;
  for (TaskId t : s.job(job_id).unplaced) {
    if (missing-- <= 0) break;
    const TaskSpec& spec = s.cluster().spec_of(t);
    int32_t n_gpus = spec.gpu.shared() ? 1 : spec.gpu.count;
    need.Add(ClusterState::Accounted(spec, n_gpus, s.cluster().EstimatedGpuShare(spec.gpu)));
  }
  // Within the capability of the queue and of each of its ancestors, counting as room
  // what the job's preemption could free: what lower-priority jobs of its own queue hold
  // (a queue at its capability makes room for its higher-priority work by preempting, as
  // Volcano's preempt does; the preempt action then takes as few of them as it can).
  const TaskId first = s.job(job_id).unplaced.empty() ? kNone : s.job(job_id).unplaced.front();
  const bool preempts =
      first != kNone && s.cluster().spec_of(first).preemption_policy != PreemptionPolicy::kNever;
  std::optional<ResourceVector> preemptible;  // asked only of a job over a capability
  for (QueueId q = job.queue; q != kNone; q = s.cluster().queue(q).parent) {
    const Queue& queue = s.cluster().queue(q);
    if (queue.capability.empty()) continue;  // no limit to check
    const ResourceVector& allocated = SubtreeAllocated(s, q);
    ResourceVector total = allocated;
    total.Add(admitted_[q]);
    total.Add(need);
    int64_t over = total.FirstExceeding(queue.capability, /*named_only=*/true);
    if (over >= 0 && preempts) {  // room its preemption could make counts
      if (!preemptible) preemptible = held_by_priority_.Below(s, job.queue, job.priority);
      total.Subtract(*preemptible);
      over = total.FirstExceeding(queue.capability, /*named_only=*/true);
    }
    if (over >= 0) {
      auto r = static_cast<ResourceId>(over);
      *reason = "queue " + queue.name + " capability: " + Amount(r, queue.capability.Get(r)) + " " +
                ResourceName(r) + " (allocated " + Amount(r, allocated.Get(r)) + ", admitted " +
                Amount(r, admitted_[q].Get(r)) + ", this job needs " + Amount(r, need.Get(r));
      if (preemptible && preemptible->Get(r) > 0) {
        *reason += ", lower-priority work it may preempt holds " + Amount(r, preemptible->Get(r));
      }
      *reason += ")";
      return false;
    }
  }
  for (QueueId q = job.queue; q != kNone; q = s.cluster().queue(q).parent) admitted_[q].Add(need);
  return true;
}

void ProportionPlugin::FilterVictims(const Session& s, EvictionCause cause, TaskId preemptor,
                                     std::vector<TaskId>* victims) const {
  if (cause != EvictionCause::kReclaim) return;
  const ClusterState& c = s.cluster();
  const QueueId own = c.job(c.task(preemptor).job).queue;
  const ResourceVector need = RequestOf(s, preemptor);
  auto gives = [&](TaskId v) {
    const Task& task = c.task(v);
    return ClusterState::Accounted(c.spec_of(v), static_cast<int32_t>(task.gpus.size()),
                                   task.gpu_milli_each);
  };
  // On the reclaimer's side, what the victims offered inside each of its ancestors give
  // back to it: a sibling's surplus makes room in the parent for a victim of another
  // department. Counted as if they all went; each unit is asked again as it goes
  // (EvictionUnit), with what went before gone.
  std::vector<ResourceVector> leaving(c.queues().size());
  for (TaskId v : *victims) {
    const QueueId q = c.job(c.task(v).job).queue;
    if (q == own) continue;
    for (QueueId x = SharedAncestor(s, q, own); x != kNone; x = Up(s, x)) {
      leaving[x].Add(gives(v));
    }
  }
  std::vector<ResourceVector> left(c.queues().size());  // allocated, less victims kept
  std::vector<uint8_t> known(c.queues().size(), 0);
  std::erase_if(*victims, [&](TaskId v) {
    const QueueId q = c.job(c.task(v).job).queue;
    if (q == own) return true;
    const QueueId shared = SharedAncestor(s, q, own);
    for (QueueId x = own; x != shared; x = Up(s, x)) {
      if (!WithinDeservedWith(s, x, need, leaving[x])) return true;
    }
    const ResourceVector given = gives(v);
    for (QueueId x = q; x != shared; x = Up(s, x)) {
      if (!c.queue(x).reclaimable) return true;
      if (!known[x]) left[x] = SubtreeAllocated(s, x), known[x] = 1;
      if (!HoldsSurplusOf(left[x], deserved_[x], given)) return true;
    }
    for (QueueId x = q; x != shared; x = Up(s, x)) left[x].Subtract(given);
    return false;
  });
}

bool ProportionPlugin::Overused(const Session& s, QueueId leaf, std::string* reason) const {
  if (!tree_.in_tree(leaf)) return false;  // its jobs wait for the tree (Allocatable)
  for (QueueId q = leaf; q != kNone; q = s.cluster().queue(q).parent) {
    if (q == leaf ? Share(s, q) < kShareScale
                  : DeservedShare(SubtreeAllocated(s, q), q) < kShareScale) {
      continue;
    }
    if (reason == nullptr) return true;
    const ResourceVector& allocated = SubtreeAllocated(s, q);
    const Queue& queue = s.cluster().queue(q);
    ResourceId worst = 0;
    int64_t worst_share = -1;
    for (const auto& e : deserved_[q].entries()) {
      int64_t share = Ratio(allocated.Get(e.id), e.amount);
      if (share > worst_share) worst_share = share, worst = e.id;
    }
    *reason = "queue " + queue.name + " has its deserved share (" + ResourceName(worst) + ": " +
              Amount(worst, allocated.Get(worst)) + " allocated of " +
              Amount(worst, deserved_[q].Get(worst)) + " deserved at weight " +
              std::to_string(queue.weight) + ")";
    if (q != leaf) *reason += ", so queue " + s.cluster().queue(leaf).name + " below it has too";
    return true;
  }
  return false;
}

bool ProportionPlugin::HoldsOwnShare(const Session& s, QueueId leaf, std::string* reason) const {
  if (!tree_.in_tree(leaf) || Share(s, leaf) < kShareScale) return false;
  if (reason == nullptr) return true;
  const Queue& queue = s.cluster().queue(leaf);
  *reason = "queue " + queue.name + " has its deserved share";
  return true;
}

bool ProportionPlugin::Allocatable(const Session& s, QueueId leaf, const ResourceVector& request,
                                   std::string* reason) const {
  if (!UsableQueue(s, leaf, reason)) return false;
  for (QueueId q = leaf; q != kNone; q = s.cluster().queue(q).parent) {
    const Queue& queue = s.cluster().queue(q);
    if (queue.capability.empty()) continue;  // no limit to check
    const ResourceVector& allocated = SubtreeAllocated(s, q);
    ResourceVector after = allocated;
    after.Add(request);
    int64_t over = after.FirstExceeding(queue.capability, /*named_only=*/true);
    if (over < 0) continue;
    auto r = static_cast<ResourceId>(over);
    *reason = "queue " + queue.name + " would exceed its capability of " +
              Amount(r, queue.capability.Get(r)) + " " + ResourceName(r) + " (allocated " +
              Amount(r, allocated.Get(r)) + ", the task needs " + Amount(r, request.Get(r)) + ")";
    return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<Plugin>> NewProportionPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new ProportionPlugin());
}

}  // namespace gantry

// proportion: fair shares between queues.
//
// Each queue deserves a share of the cluster's capacity by weight, water-filled: every
// queue first gets what it asks for up to its guarantee; the rest of the capacity goes
// round the queues that still want more, in proportion to their weights, never above
// what a queue asks for nor above its capability, until nothing is left or everyone has
// enough. Amounts are integers (milli-units), so the result is exact and deterministic.
#include <algorithm>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "model/int128.h"

namespace gantry {
namespace {

constexpr int64_t kShareScale = 1'000'000;

class ProportionPlugin : public SessionCopyable<ProportionPlugin>,
                         public QueueOrder,
                         public JobAdmission,
                         public QueueLimits,
                         public VictimFilter {
 public:
  std::string_view name() const override { return "proportion"; }

  void OnSessionOpen(Session& s) override {
    const auto& queues = s.cluster().queues();
    const size_t n = queues.size();
    deserved_.assign(n, {});
    admitted_.assign(n, {});
    shares_.assign(n, {});
    // What each queue can use at most: its request, capped by its capability.
    std::vector<ResourceVector> want(n);
    for (size_t q = 0; q < n; ++q) {
      want[q] = s.queue(static_cast<QueueId>(q)).request;
      for (const auto& cap : queues[q].capability.entries()) {
        want[q].Set(cap.id, std::min(want[q].Get(cap.id), cap.amount));
      }
      deserved_[q] = Min(queues[q].guarantee, want[q]);
    }
    // Water-fill each resource separately.
    for (const auto& total : s.capacity().entries()) {
      const ResourceId r = total.id;
      Milli given = 0;
      for (size_t q = 0; q < n; ++q) given = SaturatingAdd(given, deserved_[q].Get(r));
      Milli remaining = std::max<Milli>(0, total.amount - given);
      while (remaining > 0) {
        int64_t weight_sum = 0;
        for (size_t q = 0; q < n; ++q) {
          if (deserved_[q].Get(r) < want[q].Get(r)) weight_sum += queues[q].weight;
        }
        if (weight_sum == 0) break;
        Milli handed = 0;
        for (size_t q = 0; q < n; ++q) {
          Milli have = deserved_[q].Get(r);
          Milli need = want[q].Get(r) - have;
          if (need <= 0) continue;
          auto portion = static_cast<Milli>(MulDiv(remaining, queues[q].weight, weight_sum));
          Milli give = std::min(need, portion);
          deserved_[q].Set(r, have + give);
          handed += give;
        }
        if (handed == 0) {
          // Less is left than there are weight units: hand out the rest one milli-unit
          // at a time in queue order, so that none is lost and the result is exact.
          for (size_t q = 0; q < n && remaining > 0; ++q) {
            if (deserved_[q].Get(r) < want[q].Get(r)) {
              deserved_[q].Set(r, deserved_[q].Get(r) + 1);
              --remaining;
            }
          }
          continue;
        }
        remaining -= handed;
      }
    }
  }

  int CompareQueues(const Session& s, QueueId a, QueueId b) const override {
    int64_t sa = Share(s, a);
    int64_t sb = Share(s, b);
    return sa == sb ? 0 : (sa < sb ? -1 : 1);
  }

  bool Admit(Session& s, JobId job_id, std::string* reason) override {
    const Job& job = s.cluster().job(job_id);
    const Queue& queue = s.cluster().queue(job.queue);
    // What the job needs to start: its first (minMember - running) tasks in task order.
    ResourceVector need;
    int32_t missing = job.min_member - s.job(job_id).ready;
    for (TaskId t : s.job(job_id).unplaced) {
      if (missing-- <= 0) break;
      const TaskSpec& spec = s.cluster().spec_of(t);
      int32_t n_gpus = spec.gpu.shared() ? 1 : spec.gpu.count;
      need.Add(ClusterState::Accounted(spec, n_gpus, s.cluster().EstimatedGpuShare(spec.gpu)));
    }
    ResourceVector total = s.queue(job.queue).allocated;
    total.Add(admitted_[job.queue]);
    total.Add(need);
    int64_t over = total.FirstExceeding(queue.capability, /*named_only=*/true);
    if (over >= 0) {
      auto r = static_cast<ResourceId>(over);
      *reason = "queue " + queue.name + " capability: " + Amount(r, queue.capability.Get(r)) + " " +
                ResourceName(r) + " (allocated " + Amount(r, s.queue(job.queue).allocated.Get(r)) +
                ", admitted " + Amount(r, admitted_[job.queue].Get(r)) + ", this job needs " +
                Amount(r, need.Get(r)) + ")";
      return false;
    }
    admitted_[job.queue].Add(need);
    return true;
  }

  bool Grants(EvictionCause cause) const override { return cause == EvictionCause::kReclaim; }

  // Reclaim, so that it never loops: the reclaimer's queue must stay within its deserved
  // share once the preemptor is placed (none is kept otherwise), and a victim is kept only
  // while its queue, less the victims kept before it (in the caller's order), holds more
  // than its deserved share of some resource the victim gives back, and no more of it
  // than that share above: no queue is taken below its deserved share. Preemption stays
  // inside one queue: no opinion.
  void FilterVictims(const Session& s, EvictionCause cause, TaskId preemptor,
                     std::vector<TaskId>* victims) const override {
    if (cause != EvictionCause::kReclaim) return;
    const ClusterState& c = s.cluster();
    const QueueId own = c.job(c.task(preemptor).job).queue;
    if (!WithinDeservedWith(s, own, preemptor)) {
      victims->clear();
      return;
    }
    std::vector<ResourceVector> left(c.queues().size());  // allocated, less victims kept
    std::vector<uint8_t> known(c.queues().size(), 0);
    std::erase_if(*victims, [&](TaskId v) {
      const QueueId q = c.job(c.task(v).job).queue;
      if (q == own) return true;
      if (!known[q]) left[q] = s.queue(q).allocated, known[q] = 1;
      const Task& task = c.task(v);
      const ResourceVector gives = ClusterState::Accounted(
          c.spec_of(v), static_cast<int32_t>(task.gpus.size()), task.gpu_milli_each);
      if (!GivesOnlySurplus(left[q], deserved_[q], gives)) return true;
      left[q].Subtract(gives);
      return false;
    });
  }

  bool Overused(const Session& s, QueueId q, std::string* reason) const override {
    if (Share(s, q) < kShareScale) return false;
    const Queue& queue = s.cluster().queue(q);
    ResourceId worst = 0;
    int64_t worst_share = -1;
    for (const auto& e : deserved_[q].entries()) {
      int64_t share = Ratio(s.queue(q).allocated.Get(e.id), e.amount);
      if (share > worst_share) worst_share = share, worst = e.id;
    }
    *reason = "queue " + queue.name + " has its deserved share (" + ResourceName(worst) + ": " +
              Amount(worst, s.queue(q).allocated.Get(worst)) + " allocated of " +
              Amount(worst, deserved_[q].Get(worst)) + " deserved at weight " +
              std::to_string(queue.weight) + ")";
    return true;
  }

  bool Allocatable(const Session& s, QueueId q, const ResourceVector& request,
                   std::string* reason) const override {
    const Queue& queue = s.cluster().queue(q);
    ResourceVector after = s.queue(q).allocated;
    after.Add(request);
    int64_t over = after.FirstExceeding(queue.capability, /*named_only=*/true);
    if (over < 0) return true;
    auto r = static_cast<ResourceId>(over);
    *reason = "queue " + queue.name + " would exceed its capability of " +
              Amount(r, queue.capability.Get(r)) + " " + ResourceName(r) + " (allocated " +
              Amount(r, s.queue(q).allocated.Get(r)) + ", the task needs " +
              Amount(r, request.Get(r)) + ")";
    return false;
  }

  const ResourceVector& deserved(QueueId q) const { return deserved_[q]; }
  void OnSessionClose(const Session& /*session*/, Decisions* out) const override {
    out->deserved = deserved_;
  }

 private:
  static std::string Amount(ResourceId r, Milli amount) {
    return FormatQuantity(amount, /*binary=*/r == kMemory);
  }
  // Whether the queue, with what it holds and has pipelined plus the preemptor's request,
  // stays within its deserved share in every resource the preemptor asks for.
  bool WithinDeservedWith(const Session& s, QueueId q, TaskId preemptor) const {
    const TaskSpec& spec = s.cluster().spec_of(preemptor);
    const int32_t n_gpus = spec.gpu.shared() ? 1 : spec.gpu.count;
    const ResourceVector need =
        ClusterState::Accounted(spec, n_gpus, s.cluster().EstimatedGpuShare(spec.gpu));
    for (const auto& e : need.entries()) {
      if (e.amount <= 0) continue;
      const Milli after = SaturatingAdd(
          SaturatingAdd(s.queue(q).allocated.Get(e.id), s.queue(q).pipelined.Get(e.id)), e.amount);
      if (after > deserved_[q].Get(e.id)) return false;
    }
    return true;
  }
  // Whether taking `gives` from a queue holding `allocated` takes only what it holds above
  // `deserved`: it gives back some resource the queue is above its share of, and in every
  // such resource it stays at its share or above.
  static bool GivesOnlySurplus(const ResourceVector& allocated, const ResourceVector& deserved,
                               const ResourceVector& gives) {
    bool surplus = false;
    for (const auto& e : allocated.entries()) {
      const Milli share = deserved.Get(e.id);
      const Milli given = gives.Get(e.id);
      if (e.amount <= share || given <= 0) continue;
      if (e.amount - given < share) return false;
      surplus = true;
    }
    return surplus;
  }
  static int64_t Ratio(Milli used, Milli of) {
    if (of <= 0) return 0;
    return static_cast<int64_t>(MulDiv(used, kShareScale, of));
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

  std::vector<ResourceVector> deserved_;
  std::vector<ResourceVector> admitted_;    // min resources of jobs admitted this session
  mutable std::vector<KnownShare> shares_;  // by queue
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewProportionPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new ProportionPlugin());
}

}  // namespace gantry

#include "engine/session.h"

#include <algorithm>
#include <cassert>
#include <map>

#include "engine/registry.h"
#include "engine/statement.h"

namespace gantry {

Session::Session(const Snapshot& snapshot, const SchedulerConfig& config, SessionOptions options)
    : snapshot_(snapshot), config_(config), options_(options), rng_(options.seed) {
  for (const PluginConfig& pc : config_.plugins) {
    auto made = MakePlugin(pc);
    assert(made.ok());  // REQUIRES: a validated configuration
    plugins_.push_back(std::move(made).value());
    Plugin* p = plugins_.back().get();
    if (auto* x = dynamic_cast<const QueueOrder*>(p)) queue_orders_.push_back(x);
    if (auto* x = dynamic_cast<const JobOrder*>(p)) job_orders_.push_back(x);
    if (auto* x = dynamic_cast<const TaskOrder*>(p)) task_orders_.push_back(x);
    if (auto* x = dynamic_cast<JobAdmission*>(p)) admissions_.push_back(x);
    if (auto* x = dynamic_cast<const NodePredicate*>(p)) predicates_.push_back(x);
    if (auto* x = dynamic_cast<const NodeScorer*>(p)) scorers_.push_back(x);
    if (auto* x = dynamic_cast<const JobReadiness*>(p)) readiness_.push_back(x);
    if (auto* x = dynamic_cast<const QueueLimits*>(p)) queue_limits_.push_back(x);
    if (auto* x = dynamic_cast<PlacementListener*>(p)) listeners_.push_back(x);
  }
  for (const NodeScorer* scorer : scorers_) normalizing_ = normalizing_ || scorer->normalizes();
  for (const NodeScorer* scorer : scorers_) {
    if (scorer->packing() != GpuPacking::kNone) {
      packing_ = scorer->packing();
      break;
    }
  }
  for (const std::string& name : config_.actions) {
    auto made = MakeAction(name);
    assert(made.ok());
    actions_.push_back(std::move(made).value());
  }
  rotation_ = options_.seed;
  if (config_.tie_break == SchedulerConfig::TieBreak::kShuffled) {
    // Its own generator, so that the order does not depend on other random draws.
    Rng order_rng(options_.seed ^ 0x5deece66dULL);
    const size_t n = cluster().nodes().size();
    std::vector<uint32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
    for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[order_rng.Uniform(i)]);
    tie_rank_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) tie_rank_[order[i]] = static_cast<uint32_t>(i);
  }
  BuildWorkingState();
  for (auto& plugin : plugins_) plugin->OnSessionOpen(*this);
}

Session::~Session() = default;

void Session::BuildWorkingState() {
  const ClusterState& c = cluster();
  table_ = snapshot_.node_table() != nullptr ? *snapshot_.node_table() : BuildNodeTable(c);
  const size_t n = table_.nodes.size();
  std::vector<int32_t> whole_free(n), gpu_count(n);
  std::vector<uint8_t> partial(n);
  for (size_t i = 0; i < n; ++i) {
    const NodeWork& w = table_.nodes[i];
    whole_free[i] = w.whole_free;
    // Removed nodes take no tasks: out of the index, so that no search visits them.
    gpu_count[i] = w.removed ? NodeIndex::kNotIndexed : w.gpu_count;
    partial[i] = w.partial_count > 0;
  }
  index_.Build(whole_free, partial, gpu_count);
  devices_of_.assign(n, nullptr);

  bool has_enqueue =
      std::find(config_.actions.begin(), config_.actions.end(), "enqueue") != config_.actions.end();
  queues_.assign(c.queues().size(), QueueWork{});
  for (size_t q = 0; q < c.queues().size(); ++q) {
    queues_[q].allocated = c.queues()[q].allocated;
    queues_[q].request = c.queues()[q].allocated;
  }
  pending_jobs_.assign(c.jobs_with_pending().begin(), c.jobs_with_pending().end());
  jobs_.assign(pending_jobs_.size(), JobWork{});
  size_t slots = 16;
  while (slots < 2 * pending_jobs_.size()) slots *= 2;
  slot_keys_.assign(slots, kNone);
  slot_values_.assign(slots, 0);
  for (size_t slot = 0; slot < pending_jobs_.size(); ++slot) {
    size_t i = SlotHash(pending_jobs_[slot]) & (slots - 1);
    while (slot_keys_[i] != kNone) i = (i + 1) & (slots - 1);
    slot_keys_[i] = pending_jobs_[slot];
    slot_values_[i] = static_cast<uint32_t>(slot);
  }
  for (size_t slot = 0; slot < pending_jobs_.size(); ++slot) {
    JobId id = pending_jobs_[slot];
    const Job& job = c.job(id);
    JobWork& w = jobs_[slot];
    w.inqueue = !has_enqueue || job.running > 0;
    w.ready = job.running;
    w.allocated = job.allocated;
    for (TaskId t : job.tasks) {
      if (c.task(t).state != TaskState::kPending) continue;
      w.unplaced.push_back(t);
      const TaskSpec& spec = c.spec_of(t);
      int32_t n_gpus = spec.gpu.shared() ? 1 : spec.gpu.count;
      queues_[job.queue].request.Add(
          ClusterState::Accounted(spec, n_gpus, c.EstimatedGpuShare(spec.gpu)));
    }
  }
  // Task order needs the plugins, which exist by now; job slots exist too.
  for (JobWork& w : jobs_) {
    std::stable_sort(w.unplaced.begin(), w.unplaced.end(),
                     [this](TaskId a, TaskId b) { return CompareTasks(a, b) < 0; });
  }
  static_verdicts_.assign(c.specs().size(), {});
  unschedulable_.assign(c.specs().size(), 0);
  unschedulable_why_.assign(c.specs().size(), {});
  unschedulable_log_.clear();
}

Decisions Session::Run() {
  for (auto& action : actions_) action->Execute(*this);
  for (const auto& plugin : plugins_) plugin->OnSessionClose(*this, &decisions_);
  Decisions out = std::move(decisions_);
  decisions_ = Decisions{};
  for (size_t slot = 0; slot < pending_jobs_.size(); ++slot) {
    const JobWork& w = jobs_[slot];
    if (w.unplaced.empty()) continue;
    PendingJob pending;
    pending.job = pending_jobs_[slot];
    pending.pending_tasks = static_cast<int32_t>(w.unplaced.size());
    pending.reason =
        w.reason.empty() ? "not considered: no action of this session placed it" : w.reason;
    out.pending.push_back(std::move(pending));
  }
  return out;
}

ResourceVector Session::free_vector(NodeId id) const {
  ResourceVector out;
  for (ResourceId r = 0; r < table_.resource_count; ++r) out.Set(r, free(id, r));
  return out;
}

NodeGpus Session::node_gpus(NodeId id) const {
  const NodeWork& w = table_.nodes[id];
  const auto begin = static_cast<size_t>(w.gpu_begin);
  const auto count = static_cast<size_t>(w.gpu_count);
  // The devices' static properties live in the Node, far from the session's arrays:
  // remember where, so that a node visited for many tasks is looked up once.
  const GpuDevice*& devices = devices_of_[id];
  if (devices == nullptr) devices = cluster().node(id).gpus.data();
  return NodeGpus{std::span<const GpuDevice>(devices, count),
                  std::span<const int32_t>(table_.gpu_free_milli).subspan(begin, count),
                  std::span<const int64_t>(table_.gpu_free_memory).subspan(begin, count)};
}

int Session::CompareQueues(QueueId a, QueueId b) const {
  for (const QueueOrder* order : queue_orders_) {
    if (int r = order->CompareQueues(*this, a, b)) return r;
  }
  return a < b ? -1 : (a > b ? 1 : 0);
}

int Session::CompareJobs(JobId a, JobId b) const {
  for (const JobOrder* order : job_orders_) {
    if (int r = order->CompareJobs(*this, a, b)) return r;
  }
  const Job& ja = cluster().job(a);
  const Job& jb = cluster().job(b);
  if (ja.creation != jb.creation) return ja.creation < jb.creation ? -1 : 1;
  return a < b ? -1 : (a > b ? 1 : 0);
}

int Session::CompareTasks(TaskId a, TaskId b) const {
  for (const TaskOrder* order : task_orders_) {
    if (int r = order->CompareTasks(*this, a, b)) return r;
  }
  return a < b ? -1 : (a > b ? 1 : 0);
}

bool Session::AdmitJob(JobId job, std::string* reason) {
  for (JobAdmission* admission : admissions_) {
    if (!admission->Admit(*this, job, reason)) return false;
  }
  return true;
}

bool Session::JobReady(JobId job) const {
  for (const JobReadiness* r : readiness_) {
    if (!r->JobReady(*this, job)) return false;
  }
  return true;
}

bool Session::QueueOverused(QueueId queue, std::string* reason) const {
  for (const QueueLimits* limits : queue_limits_) {
    if (limits->Overused(*this, queue, reason)) return true;
  }
  return false;
}

bool Session::QueueAllocatable(QueueId queue, const ResourceVector& request,
                               std::string* reason) const {
  for (const QueueLimits* limits : queue_limits_) {
    if (!limits->Allocatable(*this, queue, request, reason)) return false;
  }
  return true;
}

std::vector<Session::StaticVerdict>& Session::StaticVerdictsOf(SpecId spec_id) {
  std::vector<StaticVerdict>& verdicts = static_verdicts_[spec_id];
  if (verdicts.size() < cluster().shape_class_count())
    verdicts.resize(cluster().shape_class_count());
  return verdicts;
}

const FilterResult& Session::StaticResult(const TaskSpec& spec,
                                          std::vector<StaticVerdict>& verdicts, NodeId node) {
  StaticVerdict& v = verdicts[table_.nodes[node].shape_class];
  if (!v.known) {
    for (const NodePredicate* p : predicates_) {
      v.result = p->FilterStatic(spec, cluster().node(node));
      if (!v.result.ok()) break;
    }
    v.known = true;
  }
  return v.result;
}

FilterResult Session::Filter(const TaskSpec& spec, SpecId spec_id, NodeId node) {
  FilterResult r = StaticResult(spec, StaticVerdictsOf(spec_id), node);
  if (!r.ok()) return r;
  for (const NodePredicate* p : predicates_) {
    r = p->FilterDynamic(*this, spec, node);
    if (!r.ok()) return r;
  }
  return r;
}

bool Session::Passes(const TaskSpec& spec, std::vector<StaticVerdict>& verdicts, NodeId node) {
  if (!StaticResult(spec, verdicts, node).ok()) return false;
  for (const NodePredicate* p : predicates_) {
    if (!p->FilterDynamic(*this, spec, node).ok()) return false;
  }
  return true;
}

template <typename Fn>
void Session::ForEachCandidate(const TaskSpec& spec, Fn&& fn) const {
  // fn(node) returns false to stop. Each GPU node is visited at most once.
  auto visit = [&](const std::vector<NodeId>& nodes, bool skip_partial) {
    for (NodeId n : nodes) {
      if (skip_partial && index_.is_partial(n)) continue;
      if (!fn(n)) return false;
    }
    return true;
  };
  const int32_t max = index_.max_whole();
  const GpuRequest& gpu = spec.gpu;
  if (packing_ == GpuPacking::kNone) {
    const size_t n = table_.nodes.size();
    if (n == 0) return;
    const size_t start = static_cast<size_t>(rotation_ % n);
    for (size_t k = 0; k < n; ++k) {
      const auto node = static_cast<NodeId>((start + k) % n);
      if (table_.nodes[node].removed) continue;
      if (!fn(node)) return;
    }
    return;
  }
  const bool tight = packing_ == GpuPacking::kTight;
  if (!gpu.wants_gpu()) {
    // CPU-only tasks: CPU-only nodes first, then GPU nodes from the fullest (tight) or
    // the emptiest (loose), so that GPU nodes keep their CPU for GPU tasks.
    if (!visit(index_.cpu_only(), false)) return;
    for (int32_t k = 0; k <= max; ++k) {
      if (!visit(index_.with_whole_free(tight ? k : max - k), false)) return;
    }
    return;
  }
  if (gpu.shared()) {
    if (tight && !visit(index_.partial(), false)) return;
    for (int32_t k = 1; k <= max; ++k) {
      if (!visit(index_.with_whole_free(tight ? k : max + 1 - k), true)) return;
    }
    if (!tight) visit(index_.partial(), false);
    return;
  }
  for (int32_t k = gpu.count; k <= max; ++k) {
    if (!visit(index_.with_whole_free(tight ? k : max + gpu.count - k), false)) return;
  }
}

bool Session::ChooseDevicesFor(const TaskSpec& spec, NodeId node, GpuChoice* out) const {
  for (const NodeScorer* scorer : scorers_) {
    if (scorer->ChooseDevices(*this, spec, node, out)) return true;
  }
  GpuPacking packing = packing_ == GpuPacking::kNone ? GpuPacking::kTight : packing_;
  return ChooseGpus(spec.gpu, node_gpus(node), packing, out);
}

namespace {

// Keeps the best-scoring candidate, breaking ties by lowest node id or uniformly at
// random (reservoir sampling: the k-th tie replaces the choice with probability 1/k).
class BestCandidate {
 public:
  // `rank`: when not empty, ties go to the node of lowest rank (TieBreak::kShuffled).
  BestCandidate(bool random_ties, Rng* rng, const std::vector<uint32_t>& rank)
      : random_ties_(random_ties), rng_(rng), rank_(rank) {}

  // Returns true when `node` becomes the choice.
  bool Offer(NodeId node, int64_t score) {
    if (best_ == kNone || score > score_) {
      best_ = node;
      score_ = score;
      ties_ = 1;
      return true;
    }
    if (score < score_) return false;
    if (random_ties_) {
      if (rng_->Uniform(++ties_) != 0) return false;
    } else if (!rank_.empty()) {
      if (rank_[node] > rank_[best_]) return false;
    } else if (node > best_) {
      return false;
    }
    best_ = node;
    return true;
  }
  NodeId best() const { return best_; }

 private:
  bool random_ties_;
  Rng* rng_;
  const std::vector<uint32_t>& rank_;
  NodeId best_ = kNone;
  int64_t score_ = 0;
  uint64_t ties_ = 0;
};

}  // namespace

bool Session::FindPlacement(TaskId task_id, Placement* out, std::string* why_not) {
  const Task& task = cluster().task(task_id);
  const SpecId spec_id = task.spec;
  const TaskSpec& spec = cluster().spec(spec_id);
  if (unschedulable_[spec_id]) {
    *why_not = unschedulable_why_[spec_id];
    return false;
  }
  BestCandidate best(config_.tie_break == SchedulerConfig::TieBreak::kRandom, &rng_, tie_rank_);
  int32_t found = 0;
  size_t visited = 0;
  GpuChoice choice;
  const int32_t enough = config_.nodes_to_score;
  if (normalizing_) {
    candidate_nodes_.clear();
    candidate_gpus_.clear();
    candidate_scores_.resize(scorers_.size());
    for (auto& scores : candidate_scores_) scores.clear();
  }
  // Looked up once here rather than per candidate.
  std::vector<StaticVerdict>& verdicts = StaticVerdictsOf(spec_id);
  ForEachCandidate(spec, [&](NodeId n) {
    ++visited;
    if (!Passes(spec, verdicts, n)) return true;
    if (!ChooseDevicesFor(spec, n, &choice)) return true;
    ++found;
    if (normalizing_) {
      candidate_nodes_.push_back(n);
      candidate_gpus_.push_back(choice);
      for (size_t i = 0; i < scorers_.size(); ++i) {
        candidate_scores_[i].push_back(scorers_[i]->ScoreNode(*this, spec, n, choice));
      }
    } else {
      int64_t score = 0;
      for (const NodeScorer* scorer : scorers_) {
        score += scorer->weight() * scorer->ScoreNode(*this, spec, n, choice);
      }
      if (best.Offer(n, score)) out->gpus = choice;
    }
    return enough <= 0 || found < enough;
  });
  rotation_ += visited;
  if (normalizing_ && found > 0) {
    for (size_t i = 0; i < scorers_.size(); ++i) scorers_[i]->NormalizeScores(candidate_scores_[i]);
    size_t chosen = 0;
    for (size_t c = 0; c < candidate_nodes_.size(); ++c) {
      int64_t score = 0;
      for (size_t i = 0; i < scorers_.size(); ++i)
        score += scorers_[i]->weight() * candidate_scores_[i][c];
      if (best.Offer(candidate_nodes_[c], score)) chosen = c;
    }
    out->gpus = candidate_gpus_[chosen];
  }
  if (best.best() == kNone) {
    unschedulable_[spec_id] = 1;
    unschedulable_log_.push_back(spec_id);
    unschedulable_why_[spec_id] = Diagnose(spec, spec_id);
    *why_not = unschedulable_why_[spec_id];
    return false;
  }
  out->node = best.best();
  return true;
}

std::string Session::Diagnose(const TaskSpec& spec, SpecId spec_id) {
  // Runs every predicate on every node to count why each one was rejected; only on the
  // path where a task fits nowhere. Counted by (code, detail) and described once per
  // kind, with a node that had it (a taint's text needs its node; the detail is per shape
  // class, and taints are part of the class).
  struct Kind {
    int64_t count = 0;
    NodeId example = 0;
  };
  std::map<std::pair<uint8_t, uint32_t>, Kind> kinds;
  GpuChoice choice;
  for (NodeId n = 0; n < table_.nodes.size(); ++n) {
    if (table_.nodes[n].removed) continue;  // gone: not a node anyone should hear of
    FilterResult r = Filter(spec, spec_id, n);
    if (r.ok() && !ChooseDevicesFor(spec, n, &choice)) {
      r = FilterResult::Fail(FilterCode::kInsufficientGpus);
    }
    auto [it, inserted] = kinds.try_emplace({static_cast<uint8_t>(r.code), r.detail}, Kind{0, n});
    it->second.count++;
  }
  std::map<std::string, int64_t> counts;
  for (const auto& [key, kind] : kinds) {
    FilterResult r{static_cast<FilterCode>(key.first), key.second};
    counts[r.ok() ? std::string("would fit but were not scored")
                  : DescribeFilter(r, cluster().node(kind.example))] += kind.count;
  }
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out = "0/" + std::to_string(cluster().live_node_count()) + " nodes are available";
  for (size_t i = 0; i < sorted.size(); ++i) {
    out += i == 0 ? ": " : ", ";
    out += std::to_string(sorted[i].second) + " " + sorted[i].first;
  }
  return out;
}

void Session::ApplyPlacement(TaskId task_id, const Placement& p, int sign) {
  const ClusterState& c = cluster();
  const Task& task = c.task(task_id);
  const TaskSpec& spec = c.spec(task.spec);
  const ResourceVector accounted =
      ClusterState::Accounted(spec, static_cast<int32_t>(p.gpus.devices.size()), p.gpus.milli_each);
  NodeWork& w = table_.nodes[p.node];
  Milli* row = table_.free.data() + static_cast<size_t>(p.node) * table_.resource_count;
  for (const auto& e : accounted.entries()) {
    // A resource without a column is on no node, so no placement asks for it.
    assert(e.id < table_.resource_count);
    row[e.id] -= sign * e.amount;
  }
  w.tasks += sign;
  if (w.gpu_count > 0) {
    for (int32_t d : p.gpus.devices) {
      auto slot = static_cast<size_t>(w.gpu_begin + d);
      table_.gpu_free_milli[slot] -= sign * p.gpus.milli_each;
      w.gpu_used += sign * p.gpus.milli_each;
      table_.gpu_free_memory[slot] -= sign * p.gpus.memory_each;
    }
    w.whole_free = 0;
    w.partial_count = 0;
    w.max_free_milli = 0;
    for (int32_t i = 0; i < w.gpu_count; ++i) {
      int32_t free = table_.gpu_free_milli[static_cast<size_t>(w.gpu_begin + i)];
      w.max_free_milli = std::max(w.max_free_milli, free);
      if (free == kGpuMilliWhole) {
        w.whole_free++;
      } else if (free > 0) {
        w.partial_count++;
      }
    }
    index_.Update(p.node, w.whole_free, w.partial_count > 0);
  }
  for (PlacementListener* listener : listeners_) {
    listener->OnPlacement(*this, task_id, p.node, p.gpus, sign);
  }
  JobWork& job = mutable_job(task.job);
  job.ready += sign;
  job.placed += sign;
  QueueWork& queue = queues_[c.job(task.job).queue];
  if (sign > 0) {
    job.allocated.Add(accounted);
    queue.allocated.Add(accounted);
  } else {
    job.allocated.Subtract(accounted);
    queue.allocated.Subtract(accounted);
  }
}

void Session::RecordBind(TaskId task, const Placement& placement) {
  BindDecision bind;
  bind.task = task;
  bind.job = cluster().task(task).job;
  bind.node = placement.node;
  bind.gpus = placement.gpus.devices;
  decisions_.binds.push_back(std::move(bind));
}

void Session::ForgetUnschedulableSince(size_t mark) {
  for (size_t i = mark; i < unschedulable_log_.size(); ++i)
    unschedulable_[unschedulable_log_[i]] = 0;
  unschedulable_log_.resize(std::min(mark, unschedulable_log_.size()));
}

Statement Session::NewStatement() {
  return Statement(this);
}

}  // namespace gantry

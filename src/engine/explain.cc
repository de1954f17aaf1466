#include "engine/explain.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "engine/dra/shortfall.h"
#include "engine/statement.h"
#include "model/quantity.h"

namespace gantry {
namespace {

std::string Amount(ResourceId r, Milli amount) {
  return FormatQuantity(amount, /*binary=*/r == kMemory);
}

std::string Plural(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A room rejection: the node passed the rules, only its free room is short.
bool RoomRejection(FilterCode code) {
  return code == FilterCode::kInsufficient || code == FilterCode::kInsufficientGpus ||
         code == FilterCode::kNoGpuShareFits || code == FilterCode::kTooManyPods;
}

// The label key's last part, for a person: "example.com/leaf" is "leaf".
std::string LevelWord(const std::string& key) {
  const size_t slash = key.rfind('/');
  return slash == std::string::npos ? key : key.substr(slash + 1);
}

// "cpu 4, memory 8Gi, 2 GPUs": what one task asks for, in short.
std::string AskOf(const TaskSpec& spec) {
  std::string out;
  for (const ResourceVector::Entry& e : spec.requests.entries()) {
    if (e.id == kPods || e.amount == 0) continue;
    out += (out.empty() ? "" : ", ") + ResourceName(e.id) + " " + Amount(e.id, e.amount);
  }
  if (spec.gpu.count > 0) {
    out += (out.empty() ? "" : ", ") + Plural(spec.gpu.count, "GPU", "GPUs");
  } else if (spec.gpu.shared()) {
    out += (out.empty() ? "" : ", ") + std::string("a shared GPU");
  }
  return out;
}

// Explains jobs of one session, keeping what the nodes say about each spec (the same for
// all its tasks, in the session's final view).
class PendingExplainer {
 public:
  PendingExplainer(Session& session, const Decisions& decisions)
      : session_(session), decisions_(decisions) {}
  PendingExplanation Explain(JobId job, const std::string& reason,
                             const std::vector<Reservation>& reservations);

 private:
  struct Rejections {
    int64_t looked_at = 0;
    int64_t fit = 0;
    std::map<std::string, int64_t> nodes_by_reason;
  };
  struct SpecFacts {
    Rejections rejections;
    std::vector<NodeShortfall> closest;
  };
  const SpecFacts& FactsOf(SpecId spec_id);
  Rejections CountRejections(const TaskSpec& spec, SpecId spec_id);
  std::vector<NodeShortfall> ClosestNodes(const TaskSpec& spec, SpecId spec_id);
  // How many of `tasks` (in order) the free room of `scope` takes one after the other, up
  // to `wanted`: placed in a statement that is discarded.
  int32_t PlaceableNow(const std::vector<TaskId>& tasks, int32_t wanted, const SearchScope& scope);
  std::optional<QueueLimitFact> QueueLimitOf(JobId job);
  // Why the claims of `spec` get no devices on node `n` (dra/shortfall.h), and how many
  // devices short it is (nodes where none match last); "" where each request alone fits.
  std::pair<std::string, int64_t> DeviceShortfall(const TaskSpec& spec, NodeId n);
  // The devices taken once the session's binds are done: every claim's, and the binds'.
  const dra::AllocatedState& DevicesTaken();

  Session& session_;
  const Decisions& decisions_;
  dra::AllocatedState claims_taken_;  // where the inputs keep none (DeviceInputs::allocated)
  std::optional<dra::AllocatedState> devices_taken_;
  std::unordered_map<SpecId, SpecFacts> facts_;
};

// As DiagnoseNoNode counts (without its node-name PreFilter): a node rejected for room
// counts once for each resource it is short of, as kube-scheduler's NodeResourcesFit says.
PendingExplainer::Rejections PendingExplainer::CountRejections(const TaskSpec& spec,
                                                               SpecId spec_id) {
  const ClusterState& c = session_.cluster();
  Rejections out;
  for (NodeId n = 0; n < c.nodes().size(); ++n) {
    if (session_.free_node(n).removed) continue;
    ++out.looked_at;
    const FilterResult r = session_.Filter(spec, spec_id, n);
    if (r.ok()) {
      ++out.fit;
      continue;
    }
    if (r.code == FilterCode::kInsufficient || r.code == FilterCode::kTooManyPods) {
      bool counted = false;
      if (session_.free_node(n).pods_full()) {
        out.nodes_by_reason[DescribeFilter(FilterResult::Fail(FilterCode::kTooManyPods), spec)]++;
        counted = true;
      }
      for (const ResourceVector::Entry& e : spec.requests.entries()) {
        if (e.id == kPods || e.amount <= session_.free_now(n, e.id)) continue;
        out.nodes_by_reason[DescribeFilter(FilterResult::Fail(FilterCode::kInsufficient, e.id),
                                           spec)]++;
        counted = true;
      }
      if (counted) continue;
    }
    out.nodes_by_reason[DescribeFilter(r, spec)]++;
  }
  return out;
}

const dra::AllocatedState& PendingExplainer::DevicesTaken() {
  if (devices_taken_) return *devices_taken_;
  const DeviceInputs& in = session_.devices();
  const dra::AllocatedState* base = in.allocated;
  if (base == nullptr) {
    for (const auto& [key, claim] : *in.claims) {
      if (claim.allocation) claims_taken_.Add(*claim.allocation);
    }
    base = &claims_taken_;
  }
  devices_taken_.emplace(base);
  for (const BindDecision& bind : decisions_.binds) {
    for (const std::optional<dra::Allocation>& allocation : bind.devices) {
      if (allocation) devices_taken_->Add(*allocation);
    }
    if (bind.extended_devices) devices_taken_->Add(*bind.extended_devices);
  }
  return *devices_taken_;
}

std::pair<std::string, int64_t> PendingExplainer::DeviceShortfall(const TaskSpec& spec, NodeId n) {
  const DeviceInputs& in = session_.devices();
  if (in.inventory == nullptr || in.claims == nullptr || in.verdicts == nullptr) return {};
  std::vector<const dra::ResourceClaim*> claims;
  for (const std::string& key : spec.resource_claims) {
    auto it = in.claims->find(key);
    if (it != in.claims->end()) claims.push_back(&it->second);
  }
  const Node& node = session_.cluster().node(n);
  dra::Shortfall shortfall = dra::DescribeShortfall(
      *in.inventory, dra::NodeRef{node.name, node.labels}, claims, DevicesTaken(), *in.verdicts);
  return {std::move(shortfall.words), shortfall.devices_short};
}

std::vector<NodeShortfall> PendingExplainer::ClosestNodes(const TaskSpec& spec, SpecId spec_id) {
  const ClusterState& c = session_.cluster();
  // Closest first: fewest whole GPUs short, then fewest resources short, then the least
  // short relative to what it asks (per mille, summed), then node id.
  using Key = std::tuple<int64_t, int64_t, int64_t, NodeId>;
  std::vector<std::pair<Key, std::string>> close;
  for (NodeId n = 0; n < c.nodes().size(); ++n) {
    if (session_.free_node(n).removed) continue;
    const FilterResult r = session_.Filter(spec, spec_id, n);
    if (r.code == FilterCode::kDeviceClaimsUnallocatable) {
      auto [lacks, devices_short] = DeviceShortfall(spec, n);
      if (!lacks.empty()) close.emplace_back(Key{devices_short, 0, 0, n}, std::move(lacks));
      continue;
    }
    if (!RoomRejection(r.code)) continue;
    // Too small even when empty: never close, however little it lacks now.
    if (!FilterByCapacity(spec.requests, spec.gpu, c.node(n), spec.device_backed).ok()) continue;
    std::string lacks;
    int64_t gpus_short = 0, resources_short = 0, relative = 0;
    if (spec.gpu.count > 0) {
      const NodeGpus gpus = session_.free_gpus(n);
      int64_t whole_free = 0;
      for (size_t i = 0; i < gpus.devices.size(); ++i) {
        if (gpus.free_milli[i] >= 1000 && spec.gpu.AllowsModel(gpus.devices[i].model)) {
          ++whole_free;
        }
      }
      if (whole_free < spec.gpu.count) {
        gpus_short = spec.gpu.count - whole_free;
        lacks =
            Plural(whole_free, "GPU", "GPUs") + " free, needs " + std::to_string(spec.gpu.count);
      }
    } else if (r.code == FilterCode::kNoGpuShareFits) {
      gpus_short = 1;
      lacks = "no single GPU has the share it asks";
    }
    for (const ResourceVector::Entry& e : spec.requests.entries()) {
      const Milli free = session_.free_now(n, e.id);
      if (e.amount <= free) continue;
      ++resources_short;
      relative += (e.amount - free) * 1000 / e.amount;
      lacks +=
          (lacks.empty() ? "" : ", ") +
          (e.id == kPods ? std::string("pod limit reached")
                         : ResourceName(e.id) + " " + Amount(e.id, e.amount - free) + " short");
    }
    if (session_.free_node(n).pods_full() && lacks.find("pod limit") == std::string::npos) {
      lacks += (lacks.empty() ? "" : ", ") + std::string("pod limit reached");
      ++resources_short;
    }
    if (lacks.empty()) lacks = DescribeFilter(r, spec);
    close.emplace_back(Key{gpus_short, resources_short, relative, n}, std::move(lacks));
  }
  const size_t keep = std::min(close.size(), kClosestNodes);
  std::partial_sort(close.begin(), close.begin() + static_cast<std::ptrdiff_t>(keep), close.end(),
                    [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<NodeShortfall> out;
  for (size_t i = 0; i < keep; ++i) out.push_back({std::get<3>(close[i].first), close[i].second});
  return out;
}

const PendingExplainer::SpecFacts& PendingExplainer::FactsOf(SpecId spec_id) {
  auto it = facts_.find(spec_id);
  if (it != facts_.end()) return it->second;
  const TaskSpec& spec = session_.cluster().spec(spec_id);
  SpecFacts facts;
  facts.rejections = CountRejections(spec, spec_id);
  // Close matters only when nothing fits: else the nodes that fit are the answer.
  if (facts.rejections.fit == 0) facts.closest = ClosestNodes(spec, spec_id);
  return facts_.emplace(spec_id, std::move(facts)).first->second;
}

int32_t PendingExplainer::PlaceableNow(const std::vector<TaskId>& tasks, int32_t wanted,
                                       const SearchScope& scope) {
  Statement trial = session_.NewStatement();
  int32_t placed = 0;
  std::string why_not;
  for (TaskId t : tasks) {
    if (placed >= wanted) break;
    Placement p;
    if (!session_.FindPlacement(t, scope, &p, &why_not)) continue;
    if (trial.Allocate(t, std::move(p)).ok()) ++placed;
  }
  trial.Discard();
  return placed;
}

std::optional<QueueLimitFact> PendingExplainer::QueueLimitOf(JobId job_id) {
  const ClusterState& c = session_.cluster();
  const Job& job = c.job(job_id);
  const JobWork& work = session_.job(job_id);
  // What it needs to start, as the proportion plugin counts it: its first
  // (minMember - ready) tasks, at least one.
  ResourceVector need;
  int32_t missing = std::max(job.min_member - work.ready, 1);
  for (TaskId t : work.unplaced) {
    if (missing-- <= 0) break;
    const TaskSpec& spec = c.spec_of(t);
    const int32_t n_gpus = spec.gpu.shared() ? 1 : spec.gpu.count;
    need.Add(ClusterState::Accounted(spec, n_gpus, c.EstimatedGpuShare(spec.gpu)));
  }
  for (QueueId q = job.queue; q != kNone; q = c.queue(q).parent) {
    const Queue& queue = c.queue(q);
    if (queue.capability.empty()) continue;
    ResourceVector used;  // what the queue's subtree holds
    for (QueueId x = 0; x < c.queues().size(); ++x) {
      for (QueueId up = x; up != kNone; up = c.queue(up).parent) {
        if (up != q) continue;
        used.Add(session_.queue(x).allocated);
        break;
      }
    }
    ResourceVector total = used;
    total.Add(need);
    const int64_t over = total.FirstExceeding(queue.capability, /*named_only=*/true);
    if (over < 0) continue;
    const auto r = static_cast<ResourceId>(over);
    return QueueLimitFact{q, r, used.Get(r), queue.capability.Get(r), need.Get(r)};
  }
  return std::nullopt;
}

PendingExplanation PendingExplainer::Explain(JobId job_id, const std::string& reason,
                                             const std::vector<Reservation>& reservations) {
  const ClusterState& c = session_.cluster();
  const Job& job = c.job(job_id);
  const JobWork& work = session_.job(job_id);
  PendingExplanation out;
  // A capability holds it only when a plugin said so (proportion's words name it).
  if (reason.find("capability") != std::string::npos) out.queue_limit = QueueLimitOf(job_id);

  // The task the nodes are asked about: the first that fits no node now, else the first.
  SpecId asked = c.task(work.unplaced.front()).spec;
  for (TaskId t : work.unplaced) {
    const SpecId spec = c.task(t).spec;
    if (FactsOf(spec).rejections.fit == 0) {
      asked = spec;
      break;
    }
  }
  const SpecFacts& facts = FactsOf(asked);
  out.nodes_looked_at = facts.rejections.looked_at;
  out.nodes_fit = facts.rejections.fit;
  for (const auto& [words, nodes] : facts.rejections.nodes_by_reason) {
    out.predicates.push_back({words, nodes});
  }
  std::stable_sort(
      out.predicates.begin(), out.predicates.end(),
      [](const PredicateCount& a, const PredicateCount& b) { return a.nodes > b.nodes; });
  out.closest = facts.closest;

  out.min_member = job.min_member;
  out.running = work.ready;
  const int32_t unplaced = static_cast<int32_t>(work.unplaced.size());
  const int32_t wanted = job.min_member > work.ready ? job.min_member - work.ready : unplaced;
  out.job = job_id;
  out.still_needed = wanted;
  std::string domain_note;
  const int level = job.topology.required ? session_.topology().LevelOf(job.topology.level) : -1;
  if (level >= 0) {
    // Required to stay in one domain: the domain whose room takes the most of them.
    int32_t best = -1;
    for (const TopologyDomain& d : session_.topology().At(level)) {
      const int32_t n = PlaceableNow(work.unplaced, wanted, SearchScope{&d.nodes});
      if (n > best) best = n, domain_note = d.name;
      if (best >= wanted) break;
    }
    out.placeable_now = std::max(best, 0);
  } else {
    out.placeable_now = PlaceableNow(work.unplaced, wanted, SearchScope{});
  }

  for (const Reservation& r : reservations) {
    if (r.job == job_id) out.reserved_nodes = r.nodes;
  }

  // What it would take, the first thing that holds it first.
  if (out.queue_limit) {
    const QueueLimitFact& q = *out.queue_limit;
    out.would_take = "queue " + c.queue(q.queue).name + "'s limit on " + ResourceName(q.resource) +
                     " raised by " + Amount(q.resource, q.used + q.needs - q.limit);
  } else if (out.placeable_now < wanted) {
    const int32_t short_by = wanted - out.placeable_now;
    const TaskSpec& spec = c.spec(asked);
    std::string where = level >= 0 ? " in one " + LevelWord(job.topology.level) + " domain" : "";
    if (level >= 0 && !domain_note.empty() && out.placeable_now > 0) {
      where += " (" + domain_note + " has room for " + std::to_string(out.placeable_now) + ")";
    }
    if (spec.gpu.count > 0) {
      out.would_take = Plural(short_by, "more node", "more nodes") + " with " +
                       std::to_string(spec.gpu.count) + " free GPUs" + where;
    } else if (facts.closest.empty() && facts.rejections.fit == 0 && level < 0) {
      out.would_take = "a node that its rules allow (every node is ruled out, see the predicates)";
    } else {
      out.would_take =
          "room for " + Plural(short_by, "more pod", "more pods") + " of " + AskOf(spec) + where;
    }
  }
  return out;
}

}  // namespace

std::vector<PendingExplanation> ExplainPending(Session& session, const Decisions& decisions,
                                               size_t max_jobs) {
  PendingExplainer explainer(session, decisions);
  std::vector<PendingExplanation> out;
  for (size_t i = 0; i < decisions.pending.size() && i < max_jobs; ++i) {
    const PendingJob& p = decisions.pending[i];
    if (session.job(p.job).unplaced.empty()) continue;
    out.push_back(explainer.Explain(p.job, p.reason, decisions.reservations));
  }
  return out;
}

}  // namespace gantry

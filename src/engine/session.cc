#include "engine/session.h"

#include <algorithm>

namespace gantry {

Session::Session(const Snapshot& snapshot, const Policy& policy, SessionOptions options)
    : snapshot_(snapshot),
      policy_(policy),
      options_(options),
      rng_(options.seed),
      topology_(snapshot.cluster()),
      state_(snapshot.cluster(), snapshot.node_table(), policy.jobs_wait_for_admission()),
      plugins_(policy, snapshot.cluster()),
      search_(*this, state_, plugins_, policy.config(), options.seed, rng_) {
  // Task order needs the plugins, which exist by now.
  for (JobId job : state_.pending_jobs()) {
    state_.SortUnplaced(job, [this](TaskId a, TaskId b) { return CompareTasks(a, b) < 0; });
  }
  plugins_.Open(*this);
}

Session::~Session() = default;

Decisions Session::Run() {
  for (const auto& action : policy_.actions()) action->Execute(*this);
  Decisions out = std::move(decisions_);
  decisions_ = Decisions{};
  for (JobId id : state_.pending_jobs()) {
    const JobWork& w = state_.job(id);
    if (w.unplaced.empty()) continue;
    PendingJob pending;
    pending.job = id;
    pending.pending_tasks = static_cast<int32_t>(w.unplaced.size());
    pending.reason =
        w.reason.empty() ? "not considered: no action of this session placed it" : w.reason;
    pending.hold = w.hold;
    out.pending.push_back(std::move(pending));
  }
  // Few notes (one per starving queue head), pending jobs in id order: a search each.
  for (auto& [job, note] : reservation_notes_) {
    auto it = std::lower_bound(out.pending.begin(), out.pending.end(), job,
                               [](const PendingJob& p, JobId j) { return p.job < j; });
    if (it != out.pending.end() && it->job == job) it->reason += "; " + note;
  }
  reservation_notes_.clear();
  if (state_.HasReservations()) {
    for (NodeId node = 0; node < static_cast<NodeId>(cluster().nodes().size()); ++node) {
      const JobId job = state_.ReservedFor(node);
      if (job == kNone) continue;
      auto it = std::lower_bound(out.reservations.begin(), out.reservations.end(), job,
                                 [](const Reservation& r, JobId j) { return r.job < j; });
      if (it == out.reservations.end() || it->job != job) {
        it = out.reservations.insert(it, {job, {}});
      }
      it->nodes.push_back(node);
    }
  }
  // After the pending jobs, so that a plugin may say more about why they wait.
  plugins_.Close(*this, &out);
  return out;
}

ResourceVector Session::free_vector(NodeId id) const {
  ResourceVector out;
  for (ResourceId r = 0; r < state_.resource_count(); ++r) out.Set(r, free_now(id, r));
  return out;
}

void Session::ApplyChange(StatementKey, Change change, TaskId task, const Placement& placement,
                          uint64_t unschedulable_mark, int sign) {
  StateChange told = StateChange::kAllocate;
  switch (change) {
    case Change::kAllocate:
      state_.Allocate(task, placement, sign);
      break;
    case Change::kPipeline:
      state_.Pipeline(task, placement, sign);
      told = StateChange::kPipeline;
      break;
    case Change::kEvict:
      state_.Evict(task, sign);
      told = StateChange::kEvict;
      break;
    case Change::kHold:  // plugins are told of it as an allocation
      state_.Hold(task, placement, sign);
      break;
  }
  plugins_.Notify(*this, told, task, placement.node, placement.gpus, sign);
  // Room came back: verdicts that rested on its absence are void. Undoing a placement
  // voids those made since it; an eviction may void any.
  const bool gives_room = (change == Change::kEvict) == (sign > 0);
  if (gives_room) {
    search_.ForgetUnschedulableSince(change == Change::kEvict ? 0 : unschedulable_mark);
  }
}

bool Session::AdmitJob(JobId job, std::string* reason) {
  PendingHold hold = PendingHold::kNone;
  if (!plugins_.Admit(*this, job, reason, &hold)) {
    SetJobReason(job, "not admitted: " + *reason);
    SetJobHold(job, hold);
    return false;
  }
  state_.AdmitJob(job);
  return true;
}

void Session::NoteReservation(JobId job, std::string note) {
  reservation_notes_.emplace_back(job, std::move(note));
}

}  // namespace gantry

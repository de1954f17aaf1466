#include "engine/session.h"

#include <algorithm>

#include "engine/statement.h"

namespace gantry {

Session::Session(const Snapshot& snapshot, const Policy& policy, SessionOptions options)
    : snapshot_(snapshot),
      policy_(policy),
      options_(options),
      rng_(options.seed),
      topology_(snapshot.cluster()),
      state_(snapshot.cluster(), snapshot.node_table(), policy.jobs_wait_for_admission()),
      plugins_(policy),
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
    out.pending.push_back(std::move(pending));
  }
  // Few notes (one per starving queue head), pending jobs in id order: a search each.
  for (auto& [job, note] : reservation_notes_) {
    auto it = std::lower_bound(out.pending.begin(), out.pending.end(), job,
                               [](const PendingJob& p, JobId j) { return p.job < j; });
    if (it != out.pending.end() && it->job == job) it->reason += "; " + note;
  }
  reservation_notes_.clear();
  for (NodeId node = 0; node < static_cast<NodeId>(reserved_.size()); ++node) {
    const JobId job = reserved_[node];
    if (job == kNone) continue;
    auto it = std::lower_bound(out.reservations.begin(), out.reservations.end(), job,
                               [](const Reservation& r, JobId j) { return r.job < j; });
    if (it == out.reservations.end() || it->job != job) it = out.reservations.insert(it, {job, {}});
    it->nodes.push_back(node);
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

bool Session::AdmitJob(JobId job, std::string* reason) {
  if (!plugins_.Admit(*this, job, reason)) {
    SetJobReason(job, "not admitted: " + *reason);
    return false;
  }
  state_.AdmitJob(job);
  return true;
}

Statement Session::NewStatement() {
  return Statement(this);
}

void Session::NoteReservation(JobId job, std::string note) {
  reservation_notes_.emplace_back(job, std::move(note));
}

void Session::Reserve(NodeId node, JobId job) {
  if (reserved_.empty()) reserved_.assign(cluster().nodes().size(), kNone);
  reserved_[node] = job;
}

}  // namespace gantry

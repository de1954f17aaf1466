#include "daemon/explain_api.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "explain/explanation_json.h"

namespace gantry {
namespace {

ExplainAnswer Error(int status, const std::string& message) {
  return {status, nlohmann::json{{"error", message}}.dump()};
}

// "vc|team-a/train" -> ("PodGroup", "team-a/train"); "pod|team-a/p" -> ("Pod", "team-a/p").
std::pair<std::string, std::string> KindAndName(const std::string& job_key) {
  const size_t bar = job_key.find('|');
  if (bar == std::string::npos) return {"Pod", job_key};
  const std::string api = job_key.substr(0, bar);
  return {api == "vc" || api == "xk" ? "PodGroup" : "Pod", job_key.substr(bar + 1)};
}

}  // namespace

std::shared_ptr<const ExplainIndex> BuildExplainIndex(
    const ClusterState& c, const Decisions& decisions,
    const std::vector<PendingExplanation>& explanations, const std::string& scheduler_name) {
  auto out = std::make_shared<ExplainIndex>();
  out->scheduler_name = scheduler_name;
  std::unordered_map<JobId, const PendingJob*> pending;
  for (const PendingJob& p : decisions.pending) pending[p.job] = &p;
  std::unordered_map<JobId, const PendingExplanation*> explained;
  for (const PendingExplanation& e : explanations) explained[e.job] = &e;
  // Per job, once: pending with its explanation (or reason), else not pending.
  std::unordered_map<JobId, nlohmann::ordered_json> of_job;
  auto job_answer = [&](JobId id) -> const nlohmann::ordered_json& {
    auto [it, fresh] = of_job.try_emplace(id);
    if (!fresh) return it->second;
    nlohmann::ordered_json& j = it->second;
    auto p = pending.find(id);
    if (p != pending.end()) {
      auto e = explained.find(id);
      j = ExplanationJson(c, *p->second, e != explained.end() ? e->second : nullptr);
      j["state"] = "pending";
    } else {
      j = {{"state", "not pending"}};
    }
    j["job"] = KindAndName(c.job(id).name).second;
    return j;
  };
  for (TaskId t = 0; t < c.tasks().size(); ++t) {
    const Task& task = c.task(t);
    if (task.job == kNone || task.name.empty()) continue;  // a free slot
    const std::string& job_key = c.job(task.job).name;
    if (job_key.rfind("other|", 0) == 0) continue;  // another scheduler's pod
    nlohmann::ordered_json j;
    const size_t slash = task.name.find('/');
    j["kind"] = "Pod";
    j["namespace"] = slash == std::string::npos ? "" : task.name.substr(0, slash);
    j["name"] = task.name.substr(slash == std::string::npos ? 0 : slash + 1);
    if (task.state == TaskState::kRunning) {
      j["state"] = "bound";
      j["node"] = c.node(task.node).name;
      j["job"] = KindAndName(job_key).second;
    } else if (task.state == TaskState::kPending) {
      for (const auto& [field, value] : job_answer(task.job).items()) j[field] = value;
      if (j["state"] == "not pending") {  // its job is placed this cycle: binding
        j["state"] = "pending";
        j["reason"] = "placed in the last cycle, being bound";
      }
    } else {
      j["state"] = "finished";
    }
    out->pods.emplace(task.name, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  for (JobId id = 0; id < c.jobs().size(); ++id) {
    const Job& job = c.job(id);
    if (job.name.empty()) continue;  // a free slot
    const auto [kind, name] = KindAndName(job.name);
    if (kind != "PodGroup") continue;
    nlohmann::ordered_json j;
    const size_t slash = name.find('/');
    j["kind"] = "PodGroup";
    j["namespace"] = name.substr(0, slash);
    j["name"] = slash == std::string::npos ? name : name.substr(slash + 1);
    for (const auto& [field, value] : job_answer(id).items()) j[field] = value;
    if (j["state"] == "not pending") {
      j["running"] = job.running;
      j["pods"] = job.tasks.size();
    }
    out->groups.emplace(name, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return out;
}

ExplainAnswer ExplainBoard::Answer(const std::string& path) const {
  const std::string prefix = kExplainPrefix;
  if (path.compare(0, prefix.size(), prefix) != 0) return Error(404, "not an explain path");
  const std::string rest = path.substr(prefix.size());
  const size_t slash = rest.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == rest.size() ||
      rest.find('/', slash + 1) != std::string::npos) {
    return Error(400, "expected /api/explain/NAMESPACE/NAME (a pod or a PodGroup)");
  }
  const std::shared_ptr<const ExplainIndex> index = Latest();
  if (index == nullptr) {
    return Error(503,
                 "this replica has not run a scheduling cycle yet (it may be the standby, "
                 "which does not schedule); try again");
  }
  if (auto it = index->pods.find(rest); it != index->pods.end()) return {200, it->second};
  if (auto it = index->groups.find(rest); it != index->groups.end()) return {200, it->second};
  return Error(404, "no pod or PodGroup " + rest + " that gantry schedules (schedulerName " +
                        index->scheduler_name +
                        ") was known at its last cycle: check the namespace and the name, that "
                        "the pod names this scheduler, and its PodScheduled condition (a gated "
                        "or unreadable pod, or one whose PodGroup is missing, says why there)");
}

void RegisterExplainApi(PageServer& server, const ExplainBoard& board) {
  server.Handle("/api/explain", [&board](const ApiRequest& request) {
    const ExplainAnswer answer = board.Answer(request.path);
    return ApiResponse{answer.status, "application/json", answer.body};
  });
}

}  // namespace gantry

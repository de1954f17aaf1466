#include "sim/decisions_json.h"

namespace gantry {

nlohmann::ordered_json DecisionsJson(const ClusterState& c, const Decisions& d) {
  nlohmann::ordered_json out;
  out["binds"] = nlohmann::ordered_json::array();
  for (const BindDecision& b : d.binds) {
    out["binds"].push_back({{"job", c.job(b.job).name},
                            {"role", c.spec_of(b.task).role},
                            {"task", c.task(b.task).name},
                            {"node", c.node(b.node).name},
                            {"gpus", b.gpus}});
  }
  out["evictions"] = nlohmann::ordered_json::array();
  for (const EvictDecision& e : d.evictions) {
    out["evictions"].push_back({{"job", c.job(e.job).name},
                                {"task", c.task(e.task).name},
                                {"node", c.node(e.node).name},
                                {"reason", e.reason},
                                {"cause", std::string(EvictionCauseName(e.cause))}});
  }
  out["pipelined"] = nlohmann::ordered_json::array();
  for (const PipelineDecision& p : d.pipelined) {
    out["pipelined"].push_back({{"job", c.job(p.job).name},
                                {"task", c.task(p.task).name},
                                {"node", c.node(p.node).name},
                                {"gpus", p.gpus}});
  }
  out["pending"] = nlohmann::ordered_json::array();
  for (const PendingJob& p : d.pending) {
    out["pending"].push_back(
        {{"job", c.job(p.job).name}, {"tasks", p.pending_tasks}, {"reason", p.reason}});
  }
  return out;
}

}  // namespace gantry

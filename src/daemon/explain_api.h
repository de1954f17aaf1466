// `/api/explain/NAMESPACE/NAME` on the page server: why a pod or a PodGroup is pending, as
// the scheduler's last explaining cycle saw it (engine/explain.h, explain/explanation_json.h).
// The scheduler thread builds an ExplainIndex (BuildExplainIndex, from the cluster model
// and the cycle's decisions) and publishes it; the server's threads answer from the
// published index only, never from the live cache.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/page_server.h"
#include "engine/decisions.h"
#include "engine/explain.h"
#include "model/cluster.h"

namespace gantry {

// Per "namespace/name", the JSON answer (serialized once, at publication).
struct ExplainIndex {
  std::unordered_map<std::string, std::string> pods;
  std::unordered_map<std::string, std::string> groups;
  std::string scheduler_name;  // for the message about an unknown object
};

// Per pod of the model (its tasks are named "namespace/name") and per PodGroup (jobs keyed
// "vc|namespace/name" or "xk|namespace/name"): pending with the cycle's explanation when it
// has one, else its reason; bound to a node; or, for a group, how many of its pods run. A
// pod the model does not hold (gated, unreadable, held with its group) is not in it.
std::shared_ptr<const ExplainIndex> BuildExplainIndex(
    const ClusterState& cluster, const Decisions& decisions,
    const std::vector<PendingExplanation>& explanations, const std::string& scheduler_name);

// An HTTP answer: status and JSON body.
struct ExplainAnswer {
  int status = 200;
  std::string body;
};

class ExplainBoard {
 public:
  void Publish(std::shared_ptr<const ExplainIndex> index) {
    std::lock_guard<std::mutex> lock(mu_);
    index_ = std::move(index);
  }
  std::shared_ptr<const ExplainIndex> Latest() const {
    std::lock_guard<std::mutex> lock(mu_);
    return index_;
  }
  // The answer for `path` ("/api/explain/NAMESPACE/NAME"): a pod of that name first, else
  // a PodGroup; 404 with a message when neither is known, 400 for a path without both
  // parts, 503 before the first explaining cycle.
  ExplainAnswer Answer(const std::string& path) const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ExplainIndex> index_;
};

inline constexpr const char* kExplainPrefix = "/api/explain/";

// Serves /api/explain/NAMESPACE/NAME from `board`. REQUIRES: `board` outlives the server.
void RegisterExplainApi(PageServer& server, const ExplainBoard& board);

}  // namespace gantry

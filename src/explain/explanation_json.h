// A pending job's explanation (engine/explain.h) as JSON, by name, and the same in plain
// words for a person. The daemon's /api/explain serves the JSON, `gantry explain` prints the
// words, and scenarios (expect.explain) check them: one format, one set of words. In a layer
// of its own (src/explain/, on the engine and the model only) so that the daemon and the
// simulator share it without either depending on the other.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/decisions.h"
#include "engine/explain.h"
#include "model/cluster.h"

namespace gantry {

// {"job", "pendingTasks", "reason"} and, when the session explained it, "queueLimit",
// "nodes" {"lookedAt", "fit"}, "predicates" [{"reason", "nodes"}], "closestNodes"
// [{"node", "lacks"}], "gang" {"minMember", "running", "placeableNow", "short"},
// "reservedNodes" [names], "wouldTake". Quantities are Kubernetes quantity strings.
// `explanation`: of that job (engine/explain.h), or null when the session did not explain it.
nlohmann::ordered_json ExplanationJson(const ClusterState& cluster, const PendingJob& pending,
                                       const PendingExplanation* explanation);

// The explanation in plain words, one fact a line, from the JSON above (as served, so
// that a client prints what the daemon said). `name`: how to call the job ("team-a/train").
std::string ExplanationText(const nlohmann::json& explanation, const std::string& name);

}  // namespace gantry

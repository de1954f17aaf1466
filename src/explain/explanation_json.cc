#include "explain/explanation_json.h"

#include <algorithm>

#include "model/quantity.h"

namespace gantry {
namespace {

std::string Amount(ResourceId r, Milli amount) {
  return FormatQuantity(amount, /*binary=*/r == kMemory);
}

std::string Str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Int(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

nlohmann::ordered_json ExplanationJson(const ClusterState& c, const PendingJob& p,
                                       const PendingExplanation* explanation) {
  nlohmann::ordered_json out;
  out["job"] = c.job(p.job).name;
  out["pendingTasks"] = p.pending_tasks;
  out["reason"] = p.reason;
  if (explanation == nullptr) return out;
  const PendingExplanation& e = *explanation;
  if (e.queue_limit) {
    const QueueLimitFact& q = *e.queue_limit;
    out["queueLimit"] = {{"queue", c.queue(q.queue).name},
                         {"resource", ResourceName(q.resource)},
                         {"used", Amount(q.resource, q.used)},
                         {"limit", Amount(q.resource, q.limit)},
                         {"needs", Amount(q.resource, q.needs)}};
  }
  out["nodes"] = {{"lookedAt", e.nodes_looked_at}, {"fit", e.nodes_fit}};
  out["predicates"] = nlohmann::ordered_json::array();
  for (const PredicateCount& pc : e.predicates) {
    out["predicates"].push_back({{"reason", pc.words}, {"nodes", pc.nodes}});
  }
  out["closestNodes"] = nlohmann::ordered_json::array();
  for (const NodeShortfall& n : e.closest) {
    out["closestNodes"].push_back({{"node", c.node(n.node).name}, {"lacks", n.lacks}});
  }
  out["gang"] = {{"minMember", e.min_member},
                 {"running", e.running},
                 {"placeableNow", e.placeable_now},
                 {"short", std::max(e.still_needed - e.placeable_now, 0)}};
  out["reservedNodes"] = nlohmann::ordered_json::array();
  for (NodeId n : e.reserved_nodes) out["reservedNodes"].push_back(c.node(n).name);
  out["wouldTake"] = e.would_take;
  return out;
}

std::string ExplanationText(const nlohmann::json& j, const std::string& name) {
  const int64_t tasks = Int(j, "pendingTasks");
  std::string out = name + " is pending (" + std::to_string(tasks) +
                    (tasks == 1 ? " pod" : " pods") + " not placed).\n";
  out += "Why: " + Str(j, "reason") + "\n";
  if (!j.contains("nodes")) return out;  // the scheduler did not explain it further
  if (auto q = j.find("queueLimit"); q != j.end() && q->is_object()) {
    out += "Queue limit: queue " + Str(*q, "queue") + " uses " + Str(*q, "used") + " of its " +
           Str(*q, "limit") + " " + Str(*q, "resource") + " (capability); this job needs " +
           Str(*q, "needs") + " more to start.\n";
  } else {
    out += "Queue limit: none holds it.\n";
  }
  const nlohmann::json& nodes = j["nodes"];
  out += "Nodes: " + std::to_string(Int(nodes, "fit")) + " of " +
         std::to_string(Int(nodes, "lookedAt")) + " fit one of its pods now";
  const nlohmann::json& predicates = j.value("predicates", nlohmann::json::array());
  if (predicates.is_array() && !predicates.empty()) {
    out += "; rejected by:\n";
    for (const nlohmann::json& pc : predicates) {
      out += "  " + std::to_string(Int(pc, "nodes")) + " node(s): " + Str(pc, "reason") + "\n";
    }
  } else {
    out += ".\n";
  }
  const nlohmann::json& closest = j.value("closestNodes", nlohmann::json::array());
  if (closest.is_array() && !closest.empty()) {
    out += "Closest nodes:\n";
    for (const nlohmann::json& n : closest) {
      out += "  " + Str(n, "node") + ": " + Str(n, "lacks") + "\n";
    }
  }
  if (auto g = j.find("gang"); g != j.end() && g->is_object()) {
    const int64_t min_member = Int(*g, "minMember");
    if (min_member > 1) {
      out += "Gang: needs " + std::to_string(min_member) + " pods together (minMember), " +
             std::to_string(Int(*g, "running")) + " running, room for " +
             std::to_string(Int(*g, "placeableNow")) +
             " more now: " + std::to_string(Int(*g, "short")) + " short.\n";
    } else {
      out += "Gang: none (one pod at a time); room for it now: " +
             std::string(Int(*g, "placeableNow") > 0 ? "yes" : "no") + ".\n";
    }
  }
  const nlohmann::json& reserved = j.value("reservedNodes", nlohmann::json::array());
  if (reserved.is_array() && !reserved.empty()) {
    std::string names;
    for (const nlohmann::json& n : reserved) {
      names += (names.empty() ? "" : ", ") + (n.is_string() ? n.get<std::string>() : "?");
    }
    out += "Reservation: holds " + names + " against starvation.\n";
  } else {
    out += "Reservation: none.\n";
  }
  const std::string would_take = Str(j, "wouldTake");
  if (!would_take.empty()) out += "What it would take: " + would_take + ".\n";
  return out;
}

}  // namespace gantry

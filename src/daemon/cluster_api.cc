#include "daemon/cluster_api.h"

#include <functional>
#include <string>

namespace gantry {
namespace {

using nlohmann::json;

// Amounts in base units: cores, bytes, devices (GPUs summed with their fractions).
json ResourcesJson(const ResourceVector& v) {
  json out = json::object();
  for (const auto& e : v.entries()) {
    out[ResourceName(e.id)] = static_cast<double>(e.amount) / kMilliPerUnit;
  }
  return out;
}

// Its DRA devices and the claims that hold them; none when it has none.
json DraDevicesJson(const ClusterView& view, const std::string& node) {
  json out = json::array();
  if (!view.dra_devices) return out;
  auto it = view.dra_devices->find(node);
  if (it == view.dra_devices->end()) return out;
  for (const DeviceClaims::NodeDevice& d : it->second) {
    out.push_back({{"driver", d.driver}, {"pool", d.pool}, {"name", d.name}, {"claims", d.claims}});
  }
  return out;
}

json NodeJson(const NodeView& n, const ClusterView& view) {
  json gpus = json::array();
  for (const GpuCellView& cell : n.gpus) {
    json g = {{"state", GpuCellStateName(cell.state)}, {"usedMilli", cell.used_milli}};
    if (cell.state == GpuCellState::kMig) {
      json devices = json::array();
      for (const MigDeviceView& d : cell.mig)
        devices.push_back({{"profile", d.profile}, {"used", d.used}});
      g["mig"] = std::move(devices);
    }
    gpus.push_back(std::move(g));
  }
  json out = {{"name", n.name},
              {"gpuModel", n.gpu_model},
              {"unschedulable", n.unschedulable},
              {"cpu",
               {{"allocatable", static_cast<double>(n.cpu_allocatable) / kMilliPerUnit},
                {"used", static_cast<double>(n.cpu_used) / kMilliPerUnit}}},
              {"tasks", n.tasks},
              {"gpus", std::move(gpus)},
              {"draDevices", DraDevicesJson(view, n.name)},
              {"fragmentedMilli", n.fragmented_milli}};
  if (n.fgd_milli >= 0) out["fgdMilli"] = n.fgd_milli;
  return out;
}

json QueueJson(const QueueView& q, const ClusterView& view) {
  json history = json::array();
  if (view.history) {
    if (auto it = view.history->find(q.name); it != view.history->end()) {
      for (const QueueSample& s : it->second) {
        history.push_back({{"time", s.time},
                           {"deserved", s.deserved < 0 ? json(nullptr) : json(s.deserved)},
                           {"allocated", s.allocated},
                           {"pending", s.pending}});
      }
    }
  }
  return {{"name", q.name},
          {"parent", q.parent},
          {"weight", q.weight},
          {"deserved", q.has_deserved ? ResourcesJson(q.deserved) : json(nullptr)},
          {"allocated", ResourcesJson(q.allocated)},
          {"pending", ResourcesJson(q.pending)},
          {"pendingJobs", q.pending_jobs},
          {"pendingTasks", q.pending_tasks},
          {"runningTasks", q.running_tasks},
          {"history", std::move(history)}};
}

ApiHandler Endpoint(const ClusterViewBoard& board, json (*render)(const ClusterView&)) {
  return [&board, render](const ApiRequest&) {
    std::shared_ptr<const ClusterView> view = board.Latest();
    if (!view) {
      return ApiError(503,
                      "no view of the cluster yet: the scheduler publishes one once its "
                      "informers have synced");
    }
    // Names and reasons come from the cluster: bytes that are not UTF-8 are replaced,
    // not allowed to fail the answer.
    return ApiResponse{200, "application/json",
                       render(*view).dump(-1, ' ', false, json::error_handler_t::replace)};
  };
}

}  // namespace

json ClusterJson(const ClusterView& view) {
  json domains = json::array();
  for (const DomainView& d : view.domains) {
    json nodes = json::array();
    for (const auto& n : d.nodes) nodes.push_back(NodeJson(*n, view));
    domains.push_back({{"path", d.path}, {"nodes", std::move(nodes)}});
  }
  // Devices of nodes the view shows (a slice may name a node that is gone).
  int64_t dra_held = 0;
  int64_t dra_free = 0;
  if (view.dra_devices) {
    for (const DomainView& d : view.domains) {
      for (const auto& n : d.nodes) {
        auto it = view.dra_devices->find(n->name);
        if (it == view.dra_devices->end()) continue;
        for (const DeviceClaims::NodeDevice& device : it->second) {
          ++(device.claims.empty() ? dra_free : dra_held);
        }
      }
    }
  }
  return {{"time", view.time},
          {"topologyKeys", view.topology_keys},
          {"summary",
           {{"nodes", view.health.nodes},
            {"gpus", view.gpus},
            {"gpusAllocated", view.gpus_allocated},
            {"gpusFree", view.gpus_free},
            {"fragmentedGpus", static_cast<double>(view.fragmented_milli) / kGpuMilliWhole},
            {"draDevicesHeld", dra_held},
            {"draDevicesFree", dra_free}}},
          {"domains", std::move(domains)}};
}

json QueuesJson(const ClusterView& view) {
  json queues = json::array();
  for (const QueueView& q : view.queues) queues.push_back(QueueJson(q, view));
  return {{"time", view.time},
          {"sampleEverySeconds", kQueueSampleEveryS},
          {"queues", std::move(queues)}};
}

json PendingJson(const ClusterView& view) {
  json jobs = json::array();
  for (const PendingView& p : view.pending) {
    jobs.push_back({{"kind", p.kind},
                    {"name", p.name},
                    {"queue", p.queue},
                    {"priority", p.priority},
                    {"pendingTasks", p.pending_tasks},
                    {"runningTasks", p.running_tasks},
                    {"minMember", p.min_member},
                    {"submitted", p.submitted},
                    {"requests", ResourcesJson(p.pending)},
                    {"reason", p.reason}});
  }
  return {{"time", view.time}, {"total", view.pending_jobs}, {"jobs", std::move(jobs)}};
}

json EvictionsJson(const ClusterView& view) {
  json evictions = json::array();
  for (const EvictionView& e : view.evictions) {
    evictions.push_back({{"time", e.time},
                         {"pod", e.pod},
                         {"cause", e.cause},
                         {"result", e.result},
                         {"reason", e.reason}});
  }
  return {{"time", view.time}, {"evictions", std::move(evictions)}};
}

json HealthJson(const ClusterView& view) {
  const HealthView& h = view.health;
  return {{"time", view.time},
          {"leader", h.leader},
          {"cycles", h.cycles},
          {"lastCycleSeconds", h.last_cycle_s},
          {"meanCycleSeconds", h.mean_cycle_s},
          {"maxCycleSeconds", h.max_cycle_s},
          {"bindsPerSecond", h.binds_per_s},
          {"bindsTotal", h.binds_total},
          {"bindFailuresTotal", h.bind_failures_total},
          {"bindFailuresByReason", h.bind_failures_by_reason},
          {"evictionsTotal", h.evictions_total},
          {"pendingTasks", h.pending_tasks},
          {"nodes", h.nodes},
          {"viewBuildSeconds", h.view_build_s}};
}

void RegisterClusterApi(PageServer& server, const ClusterViewBoard& board) {
  server.Handle("/api/cluster", Endpoint(board, ClusterJson));
  server.Handle("/api/queues", Endpoint(board, QueuesJson));
  server.Handle("/api/pending", Endpoint(board, PendingJson));
  server.Handle("/api/evictions", Endpoint(board, EvictionsJson));
  server.Handle("/api/health", Endpoint(board, HealthJson));
}

}  // namespace gantry

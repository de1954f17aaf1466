// The page's JSON API (docs/live-page.md) over the scheduler's latest ClusterView:
//   /api/cluster    nodes and their GPUs, grouped by topology domain
//   /api/queues     deserved, allocated and pending per queue, with the last hour's history
//   /api/pending    pending jobs and why
//   /api/evictions  recent evictions and why
//   /api/health     the scheduler's cycle times, binds and failures
#pragma once

#include <nlohmann/json.hpp>

#include "daemon/cluster_view.h"
#include "daemon/page_server.h"

namespace gantry {

nlohmann::json ClusterJson(const ClusterView& view);
nlohmann::json QueuesJson(const ClusterView& view);
nlohmann::json PendingJson(const ClusterView& view);
nlohmann::json EvictionsJson(const ClusterView& view);
nlohmann::json HealthJson(const ClusterView& view);

// Serves the five endpoints from `board` (503 until a view is published).
// REQUIRES: `board` outlives the server's serving.
void RegisterClusterApi(PageServer& server, const ClusterViewBoard& board);

}  // namespace gantry

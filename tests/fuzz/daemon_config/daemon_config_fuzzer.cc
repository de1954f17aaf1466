// The daemon's configuration (daemon/config.h): ParseDaemonConfig on any text, then one
// session with the engine configuration it gives on a small fixed cluster (each plugin
// reads its own arguments when a session opens).
//
// Checks: a refusal names the file; what is accepted is usable: a scheduler name, finite
// positive periods with retry < renew < lease, 1..1024 bind workers, host:port, an engine
// configuration that ValidateSchedulerConfig accepts and a non-negative nodesToScore; the
// session on it places nothing that does not fit.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "daemon/config.h"
#include "daemon/http_listener.h"
#include "engine/registry.h"
#include "engine/session.h"
#include "tests/fuzz/fuzz_check.h"

namespace gantry {
namespace {

ClusterState SmallCluster() {
  ClusterState cluster;
  for (int i = 0; i < 2; ++i) {
    Node node;
    node.name = "n" + std::to_string(i);
    node.allocatable = {{kCpu, 64'000}, {kMemory, Milli{256} << 40}};
    node.gpus.resize(8);
    (void)cluster.AddNode(std::move(node));
  }
  Queue queue;
  queue.name = "default";
  const QueueId q = cluster.AddQueue(std::move(queue)).value();
  for (int j = 0; j < 3; ++j) {
    Job job;
    job.name = "job" + std::to_string(j);
    job.queue = q;
    job.min_member = j + 1;
    const JobId id = cluster.AddJob(std::move(job)).value();
    TaskSpec spec;
    spec.requests = {{kCpu, 8'000}, {kMemory, Milli{32} << 30}};
    spec.gpu.count = j == 2 ? 0 : 4;
    spec.gpu.milli = j == 2 ? 500 : 0;
    const SpecId s = cluster.AddSpec(std::move(spec));
    for (int t = 0; t <= j; ++t) (void)cluster.AddTask(id, s, "t" + std::to_string(t));
  }
  return cluster;
}

bool Positive(double seconds) {
  return std::isfinite(seconds) && seconds > 0;
}

}  // namespace
}  // namespace gantry

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const std::string source = "fuzz-config.yaml";
  DaemonConfig config;
  Status st = ParseDaemonConfig(std::string(fuzz::AsText(data, size)), source, &config);
  if (!st.ok()) {
    fuzz::CheckErrorNamesSource(st, source);
    return 0;
  }
  FUZZ_CHECK(!config.scheduler_name.empty(), "an empty schedulerName");
  FUZZ_CHECK(Positive(config.schedule_period_s),
             "schedulePeriod " + std::to_string(config.schedule_period_s));
  FUZZ_CHECK(config.bind_workers >= 1 && config.bind_workers <= 1024,
             "bindWorkers " + std::to_string(config.bind_workers));
  FUZZ_CHECK(ParseListenAddress(config.listen_address).ok(),
             "listenAddress \"" + config.listen_address + "\"");
  FUZZ_CHECK(config.page_address.empty() || ParseListenAddress(config.page_address).ok(),
             "pageAddress \"" + config.page_address + "\"");
  const LeaderElectionConfig& le = config.leader_election;
  FUZZ_CHECK(
      Positive(le.lease_duration_s) && Positive(le.renew_deadline_s) && Positive(le.retry_period_s),
      "leader election periods must be finite and positive");
  FUZZ_CHECK(le.retry_period_s < le.renew_deadline_s && le.renew_deadline_s < le.lease_duration_s,
             "leader election needs retryPeriod < renewDeadline < leaseDuration");
  Status valid = ValidateSchedulerConfig(config.engine);
  FUZZ_CHECK(valid.ok(),
             "ParseDaemonConfig accepts an engine configuration that "
             "ValidateSchedulerConfig refuses: " +
                 valid.message());
  FUZZ_CHECK(config.engine.nodes_to_score >= 0,
             "nodesToScore " + std::to_string(config.engine.nodes_to_score));
  const ClusterState cluster = SmallCluster();
  Snapshot snapshot(cluster);
  Decisions decisions = Session(snapshot, Policy::Compile(config.engine).value()).Run();
  ClusterState after = cluster;
  for (const BindDecision& b : decisions.binds) {
    Status placed = after.Place(b.task, b.node, b.gpus);
    FUZZ_CHECK(placed.ok(), "a bind that does not fit: " + placed.message());
  }
  return 0;
}

// The daemon's status endpoints, served over plain HTTP on their own thread:
//
//   /metrics  the registry in Prometheus text format 0.0.4
//   /healthz  200 "ok" while the liveness probe passes, else 500 and the probe's reason
//   /readyz   200 "ok" while the readiness probe passes, else 503 and the probe's reason
//
// Liveness answers "should the kubelet restart me" (a wedged scheduling loop); readiness
// answers "should I receive traffic / count as up" (informers not synced, not the leader).
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "daemon/http_listener.h"
#include "daemon/metrics.h"
#include "model/status.h"

namespace gantry {

struct ProbeResult {
  bool ok = true;
  std::string reason;  // why not ok, for the response body; e.g. "informers not synced"

  static ProbeResult Pass() { return {true, ""}; }
  static ProbeResult Fail(std::string why) { return {false, std::move(why)}; }
};

// Probes are called on the server's worker threads, concurrently with each other and with
// the daemon, so they must be thread-safe and quick (read an atomic, not do a cycle).
using Probe = std::function<ProbeResult()>;

class StatusServer {
 public:
  // `registry` must outlive the server. An empty probe always passes.
  StatusServer(const MetricsRegistry& registry, Probe liveness, Probe readiness);
  ~StatusServer();  // Stop()s
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

  // Listens on `address`, "host:port" ("[::1]:port" for IPv6, ":port" for every IPv4
  // interface; port 0 picks a free port, see port()), and serves on a thread of its own.
  // Returns once the server accepts connections, or an error that names the address.
  Status Start(const std::string& address);
  // Stops listening and joins the thread; a no-op when not started. Start() may follow.
  // Start() and Stop() are for the thread that owns the server, not for concurrent use.
  void Stop();

  // The port being listened on; 0 when not started.
  int port() const { return listener_.port(); }

 private:
  void Configure(httplib::Server& server);  // the routes

  const MetricsRegistry& registry_;
  Probe liveness_;
  Probe readiness_;
  HttpListener listener_{"status server"};
};

}  // namespace gantry

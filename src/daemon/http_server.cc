#include "daemon/http_server.h"

#include <httplib.h>
#include <utility>

namespace gantry {
namespace {

constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";
constexpr char kTextContentType[] = "text/plain; charset=utf-8";

void AnswerProbe(const Probe& probe, int failure_status, httplib::Response& res) {
  ProbeResult result = probe ? probe() : ProbeResult::Pass();
  if (result.ok) {
    res.status = 200;
    res.set_content("ok", kTextContentType);
    return;
  }
  res.status = failure_status;
  res.set_content(result.reason.empty() ? "not ok" : result.reason, kTextContentType);
}

}  // namespace

StatusServer::StatusServer(const MetricsRegistry& registry, Probe liveness, Probe readiness)
    : registry_(registry), liveness_(std::move(liveness)), readiness_(std::move(readiness)) {}

StatusServer::~StatusServer() {
  Stop();
}

void StatusServer::Configure(httplib::Server& server) {
  server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(registry_.Render(), kMetricsContentType);
  });
  // 500 for liveness: the kubelet restarts on any failure code; 503 for readiness is the
  // conventional "alive but not serving" answer.
  server.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    AnswerProbe(liveness_, 500, res);
  });
  server.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    AnswerProbe(readiness_, 503, res);
  });
}

Status StatusServer::Start(const std::string& address) {
  return listener_.Start(address, [this](httplib::Server& server) { Configure(server); });
}

void StatusServer::Stop() {
  listener_.Stop();
}

}  // namespace gantry

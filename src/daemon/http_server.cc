#include "daemon/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <utility>

namespace gantry {
namespace {

constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";
constexpr char kTextContentType[] = "text/plain; charset=utf-8";

struct HostPort {
  std::string host;
  int port = 0;
};

Status BadAddress(const std::string& address, const std::string& why) {
  return Status::Invalid("status server address \"" + address + "\": " + why);
}

Result<HostPort> ParseAddress(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return BadAddress(address, "want host:port");
  HostPort out;
  out.host = address.substr(0, colon);
  std::string port_text = address.substr(colon + 1);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  } else if (out.host.find(':') != std::string::npos) {
    return BadAddress(address, "an IPv6 host goes in brackets, as in [::1]:8080");
  }
  // ":8080" means every interface, as in Go's net.Listen which Kubernetes users know.
  if (out.host.empty()) out.host = "0.0.0.0";
  bool digits = !port_text.empty() && port_text.size() <= 5;
  for (char c : port_text) digits = digits && c >= '0' && c <= '9';
  if (!digits || std::stoi(port_text) > 65535) {
    return BadAddress(address, "port must be a number from 0 to 65535");
  }
  out.port = std::stoi(port_text);
  return out;
}

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
  // An idle keep-alive connection holds a worker, and Stop() waits for the workers; one
  // second bounds that wait, and scrapers reconnect far less often than that anyway.
  server.set_keep_alive_timeout(1);
  // httplib's default adds SO_REUSEPORT, with which a second daemon on the same port would
  // bind too and take half the scrapes and probes; SO_REUSEADDR alone still allows a quick
  // restart while old connections sit in TIME_WAIT.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
}

Status StatusServer::Start(const std::string& address) {
  if (server_) {
    return Status::Failed("status server already listening on port " + std::to_string(port_) +
                          ", cannot start it on " + address);
  }
  Result<HostPort> where = ParseAddress(address);
  if (!where.ok()) return where.status();

  auto server = std::make_unique<httplib::Server>();
  Configure(*server);
  int port = where->port;
  bool bound = true;
  if (port == 0) {
    port = server->bind_to_any_port(where->host);
    bound = port > 0;
  } else {
    bound = server->bind_to_port(where->host, port);
  }
  if (!bound) {
    return Status::IoError("status server address \"" + address +
                           "\": cannot listen there (port in use, or not an address of this "
                           "host?)");
  }

  // httplib's stop() does nothing until listen has begun, so a Stop() that came too soon
  // would leave the thread serving forever; wait until it is running (or has given up).
  auto listen_returned = std::make_shared<std::atomic<bool>>(false);
  httplib::Server* raw = server.get();
  thread_ = std::thread([raw, listen_returned] {
    raw->listen_after_bind();
    listen_returned->store(true);
  });
  while (!raw->is_running() && !listen_returned->load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!raw->is_running()) {
    thread_.join();
    return Status::IoError("status server address \"" + address + "\": listening stopped at once");
  }
  server_ = std::move(server);
  port_ = port;
  return Status::Ok();
}

void StatusServer::Stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
  port_ = 0;
}

}  // namespace gantry

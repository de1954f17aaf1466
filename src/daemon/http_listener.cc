#include "daemon/http_listener.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <utility>

namespace gantry {

Result<ListenAddress> ParseListenAddress(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return Status::Invalid("expected host:port");
  ListenAddress out;
  out.host = address.substr(0, colon);
  std::string port_text = address.substr(colon + 1);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  } else if (out.host.find(':') != std::string::npos) {
    return Status::Invalid("an IPv6 host goes in brackets, as in [::1]:8080");
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  bool digits = !port_text.empty() && port_text.size() <= 5;
  for (char c : port_text) digits = digits && c >= '0' && c <= '9';
  if (!digits || std::stoi(port_text) > 65535) {
    return Status::Invalid("port must be a number from 0 to 65535");
  }
  out.port = std::stoi(port_text);
  return out;
}

HttpListener::HttpListener(std::string what) : what_(std::move(what)) {}

HttpListener::~HttpListener() {
  Stop();
}

Status HttpListener::Start(const std::string& address, const Configure& configure) {
  const std::string where = what_ + " address \"" + address + "\"";
  if (server_) {
    return Status::Failed(what_ + " already listening on port " + std::to_string(port_) +
                          ", cannot start it on " + address);
  }
  Result<ListenAddress> parsed = ParseListenAddress(address);
  if (!parsed.ok()) return Status::Invalid(where + ": " + parsed.status().message());

  auto server = std::make_unique<httplib::Server>();
  configure(*server);
  // An idle keep-alive connection holds a worker, and Stop() waits for the workers; one
  // second bounds that wait, and clients reconnect far less often than that anyway.
  server->set_keep_alive_timeout(1);
  // httplib's default adds SO_REUSEPORT, with which a second daemon on the same port would
  // bind too and take half the requests; SO_REUSEADDR alone still allows a quick restart
  // while old connections sit in TIME_WAIT.
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  int port = parsed->port;
  bool bound = true;
  if (port == 0) {
    port = server->bind_to_any_port(parsed->host);
    bound = port > 0;
  } else {
    bound = server->bind_to_port(parsed->host, port);
  }
  if (!bound) {
    return Status::IoError(where +
                           ": cannot listen there (port in use, or not an address of this host?)");
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
    return Status::IoError(where + ": listening stopped at once");
  }
  server_ = std::move(server);
  port_ = port;
  return Status::Ok();
}

void HttpListener::Stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
  port_ = 0;
}

}  // namespace gantry

// A plain-HTTP listener on a thread of its own, shared by the daemon's servers (the
// StatusServer on listenAddress, the PageServer on pageAddress): the address's syntax,
// binding, the worker thread, and a prompt stop.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "model/status.h"

// httplib.h stays out of this header: it is large and must be compiled with the same
// CPPHTTPLIB_* macros as the shared library, which the gantry_daemon target provides.
namespace httplib {
class Server;
}

namespace gantry {

struct ListenAddress {
  std::string host;  // without brackets; "0.0.0.0" for ":port"
  int port = 0;      // 0: any free port
};

// "host:port", "[::1]:port" for IPv6, ":port" for every IPv4 interface (as Go's net.Listen,
// which Kubernetes users know). The error says what is wrong, not which address.
Result<ListenAddress> ParseListenAddress(const std::string& address);

class HttpListener {
 public:
  // `what` names the server in errors: "status server", "page server".
  explicit HttpListener(std::string what);
  ~HttpListener();  // Stop()s
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Routes are set by `configure` on a fresh server; timeouts and socket options here.
  using Configure = std::function<void(httplib::Server&)>;
  // Listens on `address` (port 0 picks a free port, see port()) and serves on a thread of
  // its own. Returns once the server accepts connections, or an error that names the
  // server and the address.
  Status Start(const std::string& address, const Configure& configure);
  // Stops listening and joins the thread; a no-op when not started. Start() may follow.
  // Start() and Stop() are for the thread that owns the listener, not for concurrent use.
  void Stop();

  // The port being listened on; 0 when not started.
  int port() const { return port_; }

 private:
  std::string what_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace gantry

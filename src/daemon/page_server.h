// The live page's server, on a listener of its own (pageAddress: 127.0.0.1:10260 unless
// configured otherwise, reached with `kubectl port-forward`), so that opening /metrics to
// Prometheus does not open the page to the cluster:
//
//   /         the page (src/daemon/page/index.html, embedded into the binary at build time)
//   /api/...  JSON answers of the handlers registered with Handle() (docs/live-page.md)
//
// Read-only: GET (and HEAD) only, anything else 405; an unknown path is a 404 with a JSON
// error. Handlers run on the server's worker threads, concurrently: they read what the
// scheduler thread publishes (an immutable snapshot swapped under a mutex), never the live
// ClusterCache.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "daemon/http_listener.h"
#include "model/status.h"

namespace gantry {

struct ApiRequest {
  std::string path;                          // "/api/explain/team-a/job-1", decoded
  std::map<std::string, std::string> query;  // the first value of each parameter
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using ApiHandler = std::function<ApiResponse(const ApiRequest&)>;

// {"error": message} with `status`: the shape of every error the page's API answers.
ApiResponse ApiError(int status, const std::string& message);

class PageServer {
 public:
  PageServer() = default;
  ~PageServer();  // Stop()s
  PageServer(const PageServer&) = delete;
  PageServer& operator=(const PageServer&) = delete;

  // Answers `path_prefix` and the paths below it with `handler` ("/api/explain" serves
  // "/api/explain" and "/api/explain/ns/name", not "/api/explainer"); the longest prefix
  // wins. A prefix registered again replaces the handler.
  // REQUIRES: called before Start(); path_prefix starts with "/api/".
  void Handle(std::string path_prefix, ApiHandler handler);

  // Listens on `address` (http_listener.h; port 0 picks a free port, see port()).
  Status Start(const std::string& address);
  void Stop();
  int port() const { return listener_.port(); }

  // The answer to one request, as the server gives it (tests call it without a socket).
  ApiResponse Serve(const std::string& method, const ApiRequest& request) const;

 private:
  struct Route {
    std::string prefix;
    ApiHandler handler;
  };
  const Route* Find(const std::string& path) const;

  std::vector<Route> routes_;
  HttpListener listener_{"page server"};
};

}  // namespace gantry

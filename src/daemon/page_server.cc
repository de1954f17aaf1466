#include "daemon/page_server.h"

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "daemon/page_html.h"

namespace gantry {
namespace {

constexpr char kHtmlContentType[] = "text/html; charset=utf-8";
// The page is one file with its script and style inline: it may load nothing else and
// talk only to this server, so a name shown on it cannot pull anything in.
constexpr char kPagePolicy[] =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

bool Below(const std::string& path, const std::string& prefix) {
  if (path.compare(0, prefix.size(), prefix) != 0) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '/' || prefix.back() == '/';
}

}  // namespace

ApiResponse ApiError(int status, const std::string& message) {
  ApiResponse response;
  response.status = status;
  response.body = nlohmann::json{{"error", message}}.dump();
  return response;
}

PageServer::~PageServer() {
  Stop();
}

void PageServer::Handle(std::string path_prefix, ApiHandler handler) {
  for (Route& route : routes_) {
    if (route.prefix == path_prefix) {
      route.handler = std::move(handler);
      return;
    }
  }
  routes_.push_back({std::move(path_prefix), std::move(handler)});
}

const PageServer::Route* PageServer::Find(const std::string& path) const {
  const Route* best = nullptr;
  for (const Route& route : routes_) {
    if (Below(path, route.prefix) && (!best || route.prefix.size() > best->prefix.size())) {
      best = &route;
    }
  }
  return best;
}

ApiResponse PageServer::Serve(const std::string& method, const ApiRequest& request) const {
  if (method != "GET" && method != "HEAD") {
    return ApiError(405, "the page and its API are read-only: GET only, not " + method);
  }
  if (request.path == "/") return {200, kHtmlContentType, std::string(PageHtml())};
  if (const Route* route = Find(request.path)) return route->handler(request);
  return ApiError(404, "no such page: " + request.path);
}

Status PageServer::Start(const std::string& address) {
  return listener_.Start(address, [this](httplib::Server& server) {
    // Every request, whatever its method, is answered here: routes are ours, not httplib's.
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      ApiRequest request;
      request.path = req.path;
      for (const auto& [key, value] : req.params) request.query.emplace(key, value);
      ApiResponse response = Serve(req.method, request);
      res.status = response.status;
      if (response.status == 405) res.set_header("Allow", "GET, HEAD");
      res.set_header("Cache-Control", "no-store");
      res.set_header("X-Content-Type-Options", "nosniff");
      if (response.content_type == kHtmlContentType) {
        res.set_header("Content-Security-Policy", kPagePolicy);
      }
      res.set_content(std::move(response.body), response.content_type);
      return httplib::Server::HandlerResponse::Handled;
    });
  });
}

void PageServer::Stop() {
  listener_.Stop();
}

}  // namespace gantry

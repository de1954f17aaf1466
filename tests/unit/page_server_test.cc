#include "daemon/page_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "daemon/http_server.h"
#include "daemon/page_html.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using nlohmann::json;

ApiHandler Echo(const std::string& name) {
  return [name](const ApiRequest& request) {
    json query = json::object();
    for (const auto& [k, v] : request.query) query[k] = v;
    return ApiResponse{200, "application/json",
                       json{{"handler", name}, {"path", request.path}, {"query", query}}.dump()};
  };
}

std::string HandlerOf(const PageServer& server, const std::string& path) {
  ApiResponse response = server.Serve("GET", {path, {}});
  if (response.status != 200) return "status " + std::to_string(response.status);
  return json::parse(response.body).at("handler").get<std::string>();
}

TEST(PageServerTest, LongestPrefixWinsOnPathBoundaries) {
  PageServer server;
  server.Handle("/api/explain", Echo("explain"));
  server.Handle("/api/explain/pods", Echo("pods"));
  server.Handle("/api/queues", Echo("queues"));
  EXPECT_EQ(HandlerOf(server, "/api/explain"), "explain");
  EXPECT_EQ(HandlerOf(server, "/api/explain/team-a/job-1"), "explain");
  EXPECT_EQ(HandlerOf(server, "/api/explain/pods/team-a/p"), "pods");
  EXPECT_EQ(HandlerOf(server, "/api/explain/podsx"), "explain");
  EXPECT_EQ(HandlerOf(server, "/api/explainer"), "status 404");
  EXPECT_EQ(HandlerOf(server, "/api/queues"), "queues");
  EXPECT_EQ(HandlerOf(server, "/api"), "status 404");
  EXPECT_EQ(HandlerOf(server, "/metrics"), "status 404");
}

TEST(PageServerTest, AHandlerRegisteredAgainIsReplaced) {
  PageServer server;
  server.Handle("/api/queues", Echo("first"));
  server.Handle("/api/queues", Echo("second"));
  EXPECT_EQ(HandlerOf(server, "/api/queues"), "second");
}

TEST(PageServerTest, UnknownPathIsAJsonNotFound) {
  PageServer server;
  ApiResponse response = server.Serve("GET", {"/nothing/here", {}});
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_EQ(json::parse(response.body), json({{"error", "no such page: /nothing/here"}}));
}

TEST(PageServerTest, OnlyGetAndHeadAreAnswered) {
  PageServer server;
  server.Handle("/api/queues", Echo("queues"));
  EXPECT_EQ(server.Serve("HEAD", {"/api/queues", {}}).status, 200);
  for (const char* method : {"POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
    ApiResponse response = server.Serve(method, {"/api/queues", {}});
    EXPECT_EQ(response.status, 405) << method;
    EXPECT_TRUE(Contains(response.body, "read-only")) << response.body;
  }
}

TEST(PageServerTest, RootIsTheEmbeddedPage) {
  PageServer server;
  ApiResponse response = server.Serve("GET", {"/", {}});
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(response.body, std::string(PageHtml()));
  EXPECT_TRUE(response.body.starts_with("<!doctype html>")) << response.body.substr(0, 40);
}

// Over a socket: routes, query parameters, the methods httplib itself knows, and headers.
TEST(PageServerTest, ServesOverHttp) {
  PageServer server;
  server.Handle("/api/explain", Echo("explain"));
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  ASSERT_GT(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  client.set_connection_timeout(2);
  client.set_read_timeout(5);

  httplib::Result got = client.Get("/api/explain/team%20a/job-1?verbose=1&verbose=2&x=%3C");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(got->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(got->get_header_value("Cache-Control"), "no-store");
  EXPECT_EQ(json::parse(got->body), json({{"handler", "explain"},
                                          {"path", "/api/explain/team a/job-1"},
                                          {"query", {{"verbose", "1"}, {"x", "<"}}}}));

  httplib::Result page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_TRUE(Contains(page->get_header_value("Content-Security-Policy"), "default-src 'none'"));

  httplib::Result posted = client.Post("/api/explain", "{}", "application/json");
  ASSERT_TRUE(posted);
  EXPECT_EQ(posted->status, 405);
  EXPECT_EQ(posted->get_header_value("Allow"), "GET, HEAD");
  httplib::Result deleted = client.Delete("/api/explain/x");
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 405);

  httplib::Result missing = client.Get("/metrics");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST(PageServerTest, RejectsMalformedAddressesByName) {
  PageServer server;
  Status st = server.Start("localhost");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "page server address \"localhost\": expected host:port");
  EXPECT_EQ(server.port(), 0);
}

// The status server's listener does not answer the page's paths.
TEST(PageServerTest, TheStatusListenerServesNoPage) {
  MetricsRegistry registry;
  StatusServer status(registry, nullptr, nullptr);
  ASSERT_TRUE(status.Start("127.0.0.1:0").ok());
  httplib::Client client("127.0.0.1", status.port());
  for (const char* path : {"/", "/api/cluster"}) {
    httplib::Result res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
  }
}

}  // namespace
}  // namespace gantry

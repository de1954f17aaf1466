#include "daemon/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <string>
#include <utility>

#include "tests/unit/test_util.h"

namespace gantry {
namespace {

// A probe whose answer the test sets; read from the server's worker threads.
class FakeProbe {
 public:
  void Set(ProbeResult result) {
    std::lock_guard lock(mu_);
    result_ = std::move(result);
  }
  Probe AsProbe() {
    return [this] {
      std::lock_guard lock(mu_);
      return result_;
    };
  }

 private:
  std::mutex mu_;
  ProbeResult result_ = ProbeResult::Pass();
};

struct Reply {
  int status = 0;
  std::string body;
  std::string content_type;
};

// GET http://127.0.0.1:port/path; status 0 when no response came.
Reply Get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  client.set_read_timeout(5);
  httplib::Result res = client.Get(path);
  if (!res) return {};
  return {res->status, res->body, res->get_header_value("Content-Type")};
}

class StatusServerTest : public ::testing::Test {
 protected:
  MetricsRegistry registry_;
  FakeProbe liveness_;
  FakeProbe readiness_;
  StatusServer server_{registry_, liveness_.AsProbe(), readiness_.AsProbe()};
};

TEST_F(StatusServerTest, MetricsServesTheRegistryAsItIsNow) {
  CounterFamily* binds = Must(registry_.AddCounter("gantry_binds_total", "Pods bound.", {"queue"}));
  ASSERT_TRUE(server_.Start("127.0.0.1:0").ok());
  ASSERT_GT(server_.port(), 0);

  ASSERT_TRUE(binds->With({"team-a"}).Inc(2).ok());
  Reply reply = Get(server_.port(), "/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(reply.body,
            "# HELP gantry_binds_total Pods bound.\n"
            "# TYPE gantry_binds_total counter\n"
            "gantry_binds_total{queue=\"team-a\"} 2\n");

  ASSERT_TRUE(binds->With({"team-a"}).Inc().ok());
  EXPECT_EQ(Get(server_.port(), "/metrics").body,
            "# HELP gantry_binds_total Pods bound.\n"
            "# TYPE gantry_binds_total counter\n"
            "gantry_binds_total{queue=\"team-a\"} 3\n");
}

TEST_F(StatusServerTest, HealthzFollowsLiveness) {
  ASSERT_TRUE(server_.Start("127.0.0.1:0").ok());
  Reply healthy = Get(server_.port(), "/healthz");
  EXPECT_EQ(healthy.status, 200);
  EXPECT_EQ(healthy.body, "ok");
  EXPECT_EQ(healthy.content_type, "text/plain; charset=utf-8");

  liveness_.Set(ProbeResult::Fail("scheduling loop stalled for 120s"));
  Reply sick = Get(server_.port(), "/healthz");
  EXPECT_EQ(sick.status, 500);
  EXPECT_EQ(sick.body, "scheduling loop stalled for 120s");

  liveness_.Set(ProbeResult::Fail(""));  // a failure without a reason still says something
  EXPECT_EQ(Get(server_.port(), "/healthz").body, "not ok");
  // Readiness is a separate question.
  EXPECT_EQ(Get(server_.port(), "/readyz").status, 200);
}

TEST_F(StatusServerTest, ReadyzFollowsReadinessWithTheReason) {
  ASSERT_TRUE(server_.Start("127.0.0.1:0").ok());
  readiness_.Set(ProbeResult::Fail("informers not synced"));
  Reply syncing = Get(server_.port(), "/readyz");
  EXPECT_EQ(syncing.status, 503);
  EXPECT_EQ(syncing.body, "informers not synced");

  readiness_.Set(ProbeResult::Fail("not the leader"));
  Reply follower = Get(server_.port(), "/readyz");
  EXPECT_EQ(follower.status, 503);
  EXPECT_EQ(follower.body, "not the leader");
  EXPECT_EQ(Get(server_.port(), "/healthz").status, 200);  // not ready is not dead

  readiness_.Set(ProbeResult::Pass());
  Reply ready = Get(server_.port(), "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ok");
}

TEST_F(StatusServerTest, UnknownPathIsNotFound) {
  ASSERT_TRUE(server_.Start("127.0.0.1:0").ok());
  EXPECT_EQ(Get(server_.port(), "/").status, 404);
  EXPECT_EQ(Get(server_.port(), "/metricsz").status, 404);
}

TEST(StatusServerProbesTest, EmptyProbesPass) {
  MetricsRegistry registry;
  StatusServer server(registry, nullptr, nullptr);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  EXPECT_EQ(Get(server.port(), "/healthz").status, 200);
  EXPECT_EQ(Get(server.port(), "/readyz").status, 200);
  Reply metrics = Get(server.port(), "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.body, "");  // an empty registry is an empty exposition
}

TEST_F(StatusServerTest, StopsRestartsAndRefusesASecondStart) {
  ASSERT_TRUE(server_.Start("127.0.0.1:0").ok());
  int first_port = server_.port();
  Status twice = server_.Start("127.0.0.1:0");
  EXPECT_FALSE(twice.ok());
  EXPECT_TRUE(Contains(twice.message(), "already listening"));

  server_.Stop();
  EXPECT_EQ(server_.port(), 0);
  EXPECT_EQ(Get(first_port, "/healthz").status, 0);  // nobody listens any more
  server_.Stop();                                    // stopping twice is harmless

  ASSERT_TRUE(server_.Start("127.0.0.1:0").ok());
  EXPECT_EQ(Get(server_.port(), "/healthz").status, 200);
  // The destructor stops it.
}

TEST_F(StatusServerTest, RejectsMalformedAddressesByName) {
  for (const char* bad : {"", "localhost", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:65536",
                          "127.0.0.1:-1", "127.0.0.1:123456", "::1:8080"}) {
    Status st = server_.Start(bad);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_TRUE(Contains(st.message(), "status server address \"" + std::string(bad) + "\""));
    EXPECT_EQ(server_.port(), 0);
  }
}

TEST_F(StatusServerTest, CannotListenOnAForeignAddressOrABusyPort) {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this host.
  Status foreign = server_.Start("192.0.2.1:0");
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.code(), Status::Code::kIoError);
  EXPECT_TRUE(Contains(foreign.message(), "\"192.0.2.1:0\": cannot listen there"));

  ASSERT_TRUE(server_.Start("127.0.0.1:0").ok());
  MetricsRegistry other_registry;
  StatusServer other(other_registry, nullptr, nullptr);
  std::string busy = "127.0.0.1:" + std::to_string(server_.port());
  Status taken = other.Start(busy);
  ASSERT_FALSE(taken.ok());
  EXPECT_TRUE(Contains(taken.message(), "\"" + busy + "\": cannot listen there"));
  EXPECT_EQ(Get(server_.port(), "/healthz").status, 200);  // the first server is unharmed
}

}  // namespace
}  // namespace gantry

// Leader election on a real Lease: two electors in one process compete for one lease.
// Durations are short (lease 2 s, retry 0.2 s) to keep the tests quick; the bounds the
// tests check leave room for a loaded machine.
#include "k8s/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

constexpr milliseconds kLease{2000};
constexpr milliseconds kRenewDeadline{1500};
constexpr milliseconds kRetry{200};

// A client that fails fast, as an elector's should: a request must not outlast the
// renew deadline.
std::unique_ptr<k8s::Client> ElectorClient() {
  k8s::ClientOptions options;
  options.timeout_s = 1;
  options.connect_timeout_s = 0.5;
  options.max_attempts = 1;
  auto client = k8s::Client::Create(TestEnv::Get().credentials(), options);
  EXPECT_TRUE(client.ok()) << client.status().message();
  return std::move(client).value();
}

// A wall clock off by `skew` from the real one; the monotonic clock is untouched.
class SkewedClock : public k8s::ElectionClock {
 public:
  explicit SkewedClock(std::chrono::seconds skew) : skew_(skew) {}
  std::chrono::system_clock::time_point WallNow() const override {
    return std::chrono::system_clock::now() + skew_;
  }

 private:
  std::chrono::seconds skew_;
};

// One candidate on its own thread, with counters of its callbacks.
class Candidate {
 public:
  Candidate(const std::string& lease, const std::string& identity, bool release_on_stop = true,
            std::shared_ptr<const k8s::ElectionClock> clock = nullptr)
      : client_(ElectorClient()) {
    k8s::LeaderElectionOptions options;
    options.lease_namespace = "default";
    options.lease_name = lease;
    options.identity = identity;
    options.lease_duration = kLease;
    options.renew_deadline = kRenewDeadline;
    options.retry_period = kRetry;
    options.release_on_stop = release_on_stop;
    k8s::LeaderCallbacks callbacks;
    callbacks.on_started_leading = [this] { started_++; };
    callbacks.on_stopped_leading = [this] { stopped_++; };
    elector_ = std::make_unique<k8s::LeaderElector>(*client_, options, callbacks, clock);
  }
  ~Candidate() { Stop(); }
  void Start() {
    thread_ = std::thread([this] { elector_->Run(stop_); });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool leading() const { return elector_->is_leader(); }
  k8s::LeaderElector& elector() { return *elector_; }
  int started() const { return started_.load(); }
  int stopped() const { return stopped_.load(); }

 private:
  std::unique_ptr<k8s::Client> client_;
  std::unique_ptr<k8s::LeaderElector> elector_;
  std::atomic<bool> stop_{false};
  std::atomic<int> started_{0};
  std::atomic<int> stopped_{0};
  std::thread thread_;
};

json GetLease(const std::string& name) {
  auto lease =
      TestEnv::Get().Call("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/" + name);
  EXPECT_TRUE(lease.ok()) << lease.status().message();
  return lease.ok() ? *lease : json::object();
}

// Watches both candidates for `span` and fails if they ever lead at the same time.
void ExpectNeverBothLead(Candidate& a, Candidate& b, milliseconds span) {
  auto until = steady_clock::now() + span;
  int both = 0;
  while (steady_clock::now() < until) {
    both += a.leading() && b.leading();
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(both, 0) << "two leaders at once";
}

TEST(LeaderElectionTest, OneLeadsRenewsAndTheOtherTakesOverWhenItStops) {
  Candidate a("it-election", "candidate-a");
  Candidate b("it-election", "candidate-b");
  a.Start();
  b.Start();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return a.leading() || b.leading(); }, seconds(10)));
  Candidate& leader = a.leading() ? a : b;
  Candidate& follower = a.leading() ? b : a;
  ExpectNeverBothLead(a, b, kLease + milliseconds(500));
  EXPECT_TRUE(leader.leading());
  EXPECT_EQ(leader.started(), 1);
  EXPECT_EQ(follower.started(), 0);

  json first = GetLease("it-election");
  const std::string identity = leader.elector().options().identity;
  EXPECT_EQ(first["spec"].value("holderIdentity", ""), identity);
  EXPECT_EQ(first["spec"].value("leaseDurationSeconds", 0), 2);
  EXPECT_EQ(follower.elector().leader(), identity);
  std::this_thread::sleep_for(kRetry * 3);
  json second = GetLease("it-election");
  EXPECT_GT(second["spec"].value("renewTime", ""), first["spec"].value("renewTime", ""));
  EXPECT_EQ(second["spec"].value("acquireTime", ""), first["spec"].value("acquireTime", ""));
  EXPECT_NE(second["metadata"].value("resourceVersion", ""),
            first["metadata"].value("resourceVersion", ""));
  const int64_t transitions = second["spec"].value("leaseTransitions", 0);

  auto stopped_at = steady_clock::now();
  leader.Stop();
  EXPECT_FALSE(leader.leading());
  EXPECT_EQ(leader.stopped(), 1);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return follower.leading(); }, kLease + kRetry + seconds(2)));
  // The lease was released, so the successor did not wait for it to expire.
  EXPECT_LT(steady_clock::now() - stopped_at, kLease);
  json taken = GetLease("it-election");
  EXPECT_EQ(taken["spec"].value("holderIdentity", ""), follower.elector().options().identity);
  EXPECT_EQ(taken["spec"].value("leaseTransitions", 0), transitions + 1);
  EXPECT_EQ(follower.started(), 1);
}

TEST(LeaderElectionTest, WithoutReleaseTheSuccessorWaitsForTheLeaseToExpire) {
  Candidate a("it-election-expiry", "candidate-a", /*release_on_stop=*/false);
  a.Start();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return a.leading(); }, seconds(10)));
  Candidate b("it-election-expiry", "candidate-b", /*release_on_stop=*/false);
  b.Start();
  std::this_thread::sleep_for(kRetry * 2);  // b has seen a's record
  auto stopped_at = steady_clock::now();
  a.Stop();
  EXPECT_EQ(GetLease("it-election-expiry")["spec"].value("holderIdentity", ""), "candidate-a");
  ASSERT_TRUE(TestEnv::WaitFor([&] { return b.leading(); }, kLease + kRetry + seconds(3)));
  auto waited = steady_clock::now() - stopped_at;
  // b saw a's last renewal at most one retry before the stop, and must wait a whole lease
  // from then.
  EXPECT_GE(waited, kLease - 2 * kRetry);
  EXPECT_LE(waited, kLease + 2 * kRetry + seconds(2));
}

TEST(LeaderElectionTest, WallClockSkewDoesNotLetAFollowerTakeOver) {
  // a's renewTime is an hour old by everyone else's wall clock, yet it renews on time:
  // b judges expiry on its own monotonic clock and must leave a in charge.
  Candidate a("it-election-skew", "candidate-a", true,
              std::make_shared<SkewedClock>(std::chrono::hours(-1)));
  a.Start();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return a.leading(); }, seconds(10)));
  Candidate b("it-election-skew", "candidate-b", true,
              std::make_shared<SkewedClock>(std::chrono::hours(1)));
  b.Start();
  ExpectNeverBothLead(a, b, kLease * 2);
  EXPECT_TRUE(a.leading());
  EXPECT_EQ(b.started(), 0);
  EXPECT_EQ(GetLease("it-election-skew")["spec"].value("holderIdentity", ""), "candidate-a");
}

TEST(LeaderElectionTest, LeaderStepsDownWhenItCannotRenewAndLeadsAgainAfter) {
  TestEnv& env = TestEnv::Get();
  Candidate a("it-election-outage", "candidate-a");
  a.Start();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return a.leading(); }, seconds(10)));

  ASSERT_TRUE(env.StopApiServer().ok());
  auto down_at = steady_clock::now();
  // Without the server it cannot renew; past the renew deadline it must not claim to lead.
  EXPECT_TRUE(TestEnv::WaitFor([&] { return !a.leading() && a.stopped() == 1; },
                               kRenewDeadline + seconds(2)));
  EXPECT_LT(steady_clock::now() - down_at, kLease + seconds(1));
  EXPECT_FALSE(a.elector().last_error().empty());
  Status started = env.StartApiServer();
  ASSERT_TRUE(started.ok()) << started.message();

  // The lease is still a's (nobody else wanted it), so it takes it back.
  ASSERT_TRUE(TestEnv::WaitFor([&] { return a.leading(); }, kLease + seconds(5)))
      << a.elector().last_error();
  EXPECT_EQ(a.started(), 2);
  EXPECT_EQ(GetLease("it-election-outage")["spec"].value("holderIdentity", ""), "candidate-a");
}

}  // namespace
}  // namespace gantry::testing

// Leader election through a coordination.k8s.io/v1 Lease, as client-go's leaderelection
// package does it, so that only one Gantry replica schedules at a time.
//
// A candidate reads the Lease. Nobody holds it (404, or an empty holderIdentity): take it.
// Somebody else holds it: take it only once the record (holder, renewTime and
// resourceVersion) has stayed unchanged for the lease's duration as measured on OUR
// monotonic clock since we first saw that record; the remote timestamps are never compared
// with our wall clock, so clock skew between replicas cannot cause two leaders. We hold
// it: renew with a PUT that carries the resourceVersion we read, so a concurrent writer
// makes one of the two PUTs fail with 409 (optimistic concurrency).
//
// The leader that cannot renew within renew_deadline stops leading. On stop it releases
// the Lease (empty holder, leaseDurationSeconds 1), like client-go's ReleaseOnCancel, so a
// successor takes over at its next retry instead of after a whole lease duration.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "k8s/client.h"

namespace gantry::k8s {

struct LeaderElectionOptions {
  std::string lease_namespace = "kube-system";
  std::string lease_name = "gantry";
  std::string identity;  // unique per replica, e.g. the pod name plus a random suffix
  // How long a non-leader waits, after the record last changed, before taking over.
  std::chrono::milliseconds lease_duration{15000};
  // How long the leader keeps trying to renew before it gives up leading. Must be
  // shorter than lease_duration so that it steps down before anyone may take over.
  std::chrono::milliseconds renew_deadline{10000};
  // The pause between attempts, both to acquire and to renew.
  std::chrono::milliseconds retry_period{2000};
  // On stop while leading, give the lease up so that a successor need not wait.
  bool release_on_stop = true;
};

// Called on the elector's thread; they must return quickly (start or signal a worker).
struct LeaderCallbacks {
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  // The holder we observe changed (our own identity included); "" when released.
  std::function<void(const std::string& holder)> on_new_leader;
};

// Time as the elector sees it. The default is the real clocks; tests replace it to skew
// the wall clock or to run without waiting.
class ElectionClock {
 public:
  virtual ~ElectionClock() = default;
  // Monotonic: all of the elector's decisions are based on this one.
  virtual std::chrono::steady_clock::time_point Now() const {
    return std::chrono::steady_clock::now();
  }
  // Only written into the Lease (acquireTime, renewTime) for humans and other tools.
  virtual std::chrono::system_clock::time_point WallNow() const {
    return std::chrono::system_clock::now();
  }
  // Sleeps for `d` or until `stop` is set.
  virtual void SleepFor(std::chrono::milliseconds d, const std::atomic<bool>& stop) const;
};

// The Lease's MicroTime format, "2006-01-02T15:04:05.000000Z" (always UTC).
std::string FormatMicroTime(std::chrono::system_clock::time_point t);

class LeaderElector {
 public:
  // The client's timeout should stay well below renew_deadline (a request stuck for
  // longer could keep a deposed leader unaware); is_leader() turns false at the deadline
  // regardless. `clock` may be null (real clocks).
  LeaderElector(Client& client, LeaderElectionOptions options, LeaderCallbacks callbacks = {},
                std::shared_ptr<const ElectionClock> clock = nullptr);

  // Campaigns, leads, and campaigns again after losing the lease, until `stop` is set;
  // then releases the lease if it leads. Blocking: run it on its own thread.
  void Run(const std::atomic<bool>& stop);

  // True while we hold the lease and our last successful renewal is within renew_deadline.
  bool is_leader() const;
  // The holder we last observed ("" when none).
  std::string leader() const;
  // The last error met talking to the server, "" after a success; for logs and tests.
  std::string last_error() const;
  const LeaderElectionOptions& options() const { return options_; }

 private:
  // One attempt to acquire or renew. Returns true when we hold the lease afterwards.
  bool TryAcquireOrRenew();
  // PUTs `lease` with our record; false (with last_error set) when the server refuses.
  bool Update(nlohmann::json lease, bool keep_acquire_time);
  bool Create();
  // Takes note of the lease as read from the server; restarts the expiry wait when the
  // record changed since we last looked.
  void Observe(const nlohmann::json& lease);
  void Release();
  void SetLeading(bool leading);
  void SetError(std::string error);
  std::string LeasePath() const;
  nlohmann::json Spec(int64_t transitions, const std::string& acquire_time) const;

  Client& client_;
  LeaderElectionOptions options_;
  LeaderCallbacks callbacks_;
  std::shared_ptr<const ElectionClock> clock_;

  // The elector's own view, touched only by Run's thread.
  nlohmann::json observed_;      // the lease as last read or written
  std::string observed_record_;  // holder + renewTime + resourceVersion of observed_
  std::chrono::steady_clock::time_point observed_at_;  // when observed_record_ last changed

  mutable std::mutex mu_;  // guards what other threads read
  bool leading_ = false;
  std::chrono::steady_clock::time_point last_renew_;
  std::string holder_;
  std::string last_error_;
};

}  // namespace gantry::k8s

// Everything the daemon writes to the API server, off the scheduling thread: binds (with
// the GPU device annotation first, for shared GPUs) on a pool of `bind_workers`, and
// status, conditions and events on a smaller pool so that they never delay a bind.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <thread>
#include <vector>

#include "daemon/api_requests.h"
#include "k8s/client.h"

namespace gantry {

// A fixed set of threads working through a queue of jobs.
class WorkPool {
 public:
  explicit WorkPool(int threads);
  ~WorkPool();  // finishes the queued work, then joins
  void Submit(std::function<void()> work);
  size_t queued() const;

 private:
  void Loop();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

struct BindResult {
  BindRequest request;
  bool ok = false;
  bool conflict = false;  // 409: the pod is already bound (or is another pod now)
  // The claims are written, and the bind waits for their binding conditions (ok is true;
  // no bind was sent).
  bool waiting = false;
  int status = 0;  // the API server's HTTP status; 0 when no answer came
  // For the bind-failure metric: conflict, not_found, forbidden, invalid, server_error,
  // unavailable (no answer) or other.
  std::string Reason() const;
  std::string error;
  double latency_s = 0;
};

struct EvictResult {
  EvictRequest request;
  bool ok = false;
  // 429: a PodDisruptionBudget allows no disruption now (or its status is not current).
  bool refused = false;
  int status = 0;  // the API server's HTTP status; 0 when no answer came
  std::string error;
  // For the eviction metric: evicted, refused, not_found, or failed.
  std::string Result() const;
};

class ApiWriter {
 public:
  // `on_bound` runs on a bind worker thread for every bind, done or failed. The binding of
  // a gang member (BindRequest::gang_member) carries `gang_annotations`, which the API server
  // puts on the pod in the same write as its node (GangBindingAnnotations).
  ApiWriter(k8s::Client& client, int bind_workers, std::string identity,
            std::function<void(BindResult)> on_bound,
            std::map<std::string, std::string> gang_annotations = {});

  void Bind(BindRequest request);
  // Takes back the claim writes of a bind that will not happen (its binding conditions
  // failed or timed out): the pod's reservation, and each allocation it wrote once no pod
  // holds the claim, then the finalizer; on the bind workers.
  void ReleaseClaims(BindRequest request);
  // Deletes claims left for pods' extended resources by attempts that did not bind (their
  // finalizer first), on the bind workers.
  void DeleteLeftClaims(std::vector<ClaimWrite> claims);
  // A pod's volume writes, in order, on the bind workers; `done` runs on that thread.
  void WriteVolumes(VolumeWrites writes, std::function<void(VolumeWriteResult)> done);
  // An eviction through the Eviction API (policy/v1, which honours PodDisruptionBudgets),
  // on the bind workers; `done` runs on that thread.
  void Evict(EvictRequest request, std::function<void(EvictResult)> done);
  // status.nominatedNodeName of a pod waiting for room being released.
  void WriteNominatedNode(NominatedNode nominated);
  void WriteCondition(PodCondition condition);
  void WriteGroupStatus(GroupStatus status);
  // Warning events are always written. Normal ones (a pod was scheduled) are best effort:
  // beyond kNormalEventsPerSecond (burst kNormalEventBurst) they are dropped, so that a
  // burst of binds is not slowed by as many event writes.
  void WriteEvent(ObjectEvent event);
  size_t binds_queued() const { return binds_.queued(); }
  int64_t write_failures() const { return write_failures_.load(); }
  int64_t events_dropped() const { return events_dropped_.load(); }

  static constexpr double kNormalEventsPerSecond = 50;
  static constexpr double kNormalEventBurst = 100;

 private:
  BindResult DoBind(const BindRequest& request);
  // kube-scheduler's DynamicResources PreBind (api_writer_claims.cc): each claim of the pod
  // gets the delete-protection finalizer, the allocation the session made and the pod in
  // status.reservedFor, each write conditional on the resourceVersion read, re-read and
  // retried on a conflict. Returns "" once all are written, else why (*status: the API
  // server's answer, 0 when none came); *written says what was, for UndoClaims.
  struct ClaimWritten {
    size_t index = 0;  // in BindRequest::claims
    bool finalizer = false;
    bool allocation = false;
    bool reservation = false;
  };
  std::string WriteClaims(const BindRequest& request, std::vector<ClaimWritten>* written,
                          int* status);
  // The delete-protection finalizer added by one JSON patch that applies only if the claim is
  // still as the cache saw it (ClaimWrite::seen_version): the claim as written, or null
  // when it was not (changed since, or any other failure: then it is read and written).
  nlohmann::json AddFinalizerAsSeen(const ClaimWrite& claim);
  // Takes back what WriteClaims wrote, last first, as far as it can: the reservation, the
  // allocation once no pod holds the claim, then the finalizer.
  void UndoClaims(const BindRequest& request, const std::vector<ClaimWritten>& written);
  // kube-scheduler's PreBind for extended resources served by DRA (api_writer_extended.cc):
  // the claim made from the pod's containers, with no status; the ClaimWrite that gives it
  // its finalizer, allocation and reservation through WriteClaims; "" or why (*status as
  // WriteClaims'), *shape its requests and mappings.
  std::string CreateExtendedClaim(const BindRequest& request, ClaimWrite* write,
                                  ExtendedClaimShape* shape, int* status);
  // Then the pod's status.extendedResourceClaimStatus.
  std::string WriteExtendedClaimStatus(const BindRequest& request, const std::string& claim,
                                       const ExtendedClaimShape& shape, int* status);
  // Deletes the claim made for a pod whose bind failed (its finalizer first), as
  // kube-scheduler's Unreserve does.
  void DeleteExtendedClaim(const ClaimWrite& claim);
  // What a bind wrote of its claims, undone (UndoClaims), and the extended resources'
  // claim it made, deleted.
  void TakeBackClaims(const BindRequest& request, const std::vector<ClaimWritten>& written);
  // What a request with claims_written wrote: each reservation, and the allocation and
  // finalizer of each claim it allocated.
  static std::vector<ClaimWritten> AllWritten(const BindRequest& request);
  EvictResult DoEvict(const EvictRequest& request);
  // A native PodGroup's status is its PodGroupInitiallyScheduled condition alone.
  void WriteNativeGroupCondition(GroupStatus status);
  VolumeWriteResult DoWriteVolumes(const VolumeWrites& writes);
  void Check(const Result<k8s::Response>& response, const std::string& what);

  k8s::Client& client_;
  std::string identity_;
  std::function<void(BindResult)> on_bound_;
  const std::map<std::string, std::string> gang_annotations_;
  std::atomic<int64_t> write_failures_{0};
  std::atomic<int64_t> events_dropped_{0};
  std::mutex bucket_mu_;
  double bucket_tokens_ = kNormalEventBurst;
  std::chrono::steady_clock::time_point bucket_time_ = std::chrono::steady_clock::now();
  // Declared last: destroyed first, so their threads stop before the members they use.
  WorkPool status_;
  WorkPool binds_;
};

// The current time as Kubernetes writes it: "2026-11-29T22:30:00Z" (micro: with
// microseconds, for MicroTime fields).
std::string NowRfc3339(bool micro = false);

}  // namespace gantry

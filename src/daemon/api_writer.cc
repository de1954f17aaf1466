#include "daemon/api_writer.h"

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/objects.h"

namespace gantry {
namespace {

using json = nlohmann::json;
constexpr const char* kMergePatch = "application/merge-patch+json";
constexpr const char* kStrategicPatch = "application/strategic-merge-patch+json";

std::string PodPath(const std::string& namespace_, const std::string& name) {
  return "/api/v1/namespaces/" + namespace_ + "/pods/" + name;
}

std::string GroupPath(k8s::GroupApi api, const std::string& namespace_, const std::string& name) {
  return std::string("/apis/") + GroupApiVersion(api) + "/namespaces/" + namespace_ + "/" +
         GroupResource(api) + "/" + name;
}

}  // namespace

std::string NowRfc3339(bool micro) {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[40];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
  std::string out = buffer;
  if (micro) {
    auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
        1000000;
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(us));
    out += frac;
  }
  return out + "Z";
}

WorkPool::WorkPool(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkPool::~WorkPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkPool::Submit(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(work));
  }
  cv_.notify_one();
}

size_t WorkPool::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void WorkPool::Loop() {
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
  }
}

ApiWriter::ApiWriter(k8s::Client& client, int bind_workers, std::string identity,
                     std::function<void(BindResult)> on_bound,
                     std::map<std::string, std::string> gang_annotations)
    : client_(client),
      identity_(std::move(identity)),
      on_bound_(std::move(on_bound)),
      gang_annotations_(std::move(gang_annotations)),
      status_(4),
      binds_(bind_workers) {}

void ApiWriter::Bind(BindRequest request) {
  binds_.Submit([this, request = std::move(request)] { on_bound_(DoBind(request)); });
}

void ApiWriter::ReleaseClaims(BindRequest request) {
  binds_.Submit(
      [this, request = std::move(request)] { TakeBackClaims(request, AllWritten(request)); });
}

void ApiWriter::DeleteLeftClaims(std::vector<ClaimWrite> claims) {
  binds_.Submit([this, claims = std::move(claims)] {
    for (const ClaimWrite& c : claims) DeleteExtendedClaim(c);
  });
}

void ApiWriter::TakeBackClaims(const BindRequest& r, const std::vector<ClaimWritten>& written) {
  UndoClaims(r, written);
  for (const ClaimWrite& c : r.claims) {
    if (c.extended) DeleteExtendedClaim(c);
  }
}

void ApiWriter::WriteVolumes(VolumeWrites writes, std::function<void(VolumeWriteResult)> done) {
  binds_.Submit(
      [this, writes = std::move(writes), done = std::move(done)] { done(DoWriteVolumes(writes)); });
}

VolumeWriteResult ApiWriter::DoWriteVolumes(const VolumeWrites& w) {
  VolumeWriteResult result;
  result.namespace_ = w.namespace_;
  result.name = w.name;
  result.uid = w.uid;
  for (const VolumeWrite& write : w.writes) {
    auto response = client_.Request("PATCH", write.path, write.patch, kMergePatch);
    if (!response.ok()) {
      result.error = "updating " + write.what + ": " + response.status().message();
      return result;
    }
    if (!response->ok()) {
      result.error = "updating " + write.what + ": " + response->Describe();
      return result;
    }
    // Its new resourceVersion, so that the pod waits until the watch has shown it.
    std::string version;
    auto body = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
    if (body.is_object()) version = k8s::String(k8s::Field(body, "metadata"), "resourceVersion");
    result.versions.emplace_back(write.object_key, version);
  }
  result.ok = true;
  return result;
}

std::string BindResult::Reason() const {
  if (status == 0) return "unavailable";
  if (status == 409) return "conflict";
  if (status == 404) return "not_found";
  if (status == 401 || status == 403) return "forbidden";
  if (status == 400 || status == 422) return "invalid";
  if (status >= 500) return "server_error";
  return "other";
}

BindResult ApiWriter::DoBind(const BindRequest& r) {
  BindResult result;
  result.request = r;
  auto started = std::chrono::steady_clock::now();
  int status = 0;
  auto finish = [&](bool ok, bool conflict, std::string error) {
    result.ok = ok;
    result.conflict = conflict;
    result.status = status;
    result.error = std::move(error);
    result.latency_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
  };
  // DRA: no bind may get ahead of its claims (the kubelet refuses a pod whose claims are
  // not allocated and reserved for it). The claim of its extended resources is made first
  // and written last, as kube-scheduler lists it after the pod's own.
  const BindRequest* claiming = &r;
  BindRequest with_extended;
  std::optional<ClaimWrite> extended;
  ExtendedClaimShape shape;
  if (r.extended_claim && !r.claims_written) {
    ClaimWrite made;
    std::string why = CreateExtendedClaim(r, &made, &shape, &status);
    if (!why.empty()) return finish(false, status == 409, std::move(why));
    extended = made;
    with_extended = r;
    with_extended.claims.push_back(std::move(made));
    claiming = &with_extended;
  }
  std::vector<ClaimWritten> claims_written;
  auto undo = [&] { TakeBackClaims(*claiming, claims_written); };
  if (r.claims_written) {
    claims_written = AllWritten(r);
  } else if (!claiming->claims.empty()) {
    std::string why = WriteClaims(*claiming, &claims_written, &status);
    if (!why.empty()) {
      undo();
      return finish(false, status == 409, std::move(why));
    }
    // kube-scheduler's PreBind waits here for the binding conditions; the daemon waits on
    // the claim watch instead (DeviceClaims::PollBindingWaits), holding no worker. The
    // pod's extended resources' status is written first: the request that binds after the
    // wait makes and writes no claim (claims_written). The answer carries the claims
    // written, the extended one among them, so that its devices are waited for too and a
    // failed wait deletes it (TakeBackClaims).
    if (r.wait_for_binding_conditions) {
      if (extended) {
        why = WriteExtendedClaimStatus(r, extended->name, shape, &status);
        if (!why.empty()) {
          undo();
          return finish(false, status == 409, std::move(why));
        }
      }
      result.waiting = true;
      result.request = *claiming;
      return finish(true, false, "");
    }
  }
  auto failed = [&](bool conflict, std::string error) {
    undo();
    return finish(false, conflict, std::move(error));
  };
  if (extended) {
    std::string why = WriteExtendedClaimStatus(r, extended->name, shape, &status);
    if (!why.empty()) return failed(status == 409, std::move(why));
  }
  // The uid makes the bind fail (409) should the name now belong to another pod.
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", r.name}, {"namespace", r.namespace_}, {"uid", r.uid}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", r.node}}}};
  // The API server copies a Binding's annotations onto the pod as it sets spec.nodeName:
  // no write of their own, and never a pod bound without them (a shared GPU's devices, a gang
  // member's protection from autoscalers).
  json annotations = json::object();
  if (r.gang_member) {
    for (const auto& [key, value] : gang_annotations_) annotations[key] = value;
  }
  if (r.write_devices) annotations[k8s::kGpuDevicesAnnotation] = k8s::FormatDeviceList(r.gpus);
  if (!annotations.empty()) binding["metadata"]["annotations"] = std::move(annotations);
  auto response =
      client_.Request("POST", PodPath(r.namespace_, r.name) + "/binding", k8s::JsonText(binding));
  if (!response.ok()) return failed(false, response.status().message());
  status = response->status;
  if (!response->ok()) return failed(response->status == 409, "binding: " + response->Describe());
  return finish(true, false, "");
}

void ApiWriter::Evict(EvictRequest request, std::function<void(EvictResult)> done) {
  binds_.Submit(
      [this, request = std::move(request), done = std::move(done)] { done(DoEvict(request)); });
}

std::string EvictResult::Result() const {
  if (ok) return "evicted";
  if (refused) return "refused";
  if (status == 404) return "not_found";
  return "failed";
}

EvictResult ApiWriter::DoEvict(const EvictRequest& r) {
  EvictResult result;
  result.request = r;
  if (!r.native_group.empty()) {
    json condition = {{"type", k8s::kDisruptionTargetCondition},
                      {"status", "True"},
                      {"reason", "PreemptionByScheduler"},
                      {"message", r.reason},
                      {"lastTransitionTime", NowRfc3339()}};
    json patch = {{"status", {{"conditions", json::array({condition})}}}};
    Check(client_.Request(
              "PATCH", GroupPath(k8s::GroupApi::kNative, r.namespace_, r.native_group) + "/status",
              k8s::JsonText(patch), kStrategicPatch),
          "podgroup DisruptionTarget");
  }
  // The uid precondition: should the name belong to another pod now, nothing is evicted.
  json eviction = {{"apiVersion", "policy/v1"},
                   {"kind", "Eviction"},
                   {"metadata", {{"name", r.name}, {"namespace", r.namespace_}}},
                   {"deleteOptions", {{"preconditions", {{"uid", r.uid}}}}}};
  auto response =
      client_.Request("POST", PodPath(r.namespace_, r.name) + "/eviction", k8s::JsonText(eviction));
  if (!response.ok()) {
    result.error = response.status().message();
    return result;
  }
  result.status = response->status;
  result.ok = response->ok();
  result.refused = response->status == 429;
  if (!result.ok) result.error = response->Describe();
  return result;
}

void ApiWriter::WriteNominatedNode(NominatedNode n) {
  status_.Submit([this, n = std::move(n)] {
    json patch = {
        {"status", {{"nominatedNodeName", n.node.empty() ? json(nullptr) : json(n.node)}}}};
    Check(client_.Request("PATCH", PodPath(n.namespace_, n.name) + "/status", k8s::JsonText(patch),
                          kMergePatch),
          "nominatedNodeName");
  });
}

void ApiWriter::Check(const Result<k8s::Response>& response, const std::string& what) {
  if (!response.ok() || !response->ok()) write_failures_++;
  (void)what;
}

void ApiWriter::WriteCondition(PodCondition c) {
  status_.Submit([this, c = std::move(c)] {
    json patch = {{"status",
                   {{"conditions",
                     {{{"type", "PodScheduled"},
                       {"status", "False"},
                       {"reason", c.reason},
                       {"message", c.message},
                       {"lastProbeTime", nullptr},
                       {"lastTransitionTime", NowRfc3339()}}}}}}};
    Check(client_.Request("PATCH", PodPath(c.namespace_, c.name) + "/status", k8s::JsonText(patch),
                          kStrategicPatch),
          "condition");
  });
}

void ApiWriter::WriteGroupStatus(GroupStatus s) {
  if (s.api == k8s::GroupApi::kNative || s.api == k8s::GroupApi::kComposite) {
    return WriteNativeGroupCondition(std::move(s));
  }
  status_.Submit([this, s = std::move(s)] {
    json status = {{"phase", s.phase},
                   {"running", s.running},
                   {"succeeded", s.succeeded},
                   {"failed", s.failed}};
    if (s.api != k8s::GroupApi::kCoscheduling) {
      json condition = {
          {"type", s.unschedulable_message.empty() ? "Scheduled" : "Unschedulable"},
          {"status", "True"},
          {"transitionID", identity_},
          {"lastTransitionTime", NowRfc3339()},
          {"reason", s.unschedulable_message.empty() ? "tasks in gang are ready to be scheduled"
                                                     : "NotEnoughResources"},
          {"message", s.unschedulable_message}};
      status["conditions"] = json::array({condition});
    }
    json patch = {{"status", status}};
    const std::string path = GroupPath(s.api, s.namespace_, s.name);
    auto response = client_.Request("PATCH", path + "/status", k8s::JsonText(patch), kMergePatch);
    // Volcano's PodGroup CRD has no status subresource: its status is written with the object.
    if (response.ok() && response->status == 404) {
      response = client_.Request("PATCH", path, k8s::JsonText(patch), kMergePatch);
    }
    Check(response, "podgroup status");
  });
}

void ApiWriter::WriteNativeGroupCondition(GroupStatus s) {
  status_.Submit([this, s = std::move(s)] {
    json condition = {
        {"type", s.api == k8s::GroupApi::kComposite ? k8s::kCompositeInitiallyScheduledCondition
                                                    : k8s::kInitiallyScheduledCondition},
        {"status", s.scheduled ? "True" : "False"},
        {"reason", s.scheduled         ? "Scheduled"
                   : s.scheduler_error ? "SchedulerError"
                                       : "Unschedulable"},
        {"message", s.unschedulable_message},
        {"observedGeneration", s.generation}};
    // A strategic merge keeps the other conditions, and the transition time unless set.
    if (s.transition) condition["lastTransitionTime"] = NowRfc3339();
    json patch = {{"status", {{"conditions", json::array({condition})}}}};
    Check(client_.Request("PATCH", GroupPath(s.api, s.namespace_, s.name) + "/status",
                          k8s::JsonText(patch), kStrategicPatch),
          "podgroup condition");
  });
}

void ApiWriter::WriteEvent(ObjectEvent e) {
  if (e.type == "Normal") {
    std::lock_guard<std::mutex> lock(bucket_mu_);
    auto now = std::chrono::steady_clock::now();
    bucket_tokens_ =
        std::min(kNormalEventBurst,
                 bucket_tokens_ + kNormalEventsPerSecond *
                                      std::chrono::duration<double>(now - bucket_time_).count());
    bucket_time_ = now;
    if (bucket_tokens_ < 1) {
      events_dropped_++;
      return;
    }
    bucket_tokens_ -= 1;
  }
  status_.Submit([this, e = std::move(e)] {
    const std::string namespace_ = e.namespace_.empty() ? "default" : e.namespace_;
    const std::string now = NowRfc3339();
    json event = {
        {"apiVersion", "v1"},
        {"kind", "Event"},
        {"metadata", {{"generateName", e.name + "."}, {"namespace", namespace_}}},
        {"involvedObject",
         {{"apiVersion", e.api_version}, {"kind", e.kind}, {"name", e.name}, {"uid", e.uid}}},
        {"reason", e.reason},
        {"message", e.message.substr(0, 1024)},
        {"type", e.type},
        {"source", {{"component", "gantry"}}},
        {"reportingComponent", "gantry"},
        {"reportingInstance", identity_},
        {"firstTimestamp", now},
        {"lastTimestamp", now},
        {"count", 1}};
    if (!e.namespace_.empty()) event["involvedObject"]["namespace"] = e.namespace_;
    Check(client_.Request("POST", "/api/v1/namespaces/" + namespace_ + "/events",
                          k8s::JsonText(event)),
          "event");
  });
}

}  // namespace gantry

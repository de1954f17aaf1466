#include "k8s/leader_election.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <thread>

#include "k8s/json_text.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

std::string StringAt(const json& object, const char* a, const char* b) {
  if (!object.is_object() || !object.contains(a) || !object[a].is_object()) return "";
  const json& inner = object[a];
  return inner.contains(b) && inner[b].is_string() ? inner[b].get<std::string>() : "";
}

int64_t IntAt(const json& object, const char* a, const char* b) {
  if (!object.is_object() || !object.contains(a) || !object[a].is_object()) return 0;
  const json& inner = object[a];
  return inner.contains(b) && inner[b].is_number_integer() ? inner[b].get<int64_t>() : 0;
}

std::string Holder(const json& lease) {
  return StringAt(lease, "spec", "holderIdentity");
}

int64_t DurationSeconds(milliseconds d) {
  return std::max<int64_t>(1, (d.count() + 999) / 1000);
}

}  // namespace

void ElectionClock::SleepFor(milliseconds d, const std::atomic<bool>& stop) const {
  auto until = std::chrono::steady_clock::now() + d;
  while (!stop.load()) {
    auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, milliseconds(20)));
  }
}

std::string FormatMicroTime(std::chrono::system_clock::time_point t) {
  auto seconds = std::chrono::floor<std::chrono::seconds>(t);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t - seconds).count();
  std::time_t tt = std::chrono::system_clock::to_time_t(seconds);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(micros));
  return buffer;
}

LeaderElector::LeaderElector(Client& client, LeaderElectionOptions options,
                             LeaderCallbacks callbacks, std::shared_ptr<const ElectionClock> clock)
    : client_(client),
      options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      clock_(clock ? std::move(clock) : std::make_shared<const ElectionClock>()) {}

bool LeaderElector::is_leader() const {
  std::lock_guard<std::mutex> lock(mu_);
  // Past the deadline we may already have been replaced, even if the renewing request
  // has not returned yet.
  return leading_ && clock_->Now() - last_renew_ < options_.renew_deadline;
}

std::string LeaderElector::leader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return holder_;
}

std::string LeaderElector::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

void LeaderElector::SetError(std::string error) {
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = std::move(error);
}

std::string LeaderElector::LeasePath() const {
  return "/apis/coordination.k8s.io/v1/namespaces/" + options_.lease_namespace + "/leases/" +
         options_.lease_name;
}

json LeaderElector::Spec(int64_t transitions, const std::string& acquire_time) const {
  return {{"holderIdentity", options_.identity},
          {"leaseDurationSeconds", DurationSeconds(options_.lease_duration)},
          {"acquireTime", acquire_time},
          {"renewTime", FormatMicroTime(clock_->WallNow())},
          {"leaseTransitions", transitions}};
}

void LeaderElector::Observe(const json& lease) {
  std::string holder = Holder(lease);
  std::string record = holder + "|" + StringAt(lease, "spec", "renewTime") + "|" +
                       StringAt(lease, "metadata", "resourceVersion");
  if (record != observed_record_) {
    observed_record_ = std::move(record);
    observed_at_ = clock_->Now();
  }
  observed_ = lease;
  bool changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    changed = holder != holder_;
    holder_ = holder;
  }
  if (changed && callbacks_.on_new_leader) callbacks_.on_new_leader(holder);
}

bool LeaderElector::Create() {
  json lease = {
      {"apiVersion", "coordination.k8s.io/v1"},
      {"kind", "Lease"},
      {"metadata", {{"name", options_.lease_name}, {"namespace", options_.lease_namespace}}},
      {"spec", Spec(0, FormatMicroTime(clock_->WallNow()))}};
  auto response = client_.Request(
      "POST", "/apis/coordination.k8s.io/v1/namespaces/" + options_.lease_namespace + "/leases",
      JsonText(lease));
  if (!response.ok()) {
    SetError(response.status().message());
    return false;
  }
  if (!response->ok()) {  // 409: another candidate created it first
    SetError("create lease " + options_.lease_name + ": " + response->Describe());
    return false;
  }
  json created = json::parse(response->body, nullptr, false);
  Observe(created.is_object() ? created : lease);
  SetError("");
  return true;
}

bool LeaderElector::Update(json lease, bool keep_acquire_time) {
  int64_t transitions = IntAt(lease, "spec", "leaseTransitions");
  std::string acquire_time = StringAt(lease, "spec", "acquireTime");
  if (!keep_acquire_time) {
    ++transitions;
    acquire_time = FormatMicroTime(clock_->WallNow());
  }
  if (acquire_time.empty()) acquire_time = FormatMicroTime(clock_->WallNow());
  // Keep the object as read (metadata.resourceVersion makes the PUT conditional; other
  // spec fields, from newer API versions, survive).
  json spec = Spec(transitions, acquire_time);
  if (!lease["spec"].is_object()) lease["spec"] = json::object();
  for (auto& [key, value] : spec.items()) lease["spec"][key] = value;
  auto response = client_.Request("PUT", LeasePath(), JsonText(lease));
  if (!response.ok()) {
    SetError(response.status().message());
    return false;
  }
  if (!response->ok()) {  // 409: somebody wrote the lease since we read it
    SetError("update lease " + options_.lease_name + ": " + response->Describe());
    return false;
  }
  json updated = json::parse(response->body, nullptr, false);
  if (!updated.is_object()) {
    SetError("update lease " + options_.lease_name + ": the answer is not JSON");
    return false;
  }
  Observe(updated);
  SetError("");
  return true;
}

bool LeaderElector::TryAcquireOrRenew() {
  // Fast path for the leader: renew from the copy we wrote last, without a GET. If anyone
  // wrote the lease since, the PUT fails with 409 and the slow path reads what is there.
  if (Holder(observed_) == options_.identity && Update(observed_, /*keep_acquire_time=*/true)) {
    return true;
  }
  auto response = client_.Get(LeasePath());
  if (!response.ok()) {
    SetError(response.status().message());
    return false;
  }
  if (response->status == 404) return Create();
  if (!response->ok()) {
    SetError("get lease " + options_.lease_name + ": " + response->Describe());
    return false;
  }
  json lease = json::parse(response->body, nullptr, false);
  if (!lease.is_object()) {
    SetError("get lease " + options_.lease_name + ": the answer is not JSON");
    return false;
  }
  Observe(lease);
  const std::string holder = Holder(lease);
  const bool ours = holder == options_.identity;
  if (!holder.empty() && !ours) {
    // Honour the holder's own duration when it wrote one; ours otherwise.
    int64_t seconds = IntAt(lease, "spec", "leaseDurationSeconds");
    auto duration = seconds > 0 ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::seconds(seconds))
                                : std::chrono::steady_clock::duration(options_.lease_duration);
    if (clock_->Now() - observed_at_ < duration) return false;  // still held
  }
  return Update(std::move(lease), /*keep_acquire_time=*/ours);
}

void LeaderElector::Release() {
  if (Holder(observed_) != options_.identity) return;
  json lease = observed_;
  std::string now = FormatMicroTime(clock_->WallNow());
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["acquireTime"] = now;
  lease["spec"]["renewTime"] = now;
  auto response = client_.Request("PUT", LeasePath(), JsonText(lease));
  if (!response.ok()) {
    SetError("release lease " + options_.lease_name + ": " + response.status().message());
  } else if (!response->ok()) {
    SetError("release lease " + options_.lease_name + ": " + response->Describe());
  } else {
    json released = json::parse(response->body, nullptr, false);
    if (released.is_object()) Observe(released);
  }
}

void LeaderElector::SetLeading(bool leading) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    leading_ = leading;
    if (leading) last_renew_ = clock_->Now();
  }
  const auto& callback = leading ? callbacks_.on_started_leading : callbacks_.on_stopped_leading;
  if (callback) callback();
}

void LeaderElector::Run(const std::atomic<bool>& stop) {
  // Jitter spreads the candidates' attempts so they do not collide on every retry.
  std::minstd_rand random(static_cast<uint32_t>(std::hash<std::string>()(options_.identity)));
  std::uniform_int_distribution<int64_t> jitter(0, options_.retry_period.count() / 5);
  while (!stop.load()) {
    bool acquired = false;
    while (!stop.load() && !(acquired = TryAcquireOrRenew())) {
      clock_->SleepFor(options_.retry_period + milliseconds(jitter(random)), stop);
    }
    if (!acquired) break;
    SetLeading(true);
    while (!stop.load()) {
      clock_->SleepFor(options_.retry_period, stop);
      if (stop.load()) break;
      if (TryAcquireOrRenew()) {
        std::lock_guard<std::mutex> lock(mu_);
        last_renew_ = clock_->Now();
        continue;
      }
      const std::string holder = leader();
      if (!holder.empty() && holder != options_.identity) break;  // taken over: step down now
      std::lock_guard<std::mutex> lock(mu_);
      if (clock_->Now() - last_renew_ >= options_.renew_deadline) break;
    }
    // Stop working before the lease is released, so a successor never overlaps with us.
    SetLeading(false);
    if (stop.load() && options_.release_on_stop) Release();
  }
}

}  // namespace gantry::k8s

// The ApiWriter's DRA writes before a bind, as kube-scheduler's DynamicResources PreBind
// makes them (k8s.io/kubernetes pkg/scheduler/framework/plugins/dynamicresources, v1.37.2):
// with an allocation to write, the claim's delete-protection finalizer (an update of the
// claim); then its allocation, its allocationTimestamp where it has none, and the pod in
// status.reservedFor (an update of its status), each conditional on the resourceVersion
// read and retried, re-read, on a conflict. Undone on any failure: the reservation, and
// (further than kube-scheduler's Unreserve, which leaves deallocation to a later cycle) the
// allocation written and the finalizer added, once no pod holds the claim.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/api_writer.h"
#include "k8s/dra_objects.h"
#include "k8s/json_text.h"
#include "model/dra.h"

namespace gantry {
namespace {

using json = nlohmann::json;

// Reads, conflicts and retries: a claim that several schedulers' writes race on settles
// within a few rounds; beyond that the bind fails and the pod is tried again.
constexpr int kClaimAttempts = 5;

std::string ClaimPath(const ClaimWrite& c) {
  return "/apis/resource.k8s.io/v1/namespaces/" + c.namespace_ + "/resourceclaims/" + c.name;
}

std::string ClaimName(const ClaimWrite& c) {
  return "resourceclaim " + c.namespace_ + "/" + c.name;
}

bool HasFinalizer(const json& claim) {
  const json& metadata = claim.value("metadata", json::object());
  auto it = metadata.find("finalizers");
  if (it == metadata.end() || !it->is_array()) return false;
  return std::find(it->begin(), it->end(), json(std::string(dra::kClaimFinalizer))) != it->end();
}

json* ReservedFor(json& claim) {
  json& status = claim["status"];
  if (!status.is_object()) status = json::object();
  json& reserved = status["reservedFor"];
  if (!reserved.is_array()) reserved = json::array();
  return &reserved;
}

bool Reserves(const json& reserved, const std::string& uid) {
  return std::any_of(reserved.begin(), reserved.end(),
                     [&](const json& r) { return r.is_object() && r.value("uid", "") == uid; });
}

}  // namespace

json ApiWriter::AddFinalizerAsSeen(const ClaimWrite& c) {
  // RFC 6902: the tests make the patch apply only to the claim as the cache saw it (the
  // same object, unchanged since), so that replacing an absent list cannot drop anyone's
  // finalizer; any failure leaves the claim as it was.
  const std::string finalizer(dra::kClaimFinalizer);
  json patch = json::array();
  patch.push_back({{"op", "test"}, {"path", "/metadata/uid"}, {"value", c.uid}});
  patch.push_back({{"op", "test"},
                   {"path", "/metadata/resourceVersion"},
                   {"value", std::to_string(c.seen_version)}});
  if (c.seen_any_finalizer) {
    patch.push_back({{"op", "add"}, {"path", "/metadata/finalizers/-"}, {"value", finalizer}});
  } else {
    patch.push_back(
        {{"op", "add"}, {"path", "/metadata/finalizers"}, {"value", json::array({finalizer})}});
  }
  auto patched =
      client_.Request("PATCH", ClaimPath(c), k8s::JsonText(patch), "application/json-patch+json");
  if (!patched.ok() || !patched->ok()) return nullptr;
  json claim = json::parse(patched->body, nullptr, /*allow_exceptions=*/false);
  return claim.is_object() ? claim : json(nullptr);
}

std::string ApiWriter::WriteClaims(const BindRequest& r, std::vector<ClaimWritten>* written,
                                   int* status) {
  for (size_t i = 0; i < r.claims.size(); ++i) {
    const ClaimWrite& c = r.claims[i];
    const std::string path = ClaimPath(c);
    ClaimWritten w;
    w.index = i;
    std::string why;
    bool done = false;
    // First, where the cache's copy allows, the finalizer without a read (AddFinalizerAsSeen).
    json claim;
    if (c.allocation && c.seen_version > 0 && !c.extended) {
      claim = AddFinalizerAsSeen(c);
      w.finalizer = claim.is_object();
    }
    for (int attempt = 0; attempt < kClaimAttempts && !done; ++attempt) {
      why.clear();
      if (attempt > 0 || !claim.is_object()) {
        auto got = client_.Get(path);
        if (!got.ok()) {
          why = got.status().message();
          *status = 0;
          break;
        }
        *status = static_cast<int>(got->status);
        if (!got->ok()) {
          why = "reading it: " + got->Describe();
          break;
        }
        claim = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
        if (!claim.is_object()) {
          why = "reading it: the answer is not a JSON object";
          break;
        }
      }
      const json& meta = claim.value("metadata", json::object());
      if (!c.uid.empty() && meta.value("uid", "") != c.uid) {
        why = "it was deleted and made again since the pod was placed";
        break;
      }
      if (meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null()) {
        why = "it is being deleted";
        break;
      }
      // The finalizer goes on with an allocation (a claim allocated already has it).
      if (c.allocation && !HasFinalizer(claim)) {
        json& finalizers = claim["metadata"]["finalizers"];
        if (!finalizers.is_array()) finalizers = json::array();
        finalizers.push_back(std::string(dra::kClaimFinalizer));
        auto put = client_.Request("PUT", path, k8s::JsonText(claim));
        if (!put.ok()) {
          why = "adding its finalizer: " + put.status().message();
          *status = 0;
          break;
        }
        *status = static_cast<int>(put->status);
        if (put->status == 409) continue;  // changed meanwhile: read it again
        if (!put->ok()) {
          why = "adding its finalizer: " + put->Describe();
          break;
        }
        w.finalizer = true;
        claim = json::parse(put->body, nullptr, /*allow_exceptions=*/false);
        if (!claim.is_object()) {
          why = "adding its finalizer: the answer is not a JSON object";
          break;
        }
      }
      json* reserved = ReservedFor(claim);
      const bool reserved_already = Reserves(*reserved, c.consumer.uid);
      json& allocation = claim["status"]["allocation"];
      bool allocate = false;
      if (allocation.is_null()) {
        if (!c.allocation) {
          why = "it is not allocated any more";
          break;
        }
        allocation = k8s::EncodeAllocation(*c.allocation);
        allocate = true;
      } else if (c.allocation && !reserved_already) {
        // Allocated by someone else since the session saw it.
        why = "it was allocated meanwhile";
        *status = 409;
        break;
      }
      if (!reserved_already) {
        if (reserved->size() >= static_cast<size_t>(dra::kMaxReservedFor)) {
          why = "it is reserved for " + std::to_string(dra::kMaxReservedFor) + " consumers already";
          break;
        }
        json consumer = {
            {"resource", c.consumer.resource}, {"name", c.consumer.name}, {"uid", c.consumer.uid}};
        if (!c.consumer.api_group.empty()) consumer["apiGroup"] = c.consumer.api_group;
        reserved->push_back(std::move(consumer));
      }
      if (!allocate && reserved_already) {
        done = true;
        break;
      }
      // As kube-scheduler 1.37 does (DRADeviceBindingConditions and
      // DRAResourceClaimDeviceStatus are on by default): the allocation's time, once.
      if (!allocation.contains("allocationTimestamp") ||
          allocation["allocationTimestamp"].is_null()) {
        allocation["allocationTimestamp"] = NowRfc3339();
      }
      auto put = client_.Request("PUT", path + "/status", k8s::JsonText(claim));
      if (!put.ok()) {
        why = "writing its allocation and reservation: " + put.status().message();
        *status = 0;
        break;
      }
      *status = static_cast<int>(put->status);
      if (put->status == 409) continue;
      if (!put->ok()) {
        why = "writing its allocation and reservation: " + put->Describe();
        break;
      }
      w.allocation = allocate;
      w.reservation = !reserved_already;
      done = true;
    }
    if (w.finalizer || w.allocation || w.reservation) written->push_back(w);
    if (!done) {
      if (why.empty()) why = "still changing after " + std::to_string(kClaimAttempts) + " tries";
      return ClaimName(c) + ": " + why;
    }
  }
  return "";
}

std::vector<ApiWriter::ClaimWritten> ApiWriter::AllWritten(const BindRequest& r) {
  std::vector<ClaimWritten> written;
  for (size_t i = 0; i < r.claims.size(); ++i) {
    ClaimWritten w;
    w.index = i;
    w.allocation = r.claims[i].allocation.has_value();
    w.finalizer = w.allocation;
    w.reservation = true;
    written.push_back(w);
  }
  return written;
}

void ApiWriter::UndoClaims(const BindRequest& r, const std::vector<ClaimWritten>& written) {
  for (auto w = written.rbegin(); w != written.rend(); ++w) {
    const ClaimWrite& c = r.claims[w->index];
    const std::string path = ClaimPath(c);
    bool deallocated = !w->allocation;
    for (int attempt = 0; attempt < kClaimAttempts && (w->allocation || w->reservation);
         ++attempt) {
      auto got = client_.Get(path);
      if (!got.ok() || !got->ok()) break;
      json claim = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
      if (!claim.is_object()) break;
      json* reserved = ReservedFor(claim);
      // A reservation for the pod's group stays: another pod of the group may be bound
      // with it already, and the group's claim is the group's whatever this pod does (the
      // resourceclaim controller drops it with the group).
      if (c.consumer.resource == "pods") {
        reserved->erase(std::remove_if(reserved->begin(), reserved->end(),
                                       [&](const json& x) {
                                         return x.is_object() && x.value("uid", "") == r.uid;
                                       }),
                        reserved->end());
      }
      // The allocation goes only if it is ours and no other pod holds the claim.
      const bool drop = w->allocation && reserved->empty();
      // With the allocation go the drivers' reports of its devices, as kube-scheduler's
      // PostFilter deallocates (the API server drops them too).
      if (drop) {
        claim["status"].erase("allocation");
        claim["status"].erase("devices");
      }
      if (reserved->empty()) claim["status"].erase("reservedFor");
      auto put = client_.Request("PUT", path + "/status", k8s::JsonText(claim));
      if (put.ok() && put->status == 409) continue;
      if (put.ok() && put->ok()) deallocated = drop || !w->allocation;
      break;
    }
    if (!w->finalizer || !deallocated) continue;
    for (int attempt = 0; attempt < kClaimAttempts; ++attempt) {
      auto got = client_.Get(path);
      if (!got.ok() || !got->ok()) break;
      json claim = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
      if (!claim.is_object() || !HasFinalizer(claim)) break;
      const json& status = claim.value("status", json::object());
      if (status.contains("allocation") && !status["allocation"].is_null()) break;
      json& finalizers = claim["metadata"]["finalizers"];
      finalizers.erase(std::remove(finalizers.begin(), finalizers.end(),
                                   json(std::string(dra::kClaimFinalizer))),
                       finalizers.end());
      auto put = client_.Request("PUT", path, k8s::JsonText(claim));
      if (put.ok() && put->status == 409) continue;
      break;
    }
  }
}

}  // namespace gantry

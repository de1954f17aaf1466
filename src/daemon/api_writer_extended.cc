// The ApiWriter's writes for a pod's extended resources served by DRA, as kube-scheduler's
// DynamicResources PreBind and Unreserve make them (k8s.io/kubernetes v1.37
// pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go): the
// claim created from the pod's containers (generateName "<pod>-extended-resources-", the
// extended-resource-claim annotation, the pod as controller owner, no status); its
// finalizer, allocation and reservation written as any claim's (WriteClaims); then the
// pod's status.extendedResourceClaimStatus. On a failure after the create, the claim is
// deleted, its finalizer taken off first.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/api_writer.h"
#include "k8s/json_text.h"
#include "model/dra.h"

namespace gantry {
namespace {

using json = nlohmann::json;
constexpr const char* kMergePatch = "application/merge-patch+json";
constexpr int kDeleteAttempts = 5;

std::string ClaimsPath(const std::string& namespace_) {
  return "/apis/resource.k8s.io/v1/namespaces/" + namespace_ + "/resourceclaims";
}

std::string PodPathOf(const BindRequest& r) {
  return "/api/v1/namespaces/" + r.namespace_ + "/pods/" + r.name;
}

}  // namespace

std::string ApiWriter::CreateExtendedClaim(const BindRequest& r, ClaimWrite* write,
                                           ExtendedClaimShape* shape, int* status) {
  const ExtendedClaimWrite& extended = *r.extended_claim;
  // The pod as the API server has it now: its containers shape the claim.
  auto got = client_.Get(PodPathOf(r));
  if (!got.ok()) {
    *status = 0;
    return "reading the pod for its extended resources' claim: " + got.status().message();
  }
  *status = static_cast<int>(got->status);
  if (!got->ok()) return "reading the pod for its extended resources' claim: " + got->Describe();
  const json pod = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
  if (!pod.is_object()) return "reading the pod: the answer is not a JSON object";
  if (pod.value("metadata", json::object()).value("uid", "") != r.uid) {
    *status = 409;
    return "the pod was deleted and made again since it was placed";
  }
  *shape = ShapeExtendedClaim(ContainersOf(pod), extended.resources);
  auto allocation = AllocationForShape(extended.allocation, extended.resources, *shape);
  if (!allocation.ok()) return "its extended resources' claim: " + allocation.status().message();
  const json claim = ExtendedClaimObject(r.namespace_, r.name, r.uid, *shape);
  auto created = client_.Request("POST", ClaimsPath(r.namespace_), k8s::JsonText(claim));
  if (!created.ok()) {
    *status = 0;
    return "creating the claim for its extended resources: " + created.status().message();
  }
  *status = static_cast<int>(created->status);
  if (!created->ok()) {
    return "creating the claim for its extended resources: " + created->Describe();
  }
  const json made = json::parse(created->body, nullptr, /*allow_exceptions=*/false);
  const json& meta = made.is_object() ? made.value("metadata", json::object()) : json::object();
  write->namespace_ = r.namespace_;
  write->name = meta.value("name", "");
  write->uid = meta.value("uid", "");
  write->allocation = std::move(allocation).value();
  write->extended = true;
  write->consumer = {"", "pods", r.name, r.uid};
  if (write->name.empty())
    return "creating the claim for its extended resources: no name came back";
  return "";
}

std::string ApiWriter::WriteExtendedClaimStatus(const BindRequest& r, const std::string& claim,
                                                const ExtendedClaimShape& shape, int* status) {
  json patch = ExtendedClaimStatusPatch(claim, shape);
  // The uid makes the patch fail (409) should the name now belong to another pod.
  patch["metadata"] = {{"uid", r.uid}};
  auto response =
      client_.Request("PATCH", PodPathOf(r) + "/status", k8s::JsonText(patch), kMergePatch);
  if (!response.ok()) {
    *status = 0;
    return "writing status.extendedResourceClaimStatus: " + response.status().message();
  }
  *status = static_cast<int>(response->status);
  if (!response->ok()) {
    return "writing status.extendedResourceClaimStatus: " + response->Describe();
  }
  return "";
}

void ApiWriter::DeleteExtendedClaim(const ClaimWrite& c) {
  const std::string path = ClaimsPath(c.namespace_) + "/" + c.name;
  for (int attempt = 0; attempt < kDeleteAttempts; ++attempt) {
    auto got = client_.Get(path);
    if (!got.ok() || !got->ok()) break;
    json claim = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
    if (!claim.is_object()) break;
    json& finalizers = claim["metadata"]["finalizers"];
    if (!finalizers.is_array()) break;
    const json mine = std::string(dra::kClaimFinalizer);
    if (std::find(finalizers.begin(), finalizers.end(), mine) == finalizers.end()) break;
    finalizers.erase(std::remove(finalizers.begin(), finalizers.end(), mine), finalizers.end());
    auto put = client_.Request("PUT", path, k8s::JsonText(claim));
    if (put.ok() && put->status == 409) continue;
    break;
  }
  // Preconditioned on the uid: a claim of that name made since is not ours.
  const json options = {
      {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", c.uid}}}};
  auto deleted = client_.Request("DELETE", path, k8s::JsonText(options));
  Check(deleted, "deleting resourceclaim " + c.namespace_ + "/" + c.name);
}

}  // namespace gantry

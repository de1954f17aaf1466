#include "engine/device_reservations.h"

#include <algorithm>
#include <utility>

#include "engine/dra/alignment.h"
#include "engine/dra/allocator.h"
#include "engine/dra/extended_resources.h"
#include "engine/dra_gpus.h"

namespace gantry {
namespace {

// Where no CEL evaluator was given (a build without DRA's CEL library): a selector cannot
// be decided, which fails the allocation as upstream's CEL errors do.
class NoSelectorVerdicts : public dra::SelectorVerdicts {
 public:
  Result<bool> Matches(std::string_view expression, const dra::DeviceRef&) const override {
    return Status::Failed("cannot evaluate the CEL selector \"" + std::string(expression) +
                          "\": this build of Gantry has no CEL evaluator (GANTRY_DRA_CEL=OFF)");
  }
};

}  // namespace

const dra::Allocation* DeviceReservations::AllocationOf(const dra::ResourceClaim& claim) const {
  if (auto it = session_claims_.find(&claim); it != session_claims_.end()) {
    return &it->second.allocation;
  }
  return claim.allocation ? &*claim.allocation : nullptr;
}

DeviceReservations::SpecClaims& DeviceReservations::ClaimsOf(const TaskSpec& spec) const {
  auto resolve = [&](SpecClaims* resolved) {
    resolved->claims.clear();
    for (const std::string& key : spec.resource_claims) {
      auto it = inputs_->claims->find(key);
      resolved->claims.push_back(it == inputs_->claims->end() ? nullptr : &it->second);
    }
    resolved->admin_access_allowed = inputs_->admin_namespaces != nullptr &&
                                     inputs_->admin_namespaces->count(spec.namespace_) > 0;
    resolved->shape_of_all.reset();
  };
  const std::vector<TaskSpec>& specs = cluster_->specs();
  if (specs.empty() || &spec < specs.data() || &spec >= specs.data() + specs.size()) {
    resolve(&claims_elsewhere_);
    return claims_elsewhere_;
  }
  if (claims_of_spec_.size() != specs.size()) claims_of_spec_.resize(specs.size());
  std::optional<SpecClaims>& resolved = claims_of_spec_[static_cast<size_t>(&spec - specs.data())];
  if (!resolved) resolve(&resolved.emplace());
  return *resolved;
}

// GatherAllocatedState over every claim (read from the owner's where it keeps one: both
// views then hold only what the session changes); the claims of the tasks being released
// (their pods terminating when the session opened) are free in the future view.
void DeviceReservations::Gather() const {
  if (gathered_) return;
  gathered_ = true;
  if (inputs_ == nullptr || inputs_->claims == nullptr) return;
  if (inputs_->allocated != nullptr) {
    now_ = dra::AllocatedState(inputs_->allocated);
    future_ = dra::AllocatedState(inputs_->allocated);
  } else {
    for (const auto& [key, claim] : *inputs_->claims) {
      if (!claim.allocation) continue;
      Take(DeviceFilterMemo::kNow, *claim.allocation);
      Take(DeviceFilterMemo::kFuture, *claim.allocation);
    }
  }
  for (TaskId task : cluster_->releasing_tasks()) {
    ReleaseInFuture(cluster_->spec(cluster_->task(task).spec), +1);
  }
}

uint32_t DeviceReservations::NoteError(std::string text) const {
  auto it = std::find(errors_.begin(), errors_.end(), text);
  if (it != errors_.end()) return static_cast<uint32_t>(it - errors_.begin());
  errors_.push_back(std::move(text));
  return static_cast<uint32_t>(errors_.size() - 1);
}

// A spec with claims by its first; one with only extended resources by its namespace
// and the in-memory claim's name, which no claim key can be.
std::string DeviceReservations::ErrorKey(const TaskSpec& spec) {
  if (!spec.resource_claims.empty()) return spec.resource_claims.front();
  return spec.namespace_ + "/" + std::string(dra::kExtendedClaimInMemoryName);
}

FilterResult DeviceReservations::Filter(const TaskSpec& spec, const Node& node, bool future,
                                        DeviceAllocations* out,
                                        std::optional<dra::Allocation>* extended,
                                        const dra::DevicePreference* preference) const {
  if (extended != nullptr) extended->reset();
  if (inputs_ == nullptr || (!spec.resource_claims.empty() && inputs_->claims == nullptr)) {
    if (spec.resource_claims.empty())
      return FilterResult::Fail(FilterCode::kDeviceClaimsUnallocatable);
    return FilterResult::Fail(FilterCode::kDeviceClaimMissing, 0);
  }
  SpecClaims& resolved = ClaimsOf(spec);
  const std::vector<const dra::ResourceClaim*>& claims = resolved.claims;
  std::vector<const dra::ResourceClaim*>& to_allocate = to_allocate_;
  std::vector<uint32_t>& positions = positions_;
  to_allocate.clear();
  positions.clear();
  for (uint32_t i = 0; i < claims.size(); ++i) {
    if (claims[i] == nullptr) return FilterResult::Fail(FilterCode::kDeviceClaimMissing, i);
    const dra::ResourceClaim& claim = *claims[i];
    if (claim.deleting) return FilterResult::Fail(FilterCode::kDeviceClaimDeleting, i);
    if (const dra::Allocation* allocation = AllocationOf(claim)) {
      if (allocation->node_selector &&
          !SelectorTermsMatch(*allocation->node_selector, node.labels, node.name)) {
        return FilterResult::Fail(FilterCode::kDeviceClaimNode, i);
      }
      continue;
    }
    to_allocate.push_back(&claim);
    positions.push_back(i);
  }
  if (out != nullptr) out->assign(spec.resource_claims.size(), std::nullopt);
  // Last, as upstream lists the special claim after the pod's own.
  std::optional<dra::ResourceClaim> extended_claim;
  if (!spec.device_backed.empty()) [[unlikely]] {
    extended_claim = dra::ExtendedResourceClaim(spec, node);
    if (extended_claim) to_allocate.push_back(&*extended_claim);
  }
  if (to_allocate.empty()) return FilterResult::Ok();
  if (inputs_->inventory == nullptr)
    return FilterResult::Fail(FilterCode::kDeviceClaimsUnallocatable);
  Gather();
  static const NoSelectorVerdicts kNoVerdicts;
  const dra::SelectorVerdicts& verdicts =
      inputs_->verdicts != nullptr ? *inputs_->verdicts : kNoVerdicts;
  dra::AllocateOptions options;
  options.preference = preference;
  // The devices to take are chosen best fit; a yes or no does not depend on the order.
  options.pack_shared = out != nullptr;
  options.admin_access_allowed = resolved.admin_access_allowed;
  // Only the answer is remembered: what each claim gets is found again (TakeFor). Not for
  // a spec with extended resources served by DRA: its claim is made per node, here.
  const DeviceFilterMemo::View view = future ? DeviceFilterMemo::kFuture : DeviceFilterMemo::kNow;
  const std::optional<NodeId> node_id = extended_claim ? std::optional<NodeId>() : memo_.IdOf(node);
  uint32_t shape = 0;
  if (!node_id) {
    // Not remembered.
  } else if (to_allocate.size() < claims.size()) {
    shape = memo_.ShapeOf(to_allocate, options.admin_access_allowed);
  } else {
    if (!resolved.shape_of_all) {
      resolved.shape_of_all = memo_.ShapeOf(to_allocate, options.admin_access_allowed);
    }
    shape = *resolved.shape_of_all;
  }
  if (out == nullptr && node_id) {
    if (std::optional<bool> known = memo_.Find(view, *node_id, shape)) {
      return *known ? FilterResult::Ok()
                    : FilterResult::Fail(FilterCode::kDeviceClaimsUnallocatable);
    }
  }
  auto result = dra::Allocate(*inputs_->inventory, dra::NodeRef{node.name, node.labels},
                              std::span<const dra::ResourceClaim* const>(to_allocate),
                              future ? future_ : now_, verdicts, options);
  if (!result.ok()) {
    const uint32_t error = NoteError(result.status().message());
    error_of_claims_.emplace(ErrorKey(spec), error);
    return FilterResult::Fail(FilterCode::kDeviceClaimError, error);
  }
  if (node_id) memo_.Remember(view, *node_id, shape, result->has_value());
  if (!result->has_value()) return FilterResult::Fail(FilterCode::kDeviceClaimsUnallocatable);
  if (out != nullptr) {
    for (size_t k = 0; k < positions.size(); ++k) {
      (*out)[positions[k]] = std::move((**result)[k]);
    }
  }
  if (extended != nullptr && extended_claim) *extended = std::move((**result).back());
  return FilterResult::Ok();
}

void DeviceReservations::Apply(StateChange change, TaskId task, const TaskSpec& spec,
                               const Node& node, const GpuChoice& gpus, int sign) {
  if (spec.resource_claims.empty() && spec.device_backed.empty()) return;
  Gather();
  if (change == StateChange::kEvict) {
    ReleaseInFuture(spec, sign);
  } else if (sign > 0) {
    TakeFor(change, task, spec, node, gpus);
  } else {
    GiveBack(change, task, spec);
  }
}

// The same allocations the filter found for this node on this state, the engine's GPU
// choice first where the devices are known GPUs (the filter's yes or no does not depend on
// the order: the search is complete). A placement no filter passed (none should) is given
// nothing, and the daemon does not bind it.
void DeviceReservations::TakeFor(StateChange change, TaskId task, const TaskSpec& spec,
                                 const Node& node, const GpuChoice& gpus) {
  Placed placed;
  const bool future = change == StateChange::kPipeline;
  std::optional<GpuChoicePreference> gpu_choice;
  std::optional<dra::AlignmentPreference> aligned;
  const dra::DevicePreference* preference = nullptr;
  if (inputs_ != nullptr && inputs_->gpu_devices != nullptr && !gpus.devices.empty()) {
    preference = &gpu_choice.emplace(*inputs_->gpu_devices, node, gpus);
  } else if (inputs_ != nullptr && inputs_->align_by != nullptr && !inputs_->align_by->empty() &&
             inputs_->inventory != nullptr &&
             dra::AlignmentPreference::AppliesTo(*inputs_->align_by, *inputs_->inventory,
                                                 node.name)) {
    preference = &aligned.emplace(*inputs_->align_by, *inputs_->inventory, future ? future_ : now_,
                                  node.name, WantedBy(spec));
  }
  if (!Filter(spec, node, future, &placed.claims, &placed.extended, preference).ok()) return;
  const DeviceAllocations& allocations = placed.claims;
  const std::vector<const dra::ResourceClaim*>& claims = ClaimsOf(spec).claims;
  for (size_t i = 0; i < allocations.size(); ++i) {
    const dra::ResourceClaim* claim = claims[i];  // not null: the filter passed
    if (allocations[i]) {
      if (change == StateChange::kAllocate) Take(DeviceFilterMemo::kNow, *allocations[i]);
      Take(DeviceFilterMemo::kFuture, *allocations[i]);
      session_claims_[claim] = SessionClaim{*allocations[i], 1};
    } else if (auto it = session_claims_.find(claim); it != session_claims_.end()) {
      ++it->second.uses;
    }
  }
  if (placed.extended) {
    if (change == StateChange::kAllocate) Take(DeviceFilterMemo::kNow, *placed.extended);
    Take(DeviceFilterMemo::kFuture, *placed.extended);
  }
  placed_[task] = std::move(placed);
}

int64_t DeviceReservations::WantedBy(const TaskSpec& spec) const {
  std::vector<const dra::ResourceClaim*>& unallocated = to_allocate_;
  unallocated.clear();
  for (const dra::ResourceClaim* claim : ClaimsOf(spec).claims) {
    if (claim != nullptr && AllocationOf(*claim) == nullptr) unallocated.push_back(claim);
  }
  int64_t wanted = dra::AlignmentPreference::WantedBy(unallocated);
  for (const DeviceBackedResource& backed : spec.device_backed) {
    wanted += backed.resource == kGpu ? spec.gpu.count : backed.count;  // kGpu's is in `gpu`
  }
  return wanted;
}

void DeviceReservations::GiveBack(StateChange change, TaskId task, const TaskSpec& spec) {
  auto placed = placed_.find(task);
  if (placed == placed_.end()) return;
  const DeviceAllocations& allocations = placed->second.claims;
  const std::vector<const dra::ResourceClaim*>& claims = ClaimsOf(spec).claims;
  for (size_t i = 0; i < allocations.size(); ++i) {
    const dra::ResourceClaim* claim = claims[i];  // not null: the task was placed
    if (allocations[i]) {
      if (change == StateChange::kAllocate) Untake(DeviceFilterMemo::kNow, *allocations[i]);
      Untake(DeviceFilterMemo::kFuture, *allocations[i]);
      session_claims_.erase(claim);
    } else if (auto it = session_claims_.find(claim); it != session_claims_.end()) {
      --it->second.uses;
    }
  }
  if (const auto& extended = placed->second.extended) {
    if (change == StateChange::kAllocate) Untake(DeviceFilterMemo::kNow, *extended);
    Untake(DeviceFilterMemo::kFuture, *extended);
  }
  placed_.erase(placed);
}

// A claim that no pod but the task uses (reserved for it alone, or for nobody) is
// deallocated when the pod is gone: by the resourceclaim controller, or with the pod for a
// claim made from a template. One reserved for a PodGroup stays with the group.
void DeviceReservations::ReleaseInFuture(const TaskSpec& spec, int sign) const {
  if (inputs_ == nullptr || inputs_->claims == nullptr) return;
  for (const std::string& key : spec.resource_claims) {
    auto it = inputs_->claims->find(key);
    if (it == inputs_->claims->end() || !it->second.allocation) continue;
    const auto& reserved = it->second.reserved_for;
    if (reserved.size() > 1 || (reserved.size() == 1 && reserved[0].resource != "pods")) continue;
    if (sign > 0) {
      Untake(DeviceFilterMemo::kFuture, *it->second.allocation);
    } else {
      Take(DeviceFilterMemo::kFuture, *it->second.allocation);
    }
  }
}

void DeviceReservations::Take(DeviceFilterMemo::View view,
                              const dra::Allocation& allocation) const {
  (view == DeviceFilterMemo::kNow ? now_ : future_).Add(allocation);
  memo_.Changed(view, allocation);
}

void DeviceReservations::Untake(DeviceFilterMemo::View view,
                                const dra::Allocation& allocation) const {
  (view == DeviceFilterMemo::kNow ? now_ : future_).Remove(allocation);
  memo_.Changed(view, allocation);
}

const std::string* DeviceReservations::ErrorFor(const TaskSpec& spec) const {
  if (spec.resource_claims.empty() && spec.device_backed.empty()) return nullptr;
  auto it = error_of_claims_.find(ErrorKey(spec));
  return it == error_of_claims_.end() ? nullptr : &errors_[it->second];
}

const DeviceAllocations* DeviceReservations::AllocationsOf(TaskId task) const {
  auto it = placed_.find(task);
  return it == placed_.end() ? nullptr : &it->second.claims;
}

const dra::Allocation* DeviceReservations::ExtendedAllocationOf(TaskId task) const {
  auto it = placed_.find(task);
  return it == placed_.end() || !it->second.extended ? nullptr : &*it->second.extended;
}

}  // namespace gantry

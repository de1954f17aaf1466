// Dynamic Resource Allocation in a session, as kube-scheduler's DynamicResources plugin
// decides it per node: a task's ResourceClaims (TaskSpec::resource_claims) that are
// allocated already must be usable on the node (their allocation's node selector), and
// the others must all be allocatable there together by the structured allocator
// (engine/dra/allocator.h), with the devices of every claim's allocation taken, and those
// of the session's earlier placements, as kube-scheduler's in-flight allocations are.
//
// DeviceReservations keeps that state for one session: Apply(+1) and its exact undo
// Apply(-1) keep it in step with the statement's changes (so a gang that is rolled back
// gives its devices back), and it remembers what each placed task was given, for the
// decisions. Two views, like the rest of the working state: the devices taken now, and
// those taken once the tasks being evicted are gone (a pipelined placement's search).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/decisions.h"
#include "engine/device_filter_memo.h"
#include "engine/dra/preference.h"
#include "engine/filter.h"
#include "engine/gpu_placement.h"
#include "engine/plugin.h"
#include "engine/snapshot.h"
#include "model/cluster.h"
#include "model/dra.h"
#include "model/dra_inventory.h"

namespace gantry {

class DeviceReservations {
 public:
  // REQUIRES: `inputs` and `cluster` outlive the reservations (a session's snapshot's).
  void Open(const DeviceInputs& inputs, const ClusterState& cluster) {
    inputs_ = &inputs;
    cluster_ = &cluster;
    if (inputs.inventory != nullptr) memo_.Open(*inputs.inventory, cluster);
  }

  // Whether every claim of `spec` can be used on `node`, in the room taken now or (with
  // `future`) once the tasks being evicted are gone; ok with `*out` (when not null) what
  // each claim gets. A failure names the claim by its index in spec.resource_claims where
  // one claim decides it (missing, being deleted, allocated for other nodes), and an
  // error by its index among errors().
  //
  // Its extended resources that a DeviceClass serves and the node's allocatable lacks
  // (TaskSpec::device_backed, engine/dra/extended_resources.h) are one more claim, made
  // here and allocated with the others; `*extended` (when not null) is what it gets, or
  // nullopt where the node's device plugin serves them all. With `preference`, the
  // allocator tries devices in its order (engine/dra/preference.h).
  FilterResult Filter(const TaskSpec& spec, const Node& node, bool future, DeviceAllocations* out,
                      std::optional<dra::Allocation>* extended = nullptr,
                      const dra::DevicePreference* preference = nullptr) const;

  // A change of the session (+1) or its undo (-1). kAllocate takes the devices now and in
  // the future, kPipeline only in the future; kEvict gives back, in the future, the
  // devices of the victim's claims that no other pod uses.
  // `gpus` are the GPUs the engine chose for the task on the node: where the inputs say
  // which devices are GPUs (DeviceInputs::gpu_devices), the claims get those first.
  // REQUIRES: an undo follows the changes made after it undone, as a statement does.
  void Apply(StateChange change, TaskId task, const TaskSpec& spec, const Node& node,
             const GpuChoice& gpus, int sign);

  // What the placed task was given, or null when it has no claims or no change placed it.
  const DeviceAllocations* AllocationsOf(TaskId task) const;
  // What the placed task's extended resources claim was given, or null where it has none.
  const dra::Allocation* ExtendedAllocationOf(TaskId task) const;
  // The errors Filter has met (a class that does not exist, a CEL error, a search past
  // its bound), each once, in the order met.
  const std::vector<std::string>& errors() const { return errors_; }
  // The error met allocating the claims of `spec` (kube-scheduler fails the pod's whole
  // attempt with it), or null.
  const std::string* ErrorFor(const TaskSpec& spec) const;

 private:
  // A claim allocated in this session, shared by the tasks that use it.
  struct SessionClaim {
    dra::Allocation allocation;
    int32_t uses = 0;
  };
  const dra::Allocation* AllocationOf(const dra::ResourceClaim& claim) const;
  // What Filter needs of a spec beside the node, found once per spec of the session's
  // cluster.
  struct SpecClaims {
    std::vector<const dra::ResourceClaim*> claims;  // as the claim table has them; null: missing
    bool admin_access_allowed = false;              // the namespace has the label
    // The memo's shape of all the claims, once asked (most pods allocate all of theirs).
    std::optional<uint32_t> shape_of_all;
  };
  SpecClaims& ClaimsOf(const TaskSpec& spec) const;
  void Gather() const;
  static std::string ErrorKey(const TaskSpec& spec);
  uint32_t NoteError(std::string text) const;
  void TakeFor(StateChange change, TaskId task, const TaskSpec& spec, const Node& node,
               const GpuChoice& gpus);
  void GiveBack(StateChange change, TaskId task, const TaskSpec& spec);
  // How many devices the claims of `spec` not allocated yet ask for, its extended
  // resources served by DRA included (an alignment's wanted count).
  int64_t WantedBy(const TaskSpec& spec) const;
  // The devices of the claims of `spec` that only its task uses: they are free once the
  // task is gone. `sign` +1 gives them back in the future view, -1 takes them again.
  void ReleaseInFuture(const TaskSpec& spec, int sign) const;
  // Every change of now_ and future_ goes through these, which tell the memo.
  void Take(DeviceFilterMemo::View view, const dra::Allocation& allocation) const;
  void Untake(DeviceFilterMemo::View view, const dra::Allocation& allocation) const;

  const DeviceInputs* inputs_ = nullptr;
  const ClusterState* cluster_ = nullptr;
  // Built on first need from every claim's allocation: only sessions with claims pay.
  mutable bool gathered_ = false;
  mutable dra::AllocatedState now_;
  mutable dra::AllocatedState future_;
  mutable DeviceFilterMemo memo_;
  std::unordered_map<const dra::ResourceClaim*, SessionClaim> session_claims_;
  // ClaimsOf by SpecId (unset until asked), and the answer for a spec from elsewhere.
  mutable std::vector<std::optional<SpecClaims>> claims_of_spec_;
  mutable SpecClaims claims_elsewhere_;
  // Filter's buffers, kept to spare an allocation per node asked.
  mutable std::vector<const dra::ResourceClaim*> to_allocate_;
  mutable std::vector<uint32_t> positions_;
  struct Placed {
    DeviceAllocations claims;  // per claim of the spec
    std::optional<dra::Allocation> extended;
  };
  std::unordered_map<TaskId, Placed> placed_;
  mutable std::vector<std::string> errors_;
  // By a spec's first claim (a pod's own, mostly; ErrorKey): the index of its error.
  mutable std::unordered_map<std::string, uint32_t> error_of_claims_;
};

}  // namespace gantry

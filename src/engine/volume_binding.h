// Delayed volume binding as kube-scheduler's VolumeBinding decides it per node
// (FindPodVolumes: findMatchingVolumes, then checkVolumeProvisions), with the choices of
// the session's earlier placements counted as its assume cache counts them: a volume
// given to one claim is taken for every other, and a claim decided by one pod (a pod
// sharing the claim) is decided for the next.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/filter.h"
#include "model/cluster.h"
#include "model/task_spec.h"

namespace gantry {

// What the session's placements chose for delayed claims. Apply(+1) and its exact undo
// Apply(-1) keep it in step with the statement's changes.
class VolumeReservations {
 public:
  struct ClaimChoice {
    std::string volume;  // the volume given to it, or "" when provisioned on `node`
    std::string node;
    int32_t uses = 0;  // placements that made this choice
  };
  // "namespace/claim" -> the choice made for it, or nullptr.
  const ClaimChoice* ChoiceFor(const std::string& claim_key) const;
  // The claim ("namespace/claim") a volume was given to, or nullptr.
  const std::string* HolderOf(const std::string& volume) const;
  // `choices[i]` is the volume chosen for spec.delayed_claims[i] ("" to provision) on
  // the node named `node`.
  void Apply(const TaskSpec& spec, const std::string& node, const std::vector<std::string>& choices,
             int sign);
  bool empty() const { return claims_.empty(); }

 private:
  std::unordered_map<std::string, ClaimChoice> claims_;
  std::unordered_map<std::string, std::string> volumes_;  // volume -> claim key
};

// Whether every delayed claim of `spec` can be bound on `node`: ok, with `*choices` (when
// not null) the volume for each claim in spec.delayed_claims' order, "" where the claim is
// provisioned; else kVolumeBindConflict.
FilterResult ChooseClaimVolumes(const TaskSpec& spec, const Node& node,
                                const VolumeReservations& reserved,
                                std::vector<std::string>* choices);

}  // namespace gantry

#include "engine/volume_binding.h"

#include <algorithm>

namespace gantry {
namespace {

std::string ClaimKey(const TaskSpec& spec, const DelayedClaim& claim) {
  return spec.namespace_ + "/" + claim.claim;
}

const CandidateVolume* FindCandidate(const DelayedClaim& claim, const std::string& name) {
  if (claim.prebound && claim.prebound->name == name) return &*claim.prebound;
  for (const CandidateVolume& v : claim.volumes) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

}  // namespace

const VolumeReservations::ClaimChoice* VolumeReservations::ChoiceFor(
    const std::string& claim_key) const {
  auto it = claims_.find(claim_key);
  return it == claims_.end() ? nullptr : &it->second;
}

const std::string* VolumeReservations::HolderOf(const std::string& volume) const {
  auto it = volumes_.find(volume);
  return it == volumes_.end() ? nullptr : &it->second;
}

void VolumeReservations::Apply(const TaskSpec& spec, const std::string& node,
                               const std::vector<std::string>& choices, int sign) {
  const size_t n = std::min(choices.size(), spec.delayed_claims.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string key = ClaimKey(spec, spec.delayed_claims[i]);
    if (sign > 0) {
      ClaimChoice& c = claims_[key];
      if (c.uses++ == 0) {
        c.volume = choices[i];
        c.node = node;
        if (!c.volume.empty()) volumes_[c.volume] = key;
      }
      continue;
    }
    auto it = claims_.find(key);
    if (it == claims_.end() || --it->second.uses > 0) continue;
    if (!it->second.volume.empty()) volumes_.erase(it->second.volume);
    claims_.erase(it);
  }
}

FilterResult ChooseClaimVolumes(const TaskSpec& spec, const Node& node,
                                const VolumeReservations& reserved,
                                std::vector<std::string>* choices) {
  if (choices != nullptr) choices->clear();
  // Volumes chosen for this pod's earlier claims (findMatchingVolumes' chosenPVs).
  std::vector<const std::string*> chosen;
  const FilterResult conflict = FilterResult::Fail(FilterCode::kVolumeBindConflict);
  for (const DelayedClaim& claim : spec.delayed_claims) {
    const std::string key = ClaimKey(spec, claim);
    const std::optional<std::string>* selected = &claim.selected_node;
    const CandidateVolume* prebound = claim.prebound ? &*claim.prebound : nullptr;
    bool has_prebound = prebound != nullptr;
    // Decided by an earlier placement of the session: its volume is now pre-bound to the
    // claim, or the claim has that node selected.
    std::optional<std::string> selected_earlier;
    if (const VolumeReservations::ClaimChoice* earlier = reserved.ChoiceFor(key)) {
      if (earlier->volume.empty()) {
        selected_earlier = earlier->node;
        selected = &selected_earlier;
      } else {
        prebound = FindCandidate(claim, earlier->volume);
        has_prebound = true;
      }
    }
    const std::string* match = nullptr;
    if (selected->has_value()) {
      // Only its node, and provisioned there.
      if (**selected != node.name) return conflict;
    } else if (has_prebound) {
      if (prebound != nullptr && prebound->ReachableFrom(node.labels)) match = &prebound->name;
    } else {
      for (const CandidateVolume& v : claim.volumes) {
        if (std::any_of(chosen.begin(), chosen.end(),
                        [&](const std::string* c) { return *c == v.name; })) {
          continue;
        }
        if (const std::string* holder = reserved.HolderOf(v.name); holder && *holder != key) {
          continue;
        }
        if (!v.ReachableFrom(node.labels)) continue;
        match = &v.name;
        break;
      }
    }
    if (match != nullptr) {
      chosen.push_back(match);
      if (choices != nullptr) choices->push_back(*match);
      continue;
    }
    // checkVolumeProvisions.
    if (!claim.provisionable || !claim.allowed_topologies.Matches(node.labels)) return conflict;
    if (claim.capacity_tracked &&
        std::none_of(claim.capacity_topologies.begin(), claim.capacity_topologies.end(),
                     [&](const LabelSelector& s) { return s.Matches(node.labels); })) {
      return FilterResult::Fail(FilterCode::kNotEnoughStorage);
    }
    if (choices != nullptr) choices->emplace_back();
  }
  return FilterResult::Ok();
}

}  // namespace gantry

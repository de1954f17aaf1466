// Filter's answers on a task's ResourceClaims, remembered per node for one session.
//
// Whether claims can be allocated on a node depends on the claims' specs (never their
// names or UIDs, which only name errors and seed share IDs), the node, the inventory and
// the CEL verdicts (fixed for a session), and the devices taken in the node's pools. The
// pods of one ResourceClaimTemplate have claims of one spec, and most nodes' devices do
// not change between one pod's filter and the next's: kube-scheduler runs the allocator
// again on every node for every pod, Gantry asks its memo first (issue 29's speed goal).
//
// So the memo keys an answer by the claims' shape (their specs, interned) and node, and
// keeps with it the versions of what the answer read: the node's own pools (those whose
// slices all name the node) and every other pool (seen by many nodes: a change there may
// change any node's answer). A change of the devices taken bumps the version of the pools
// it touches; an answer whose versions moved is asked again. Two views, as the
// reservations have: the devices taken now, and in the future.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/cluster.h"
#include "model/dra.h"
#include "model/dra_inventory.h"

namespace gantry {

class DeviceFilterMemo {
 public:
  enum View { kNow = 0, kFuture = 1 };

  // REQUIRES: `inventory` and `cluster` outlive the memo, unchanged (a session's).
  void Open(const dra::Inventory& inventory, const ClusterState& cluster);

  // The devices of `allocation` were taken or given back in `view`.
  void Changed(View view, const dra::Allocation& allocation);

  // The shape of `claims` (to allocate together), with the namespace's admin access.
  uint32_t ShapeOf(std::span<const dra::ResourceClaim* const> claims, bool admin_access_allowed);

  // The node of the session's cluster that `node` is, or nullopt (a node from elsewhere).
  std::optional<NodeId> IdOf(const Node& node) const;

  // Whether claims of `shape` were allocatable on `node` in `view`, if asked since its
  // devices last changed.
  std::optional<bool> Find(View view, NodeId node, uint32_t shape) const;
  void Remember(View view, NodeId node, uint32_t shape, bool allocatable);

 private:
  static constexpr int32_t kShared = -1;  // a pool that more than one node may see
  static constexpr int32_t kNobody = -2;  // a pool whose slices name no node of the cluster
  struct Answer {
    uint32_t shape = 0;
    uint64_t node_version = 0;
    uint64_t shared_version = 0;
    bool allocatable = false;
  };
  void FindScopes();
  uint32_t ClaimShape(const dra::ResourceClaim& claim);

  const dra::Inventory* inventory_ = nullptr;
  const ClusterState* cluster_ = nullptr;
  bool scoped_ = false;
  // "driver/pool" -> the node whose pool it is, kShared or kNobody.
  std::unordered_map<std::string, int32_t> pool_scope_;
  std::vector<uint64_t> node_versions_[2];
  uint64_t shared_version_[2] = {0, 0};
  std::vector<std::vector<Answer>> answers_[2];  // per node

  // Claim specs interned: by hash, the shapes (and a spec of each) with that hash.
  std::unordered_map<size_t, std::vector<uint32_t>> shapes_by_hash_;
  std::vector<const dra::ResourceClaimSpec*> shape_specs_;
  std::unordered_map<const dra::ResourceClaim*, uint32_t> shape_of_claim_;
  // The shapes of claims allocated together (admin access first): their shape; for one
  // claim (most pods), by admin access and the claim's shape (kNone: not yet given).
  std::map<std::vector<uint32_t>, uint32_t> group_shapes_;
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> single_shapes_[2];
  std::vector<uint32_t> group_key_;  // reused
};

}  // namespace gantry

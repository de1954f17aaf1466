// A Snapshot is what a session schedules against: the cluster as it stood when the
// snapshot was taken.
//
// REQUIRES: the ClusterState outlives the snapshot and is not changed while a session
// built on it runs. The daemon and the simulator apply world changes between sessions;
// the engine never changes a ClusterState (trial placements live in the session's own
// working copy, see Session and Statement).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "engine/node_table.h"
#include "model/cluster.h"
#include "model/dra_inventory.h"
#include "model/dra_verdicts.h"

namespace gantry {

class GpuDeviceMap;  // engine/dra_gpus.h

// What a session reads of Dynamic Resource Allocation, kept beside the cluster by whoever
// keeps it (the daemon's device claims, the simulator). All null: no DRA in the cluster,
// and a task with resource claims fits nowhere.
struct DeviceInputs {
  const dra::Inventory* inventory = nullptr;  // slices (taint rules applied), classes
  const dra::ClaimTable* claims = nullptr;    // every ResourceClaim of the cluster
  // CEL's verdicts on devices; null: a class or request with a selector is an error.
  const dra::SelectorVerdicts* verdicts = nullptr;
  // The namespaces labelled resource.kubernetes.io/admin-access=true; null: none.
  const std::set<std::string, std::less<>>* admin_namespaces = nullptr;
  // Which devices are the nodes' GPUs (engine/dra_gpus.h); null: none known, a claim gets
  // upstream's first devices that fit, but best fit among shared devices
  // (dra::AllocateOptions::pack_shared).
  const GpuDeviceMap* gpu_devices = nullptr;
  // Device attributes that say which devices work best together (a NUMA node, a PCIe
  // root), outermost first: where no GPU choice is known, a placement's claims get devices
  // that share their values first (engine/dra/alignment.h). Null or empty: upstream's order.
  const std::vector<dra::QualifiedName>* align_by = nullptr;
  // Every allocation of `claims` (dra::AllocatedState::FromClaims), kept by whoever owns
  // the claims as they change, so that a session reads it rather than gathering it again
  // (work per allocated device, on every session). Null: gathered per session.
  // REQUIRES: it is `claims`' allocations exactly.
  const dra::AllocatedState* allocated = nullptr;
};

class Snapshot {
 public:
  explicit Snapshot(const ClusterState& cluster) : cluster_(&cluster) {}
  // With a cache that the caller keeps from session to session: the session copies the
  // cache's table (brought up to date here) instead of building its own from every node.
  Snapshot(const ClusterState& cluster, NodeTableCache* cache)
      : cluster_(&cluster), node_table_(&cache->Sync(cluster)) {}
  const ClusterState& cluster() const { return *cluster_; }
  // The per-node table of the cluster, or null when the session must build it.
  const NodeTable* node_table() const { return node_table_; }
  // REQUIRES: what `devices` points to outlives the snapshot and does not change while a
  // session built on it runs (as the cluster).
  void set_devices(const DeviceInputs& devices) { devices_ = devices; }
  const DeviceInputs& devices() const { return devices_; }

 private:
  const ClusterState* cluster_;
  const NodeTable* node_table_ = nullptr;
  DeviceInputs devices_;
};

}  // namespace gantry

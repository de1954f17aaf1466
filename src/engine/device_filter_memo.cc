#include "engine/device_filter_memo.h"

#include <algorithm>
#include <functional>
#include <string_view>

namespace gantry {
namespace {

std::string PoolKey(std::string_view driver, std::string_view pool) {
  std::string key;
  key.reserve(driver.size() + pool.size() + 1);
  key.append(driver).append("/").append(pool);
  return key;
}

void Mix(size_t* hash, size_t value) {
  *hash ^= value + 0x9e3779b97f4a7c15ULL + (*hash << 6) + (*hash >> 2);
}

void MixRequestSpec(size_t* hash, const dra::DeviceRequestSpec& spec) {
  const std::hash<std::string> text;
  Mix(hash, text(spec.device_class_name));
  for (const std::string& selector : spec.selectors) Mix(hash, text(selector));
  Mix(hash, static_cast<size_t>(spec.allocation_mode));
  Mix(hash, static_cast<size_t>(spec.count));
  Mix(hash, spec.admin_access ? 1 : 0);
  Mix(hash, spec.tolerations.size());
  Mix(hash, spec.capacity_requests.size());
}

// Over what tells specs apart most often; equal specs hash equal, and operator== decides.
size_t HashSpec(const dra::ResourceClaimSpec& spec) {
  const std::hash<std::string> text;
  size_t hash = spec.requests.size();
  for (const dra::DeviceRequest& request : spec.requests) {
    Mix(&hash, text(request.name));
    if (request.exactly) MixRequestSpec(&hash, *request.exactly);
    for (const dra::DeviceSubRequest& sub : request.first_available) {
      Mix(&hash, text(sub.name));
      MixRequestSpec(&hash, sub.spec);
    }
  }
  Mix(&hash, spec.constraints.size());
  Mix(&hash, spec.config.size());
  return hash;
}

}  // namespace

void DeviceFilterMemo::Open(const dra::Inventory& inventory, const ClusterState& cluster) {
  inventory_ = &inventory;
  cluster_ = &cluster;
}

// A pool is a node's own when every slice of it (of any generation) names that node: only
// that node sees its devices, and its counters are consumed by them alone.
void DeviceFilterMemo::FindScopes() {
  if (scoped_) return;
  scoped_ = true;
  const size_t nodes = cluster_ != nullptr ? cluster_->nodes().size() : 0;
  for (auto& versions : node_versions_) versions.assign(nodes, 0);
  for (auto& answers : answers_) answers.assign(nodes, {});
  if (inventory_ == nullptr) return;
  std::unordered_map<std::string_view, NodeId> node_ids;
  for (NodeId id = 0; id < nodes; ++id) node_ids.emplace(cluster_->node(id).name, id);
  for (const dra::ResourceSlice& slice : inventory_->slices()) {
    int32_t scope = kShared;
    if (!slice.per_device_node_selection && slice.node_selection &&
        slice.node_selection->node_name && !slice.node_selection->node_name->empty()) {
      auto it = node_ids.find(*slice.node_selection->node_name);
      scope = it == node_ids.end() ? kNobody : static_cast<int32_t>(it->second);
    }
    auto [known, added] = pool_scope_.emplace(PoolKey(slice.driver, slice.pool.name), scope);
    if (!added && known->second != scope) known->second = kShared;
  }
}

void DeviceFilterMemo::Changed(View view, const dra::Allocation& allocation) {
  FindScopes();
  for (const dra::AllocationResult& result : allocation.results) {
    if (result.admin_access) continue;  // takes nothing (AllocatedState::Add)
    auto it = pool_scope_.find(PoolKey(result.driver, result.pool));
    // A pool not in the inventory: none of its devices is offered, none asked about.
    if (it == pool_scope_.end() || it->second == kNobody) continue;
    if (it->second == kShared) {
      ++shared_version_[view];
    } else {
      ++node_versions_[view][static_cast<size_t>(it->second)];
    }
  }
}

uint32_t DeviceFilterMemo::ClaimShape(const dra::ResourceClaim& claim) {
  auto known = shape_of_claim_.find(&claim);
  if (known != shape_of_claim_.end()) return known->second;
  std::vector<uint32_t>& same_hash = shapes_by_hash_[HashSpec(claim.spec)];
  auto equal = std::find_if(same_hash.begin(), same_hash.end(),
                            [&](uint32_t shape) { return *shape_specs_[shape] == claim.spec; });
  uint32_t shape = 0;
  if (equal != same_hash.end()) {
    shape = *equal;
  } else {
    shape = static_cast<uint32_t>(shape_specs_.size());
    shape_specs_.push_back(&claim.spec);
    same_hash.push_back(shape);
  }
  shape_of_claim_.emplace(&claim, shape);
  return shape;
}

uint32_t DeviceFilterMemo::ShapeOf(std::span<const dra::ResourceClaim* const> claims,
                                   bool admin_access_allowed) {
  uint32_t* single = nullptr;
  if (claims.size() == 1) {
    const uint32_t claim_shape = ClaimShape(*claims[0]);
    std::vector<uint32_t>& singles = single_shapes_[admin_access_allowed ? 1 : 0];
    if (singles.size() <= claim_shape) singles.resize(claim_shape + 1, kNone);
    single = &singles[claim_shape];
    if (*single != kNone) return *single;
  }
  group_key_.clear();
  group_key_.push_back(admin_access_allowed ? 1 : 0);
  for (const dra::ResourceClaim* claim : claims) group_key_.push_back(ClaimShape(*claim));
  const auto it =
      group_shapes_.emplace(group_key_, static_cast<uint32_t>(group_shapes_.size())).first;
  if (single != nullptr) *single = it->second;
  return it->second;
}

std::optional<NodeId> DeviceFilterMemo::IdOf(const Node& node) const {
  if (cluster_ == nullptr) return std::nullopt;
  const std::vector<Node>& nodes = cluster_->nodes();
  if (nodes.empty() || &node < nodes.data() || &node >= nodes.data() + nodes.size()) {
    return std::nullopt;
  }
  return static_cast<NodeId>(&node - nodes.data());
}

std::optional<bool> DeviceFilterMemo::Find(View view, NodeId node, uint32_t shape) const {
  if (!scoped_) return std::nullopt;
  for (const Answer& answer : answers_[view][node]) {
    if (answer.shape != shape) continue;
    if (answer.node_version != node_versions_[view][node] ||
        answer.shared_version != shared_version_[view]) {
      return std::nullopt;
    }
    return answer.allocatable;
  }
  return std::nullopt;
}

void DeviceFilterMemo::Remember(View view, NodeId node, uint32_t shape, bool allocatable) {
  FindScopes();
  Answer now;
  now.shape = shape;
  now.node_version = node_versions_[view][node];
  now.shared_version = shared_version_[view];
  now.allocatable = allocatable;
  std::vector<Answer>& answers = answers_[view][node];
  for (Answer& answer : answers) {
    if (answer.shape == shape) {
      answer = now;
      return;
    }
  }
  answers.push_back(now);
}

}  // namespace gantry

#include "engine/dra/alignment.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gantry::dra {
namespace {

// Ranks per level: kMaxLevels levels of them fit in 63 bits.
constexpr int64_t kLevelRanks = int64_t{1} << 15;
constexpr int64_t kNoGroup = kLevelRanks - 1;  // a device without the attribute: last

// The device's value of `attribute` as text (its type first, so that 1 and "1" differ), or
// nullopt where it has none.
std::optional<std::string> ValueText(const Device& device, const QualifiedName& attribute) {
  auto it = device.attributes.find(attribute);
  if (it == device.attributes.end()) return std::nullopt;
  const AttributeValue& value = it->second;
  if (const auto* i = std::get_if<int64_t>(&value)) return "i" + std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "b1" : "b0";
  if (const auto* s = std::get_if<std::string>(&value)) return "s" + *s;
  return "v" + std::get<SemanticVersion>(value).text;
}

bool OnNode(const ResourceSlice& slice, const Device& device, std::string_view node) {
  const std::optional<NodeSelection>& selection =
      slice.per_device_node_selection ? device.node_selection : slice.node_selection;
  return selection && selection->node_name && *selection->node_name == node;
}

}  // namespace

AlignmentPreference::AlignmentPreference(std::span<const QualifiedName> attributes,
                                         const Inventory& inventory,
                                         const AllocatedState& allocated, std::string_view node,
                                         int64_t wanted) {
  const size_t levels = std::min(attributes.size(), kMaxLevels);
  if (levels == 0) return;
  struct Member {
    const Device* device;
    std::array<int32_t, kMaxLevels> group;  // per level; -1: no value
  };
  std::vector<Member> members;
  // Per level: each value's group, and each group's free devices.
  std::vector<std::map<std::string, int32_t>> group_of_value(levels);
  std::vector<std::vector<int64_t>> free_in(levels);
  inventory.ForEachSliceForNode(node, [&](const ResourceSlice& slice) {
    for (const Device& device : slice.devices) {
      if (!OnNode(slice, device, node)) continue;
      const bool free = !allocated.Allocated(DeviceKey(slice.driver, slice.pool.name, device.name));
      Member member{&device, {}};
      member.group.fill(-1);
      for (size_t l = 0; l < levels; ++l) {
        std::optional<std::string> value = ValueText(device, attributes[l]);
        if (!value) continue;
        auto [it, added] = group_of_value[l].try_emplace(std::move(*value),
                                                         static_cast<int32_t>(free_in[l].size()));
        if (added) free_in[l].push_back(0);
        member.group[l] = it->second;
        free_in[l][static_cast<size_t>(it->second)] += free ? 1 : 0;
      }
      members.push_back(member);
    }
  });
  // Per level, the groups in the order to try them: those that hold every wanted device,
  // fewest free first; then the others, most free first; ties in the order met (upstream's).
  std::vector<std::vector<int64_t>> rank_of_group(levels);
  for (size_t l = 0; l < levels; ++l) {
    const std::vector<int64_t>& free = free_in[l];
    std::vector<size_t> order(free.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const bool a_holds = free[a] >= wanted;
      const bool b_holds = free[b] >= wanted;
      if (a_holds != b_holds) return a_holds;
      return a_holds ? free[a] < free[b] : free[a] > free[b];
    });
    rank_of_group[l].resize(free.size());
    for (size_t i = 0; i < order.size(); ++i) {
      rank_of_group[l][order[i]] = std::min<int64_t>(static_cast<int64_t>(i), kNoGroup - 1);
    }
  }
  for (const Member& member : members) {
    int64_t rank = 0;
    for (size_t l = 0; l < kMaxLevels; ++l) {
      const int32_t group = l < levels ? member.group[l] : -1;
      rank = rank * kLevelRanks + (group < 0 ? kNoGroup : rank_of_group[l][group]);
    }
    rank_[member.device] = rank;
  }
}

bool AlignmentPreference::AppliesTo(std::span<const QualifiedName> attributes,
                                    const Inventory& inventory, std::string_view node) {
  const std::span<const QualifiedName> used =
      attributes.first(std::min(attributes.size(), kMaxLevels));
  bool applies = false;
  inventory.ForEachSliceForNode(node, [&](const ResourceSlice& slice) {
    for (const Device& device : slice.devices) {
      if (applies || !OnNode(slice, device, node)) continue;
      applies = std::ranges::any_of(used, [&](const QualifiedName& attribute) {
        return device.attributes.contains(attribute);
      });
    }
  });
  return applies;
}

int64_t AlignmentPreference::Rank(const ResourceSlice& /*slice*/, const Device& device) const {
  auto it = rank_.find(&device);
  return it == rank_.end() ? std::numeric_limits<int64_t>::max() : it->second;
}

int64_t AlignmentPreference::WantedBy(std::span<const ResourceClaim* const> claims) {
  int64_t wanted = 0;
  for (const ResourceClaim* claim : claims) {
    if (claim == nullptr) continue;
    for (const DeviceRequest& request : claim->spec.requests) {
      const DeviceRequestSpec* spec = request.exactly ? &*request.exactly
                                      : request.first_available.empty()
                                          ? nullptr
                                          : &request.first_available.front().spec;
      if (spec != nullptr && spec->allocation_mode == AllocationMode::kExactCount) {
        wanted += spec->count;
      }
    }
  }
  return wanted;
}

}  // namespace gantry::dra

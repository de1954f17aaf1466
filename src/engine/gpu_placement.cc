#include "engine/gpu_placement.h"

#include <algorithm>

namespace gantry {
namespace {

bool ChooseWhole(const GpuRequest& request, const NodeGpus& node, GpuPacking packing,
                 GpuChoice* out) {
  const size_t n = node.devices.size();
  const auto want = static_cast<int32_t>(request.count);
  const bool any_model = request.models.empty();
  auto usable = [&](size_t i) {
    return node.free_milli[i] == kGpuMilliWhole &&
           (any_model || request.AllowsModel(node.devices[i].model));
  };
  // Free devices per NVLink domain. Domains are small integers in practice; a node with
  // domain numbers past the table is treated as one domain (lowest indexes first).
  constexpr int32_t kMaxDomains = 16;
  int32_t free_in[kMaxDomains] = {};
  int32_t total_free = 0;
  int32_t domain_end = 0;
  bool domains_known = true;
  for (size_t i = 0; i < n; ++i) {
    if (!usable(i)) continue;
    ++total_free;
    int32_t domain = node.devices[i].nvlink_domain;
    if (domain < 0 || domain >= kMaxDomains) {
      domains_known = false;
    } else {
      ++free_in[domain];
      domain_end = std::max(domain_end, domain + 1);
    }
  }
  if (total_free < want) return false;
  int32_t best_domain = -1;
  if (domains_known) {
    for (int32_t d = 0; d < domain_end; ++d) {
      if (free_in[d] < want) continue;
      bool better = best_domain < 0 || (packing == GpuPacking::kLoose ? free_in[d] > free_in[best_domain]
                                                                      : free_in[d] < free_in[best_domain]);
      if (better) best_domain = d;
    }
  }
  out->devices.clear();
  for (size_t i = 0; i < n && static_cast<int32_t>(out->devices.size()) < want; ++i) {
    if (!usable(i)) continue;
    if (best_domain >= 0 && node.devices[i].nvlink_domain != best_domain) continue;
    out->devices.push_back(static_cast<int32_t>(i));
  }
  out->milli_each = kGpuMilliWhole;
  out->memory_each = 0;
  return true;
}

bool ChooseShared(const GpuRequest& request, const NodeGpus& node, GpuPacking packing,
                  GpuChoice* out) {
  int32_t best = -1;
  int32_t best_free = 0;
  int32_t best_share = 0;
  for (size_t i = 0; i < node.devices.size(); ++i) {
    const GpuDevice& device = node.devices[i];
    if (!request.AllowsModel(device.model)) continue;
    int32_t share = ClusterState::GpuShareOn(request, device);
    int32_t free = node.free_milli[i];
    if (free < share) continue;
    if (request.memory_mib > 0 && device.memory_mib > 0 &&
        node.free_memory_mib[i] < request.memory_mib) {
      continue;
    }
    bool better = best < 0 || (packing == GpuPacking::kLoose ? free > best_free : free < best_free);
    if (better) {
      best = static_cast<int32_t>(i);
      best_free = free;
      best_share = share;
    }
  }
  if (best < 0) return false;
  out->devices.assign(1, best);
  out->milli_each = best_share;
  out->memory_each = request.memory_mib;
  return true;
}

}  // namespace

bool ChooseGpus(const GpuRequest& request, const NodeGpus& node, GpuPacking packing,
                GpuChoice* out) {
  out->Clear();
  if (!request.wants_gpu()) return true;
  if (request.shared()) return ChooseShared(request, node, packing, out);
  return ChooseWhole(request, node, packing, out);
}

}  // namespace gantry

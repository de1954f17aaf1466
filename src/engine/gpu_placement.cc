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
  if (node.one_nvlink_domain) {
    // The general case below, with one domain: the first `want` usable devices.
    out->devices.clear();
    for (size_t i = 0; i < n && static_cast<int32_t>(out->devices.size()) < want; ++i) {
      if (usable(i)) out->devices.push_back(static_cast<int32_t>(i));
    }
    if (static_cast<int32_t>(out->devices.size()) < want) {
      out->devices.clear();
      return false;
    }
    out->milli_each = kGpuMilliWhole;
    out->memory_each = 0;
    return true;
  }
  // Free devices per NVLink domain. Domain numbers can be anything: count them per
  // distinct number (a node has few domains, so a linear table is enough).
  constexpr size_t kMaxDomains = 64;
  int32_t domain_id[kMaxDomains];
  int32_t free_in[kMaxDomains];
  size_t domains = 0;
  int32_t total_free = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!usable(i)) continue;
    ++total_free;
    const int32_t domain = node.devices[i].nvlink_domain;
    size_t d = 0;
    while (d < domains && domain_id[d] != domain) ++d;
    if (d == domains) {
      if (domains == kMaxDomains) continue;  // more domains than devices can have
      domain_id[domains] = domain;
      free_in[domains++] = 0;
    }
    ++free_in[d];
  }
  if (total_free < want) return false;
  size_t best = kMaxDomains;  // none
  for (size_t d = 0; d < domains; ++d) {
    if (free_in[d] < want) continue;
    bool better =
        best == kMaxDomains ||
        (packing == GpuPacking::kLoose ? free_in[d] > free_in[best] : free_in[d] < free_in[best]);
    if (better) best = d;
  }
  const bool use_domain = best != kMaxDomains;
  const int32_t best_domain = use_domain ? domain_id[best] : 0;
  out->devices.clear();
  for (size_t i = 0; i < n && static_cast<int32_t>(out->devices.size()) < want; ++i) {
    if (!usable(i)) continue;
    if (use_domain && node.devices[i].nvlink_domain != best_domain) continue;
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
    const int32_t share = SharedFitOn(request, node, i);
    if (share == 0) continue;
    const int32_t free = node.free_milli[i];
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

int32_t SharedFitOn(const GpuRequest& request, const NodeGpus& node, size_t i) {
  const GpuDevice& device = node.devices[i];
  if (!request.AllowsModel(device.model)) return 0;
  const int32_t share = GpuShareOn(request, device);
  if (node.free_milli[i] < share) return 0;
  if (request.memory_mib > 0 && device.memory_mib > 0 &&
      node.free_memory_mib[i] < request.memory_mib) {
    return 0;
  }
  return share;
}

bool ChooseGpus(const GpuRequest& request, const NodeGpus& node, GpuPacking packing,
                GpuChoice* out) {
  out->Clear();
  if (!request.wants_gpu()) return true;
  if (request.shared()) return ChooseShared(request, node, packing, out);
  return ChooseWhole(request, node, packing, out);
}

}  // namespace gantry

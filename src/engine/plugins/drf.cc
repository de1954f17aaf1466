#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "model/int128.h"

namespace gantry {
namespace {

// Dominant share in millionths: the largest fraction of the cluster's capacity of any
// resource that the job holds. Fixed point, so that ties are exact; against the exact
// totals, which a large cluster's memory (in milli-bytes) takes past int64.
int64_t DominantShare(const ResourceVector& allocated, const ClusterState& cluster) {
  int64_t share = 0;
  for (const auto& e : allocated.entries()) {
    const Int128 total = cluster.exact_capacity(e.id);
    if (total <= 0) continue;
    auto s = static_cast<int64_t>(MulDiv(e.amount, 1'000'000, total));
    share = std::max(share, s);
  }
  return share;
}

class DrfPlugin : public SessionCopyable<DrfPlugin>, public JobOrder {
 public:
  std::string_view name() const override { return "drf"; }

  int CompareJobs(const Session& s, JobId a, JobId b) const override {
    int64_t sa = DominantShare(s.job(a).allocated, s.cluster());
    int64_t sb = DominantShare(s.job(b).allocated, s.cluster());
    return sa == sb ? 0 : (sa < sb ? -1 : 1);
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewDrfPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new DrfPlugin());
}

}  // namespace gantry

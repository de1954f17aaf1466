// `gantry sim --datasets`: datasets for a replay's workload (issue 13, dataset locality), so
// that the time locality saves can be measured on a generated workload or a trace that
// names none. The datasets are sim/ds-0 ... sim/ds-<count-1>, of sizes drawn log-uniformly
// between the size bounds; each job reads one with probability share%, dataset k chosen
// with weight 1/(k+1)^zipf (a few popular datasets, a long tail). Deterministic for a seed,
// and drawn apart from the workload's own generator: the jobs are the same with or without.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "sim/dataset_cache.h"
#include "sim/workload.h"

namespace gantry {

struct DatasetWorkloadOptions {
  int64_t count = 0;                      // 1 to kMaxKnownDatasets
  double zipf = 1.0;                      // popularity exponent, 0 (uniform) to 10
  int64_t share_pct = 100;                // jobs that read a dataset
  int64_t min_bytes = int64_t{10} << 30;  // 10 GiB
  int64_t max_bytes = int64_t{1} << 40;   // 1 TiB
  uint64_t seed = 42;
  DatasetCacheOptions cache;  // bandwidth= and cache= (per node)
};

// "count=50,zipf=1.1,share=80,size=10Gi-1Ti,bandwidth=1Gi,cache=4Ti,seed=7": count is
// required; sizes as ParseDatasetSize reads them. Errors name the key and quote the value.
Result<DatasetWorkloadOptions> ParseDatasetWorkload(const std::string& text);

// Gives the jobs their datasets and adds the datasets' sizes to the cluster's table (a
// name it has already is an error).
Status AssignDatasets(const DatasetWorkloadOptions& options, std::vector<SimJob>* jobs,
                      ClusterState* cluster);

}  // namespace gantry

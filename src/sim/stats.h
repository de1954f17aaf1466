// The mean and sample standard deviation of a few values: a metric over a policy's seeds.
// The one place they are computed, so that the summary, the terminal table and the report
// agree to the last bit.
#pragma once

#include <cstddef>
#include <vector>

namespace gantry {

struct SampleStats {
  size_t count = 0;
  double mean = 0;  // 0 when there are no values
  double std = 0;   // the sample standard deviation (n - 1); 0 with fewer than two values
};

SampleStats MeanAndStd(const std::vector<double>& values);

}  // namespace gantry

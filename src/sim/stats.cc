#include "sim/stats.h"

#include <cmath>

namespace gantry {

SampleStats MeanAndStd(const std::vector<double>& values) {
  SampleStats s;
  s.count = values.size();
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  if (values.size() < 2) return s;
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return s;
}

}  // namespace gantry

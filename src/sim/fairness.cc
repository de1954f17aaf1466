#include "sim/fairness.h"

#include <algorithm>

namespace gantry {

double JainIndex(std::span<const double> x) {
  double sum = 0, squares = 0;
  for (double v : x) {
    sum += v;
    squares += v * v;
  }
  if (x.empty() || squares <= 0) return 1;
  return sum * sum / (static_cast<double>(x.size()) * squares);
}

void EvictionLoopDetector::Grow(int64_t job) {
  const auto size = static_cast<size_t>(job) + 1;
  if (out_.size() < size) {
    out_.resize(size);
    seen_.resize(size, 0);
  }
}

bool EvictionLoopDetector::Add(int64_t preemptor, int64_t victim) {
  Grow(std::max(preemptor, victim));
  std::vector<int64_t>& victims = out_[static_cast<size_t>(preemptor)];
  if (std::find(victims.begin(), victims.end(), victim) != victims.end()) return false;
  // A job evicting its own tasks would be a loop of one.
  const bool loop = preemptor == victim || Reaches(victim, preemptor);
  victims.push_back(victim);
  ++edges_;
  if (loop) ++loops_;
  return loop;
}

bool EvictionLoopDetector::Reaches(int64_t from, int64_t to) {
  // Iterative depth-first search: a long chain must not overflow the stack.
  ++search_;
  std::vector<int64_t> stack = {from};
  seen_[static_cast<size_t>(from)] = search_;
  while (!stack.empty()) {
    const int64_t job = stack.back();
    stack.pop_back();
    if (job == to) return true;
    for (int64_t next : out_[static_cast<size_t>(job)]) {
      if (seen_[static_cast<size_t>(next)] == search_) continue;
      seen_[static_cast<size_t>(next)] = search_;
      stack.push_back(next);
    }
  }
  return false;
}

}  // namespace gantry

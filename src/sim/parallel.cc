#include "sim/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace gantry {

void ParallelFor(size_t count, int threads, const std::function<void(size_t)>& body) {
  if (count == 0) return;
  const size_t workers =
      std::clamp<size_t>(threads < 1 ? 1 : static_cast<size_t>(threads), 1, count);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) body(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(workers);
  for (size_t k = 0; k < workers; ++k) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
}

}  // namespace gantry

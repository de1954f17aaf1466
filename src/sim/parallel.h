// Independent pieces of work side by side: the simulator's runs (a policy and a seed each).
#pragma once

#include <cstddef>
#include <functional>

namespace gantry {

// Calls body(i) once for each i in [0, count), on min(threads, count) threads (at least
// one), each taking the next index as it frees up; returns when all are done. `body` is
// called concurrently for distinct indices, so it must write only what belongs to its index.
void ParallelFor(size_t count, int threads, const std::function<void(size_t)>& body);

}  // namespace gantry

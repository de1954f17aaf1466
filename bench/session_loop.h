// The loop most engine benchmarks time: one session per iteration on the same snapshot.
#pragma once

#include <benchmark/benchmark.h>

#include "engine/session.h"

namespace gantry::bench {

// Runs a session per iteration of `state`; the last one's decisions.
inline Decisions RunSessions(benchmark::State& state, const Snapshot& snapshot,
                             const Policy& policy) {
  Decisions last;
  for (auto _ : state) {
    Session session(snapshot, policy);
    Decisions d = session.Run();
    benchmark::DoNotOptimize(d);
    last = std::move(d);
  }
  return last;
}

}  // namespace gantry::bench

// Hashing for the model's values, so that they can key hash maps as themselves (a spec, a
// node's shape) instead of as a canonical text built for the purpose. Equality decides
// what is the same; the hash only spreads values, so any field left out of it would only
// cost collisions, never merge two different values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/labels.h"
#include "model/resources.h"

namespace gantry {

// Accumulates a hash over a sequence of values. Not for adversaries: input can collide
// on purpose, which only costs time (the maps compare with ==).
class Hasher {
 public:
  Hasher& Add(uint64_t v) {
    // splitmix64's finalizer spreads every input bit over the word before it is combined.
    v += 0x9e3779b97f4a7c15ULL;
    v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
    v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
    v ^= v >> 31;
    state_ = (state_ ^ v) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
    return *this;
  }
  Hasher& Add(std::string_view s);  // its length too: "ab"+"c" differs from "a"+"bc"
  Hasher& Add(const ResourceVector& v);
  Hasher& Add(const Labels& labels);
  Hasher& Add(const Taint& taint);
  Hasher& Add(const Toleration& toleration);
  Hasher& Add(const SelectorRequirement& requirement);
  Hasher& Add(const NodeAffinity& affinity);
  template <typename T>
  Hasher& Add(const std::vector<T>& items) {
    Add(static_cast<uint64_t>(items.size()));
    for (const T& item : items) Add(item);
    return *this;
  }

  size_t value() const { return static_cast<size_t>(state_); }

 private:
  uint64_t state_ = 0xcbf29ce484222325ULL;
};

}  // namespace gantry

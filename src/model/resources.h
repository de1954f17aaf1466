// Resource vectors over interned resource names, with exact milli-unit amounts.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/interner.h"
#include "model/quantity.h"

namespace gantry {

using ResourceId = uint32_t;

// The well-known resources have fixed ids; any other name is interned on first use.
inline constexpr ResourceId kCpu = 0;
inline constexpr ResourceId kMemory = 1;
inline constexpr ResourceId kGpu = 2;  // nvidia.com/gpu, counted in milli-GPUs
inline constexpr ResourceId kPods = 3;
inline constexpr std::string_view kGpuResourceName = "nvidia.com/gpu";

// Where a resource name read from input comes from. Workloads (pods, scenario tasks, job
// rows) may add fewer new names than nodes and configuration (see model/limits.h).
enum class NameSource { kTrusted, kWorkload };

// The resource names of the process: one vocabulary for every cluster, decoder and session
// in it, so that a ResourceVector means the same thing wherever it goes (ids are compared in
// the engine's hottest loops; a table per cluster would make every vector carry its table,
// and the simulator's copies of a cluster share their specs). Append-only (see Interner),
// and bounded: the well-known names at their fixed ids, at most kMaxResourceNames in all, of
// which at most kMaxResourceNamesFromWorkloads added by workloads. The count of those is
// the table's, kept with it under its own lock.
class ResourceNameTable {
 public:
  ResourceNameTable();
  ResourceNameTable(const ResourceNameTable&) = delete;
  ResourceNameTable& operator=(const ResourceNameTable&) = delete;

  // See InternResourceName.
  Result<ResourceId> InternChecked(std::string_view name, NameSource source);
  Interner& names() { return names_; }

 private:
  Interner names_;
  std::mutex quota_mu_;  // held from the limit check to the add: no two take the last slot
  size_t added_by_workloads_ = 0;
};

// The process's table (made on first use, never destroyed: ids outlive every static).
ResourceNameTable& ProcessResourceNames();
// Its names (append-only; see Interner).
inline Interner& ResourceNames() {
  return ProcessResourceNames().names();
}
// Interns a name the program itself spells (a constant, a test). Unchecked: input goes
// through InternResourceName.
ResourceId InternResource(std::string_view name);
const std::string& ResourceName(ResourceId id);

// Interns a resource name read from input, after checking that it is a Kubernetes
// resource name ([prefix/]name: a DNS-subdomain prefix of at most 253 bytes, a name of at
// most 63 of [A-Za-z0-9-_.]) and that a new name stays within the limits on distinct
// names. Errors quote the name and say which rule or limit it broke.
Result<ResourceId> InternResourceName(std::string_view name, NameSource source);

// A sparse vector of (resource, amount) pairs, sorted by resource id, without zeros.
// Small (a handful of entries) and copied by value.
class ResourceVector {
 public:
  struct Entry {
    ResourceId id;
    Milli amount;
    bool operator==(const Entry&) const = default;
  };

  ResourceVector() = default;
  ResourceVector(std::initializer_list<Entry> entries);

  Milli Get(ResourceId id) const {
    for (const Entry& e : entries_) {
      if (e.id >= id) return e.id == id ? e.amount : 0;
    }
    return 0;
  }
  // Sets the amount; zero removes the entry.
  void Set(ResourceId id, Milli amount);
  bool empty() const { return entries_.empty(); }
  const std::vector<Entry>& entries() const { return entries_; }

  // Element-wise sum and difference, saturating at the int64 limits: an amount at
  // kMilliMax means "at least that much" (what hostile or bogus requests add up to), and
  // is never undefined behaviour.
  void Add(const ResourceVector& other);
  void Subtract(const ResourceVector& other);
  // True when some amount is at a saturation limit (its sum overflowed on the way).
  bool saturated() const;
  // Checked sum for input paths: false (and *this unchanged) on int64 overflow.
  bool CheckedAddInPlace(const ResourceVector& other);

  // True when every amount in *this is <= the same resource's amount in `limit`
  // (a resource missing from `limit` counts as zero).
  bool FitsIn(const ResourceVector& limit) const;
  // Like FitsIn, but only resources present in `limit` are compared: a limit that does
  // not name a resource does not limit it. Used for queue capabilities.
  bool FitsInNamed(const ResourceVector& limit) const;
  // The first resource of *this whose amount exceeds `limit`'s, or -1.
  int64_t FirstExceeding(const ResourceVector& limit, bool named_only) const;

  bool operator==(const ResourceVector&) const = default;

  // "cpu=2, memory=64Gi, nvidia.com/gpu=8" in resource-id order.
  std::string ToString() const;

 private:
  std::vector<Entry> entries_;
};

ResourceVector Min(const ResourceVector& a, const ResourceVector& b);
ResourceVector Max(const ResourceVector& a, const ResourceVector& b);

}  // namespace gantry

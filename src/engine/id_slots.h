// Slots for ids, for a table that holds entries for some ids only (the jobs and tasks a
// session touched): open addressing over at least twice the entries, so that a lookup is
// one probe in practice and no entry costs a heap node (as std::unordered_map's would).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace gantry {

class IdSlots {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  explicit IdSlots(size_t expected = 0) { Rehash(expected); }

  // The slot recorded for `id`, or kAbsent.
  uint32_t Find(uint32_t id) const {
    const size_t mask = keys_.size() - 1;
    for (size_t i = Hash(id) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == kAbsent) return kAbsent;
      if (keys_[i] == id) return values_[i];
    }
  }
  // Records `slot` for `id`. REQUIRES: id != kAbsent and Find(id) == kAbsent.
  void Insert(uint32_t id, uint32_t slot) {
    if (2 * (size_ + 1) > keys_.size()) Rehash(keys_.size());  // doubles
    Place(id, slot);
    ++size_;
  }
  size_t size() const { return size_; }

 private:
  static size_t Hash(uint32_t id) {
    return static_cast<size_t>((id * 0x9e3779b97f4a7c15ULL) >> 32);
  }
  void Place(uint32_t id, uint32_t slot) {
    const size_t mask = keys_.size() - 1;
    size_t i = Hash(id) & mask;
    while (keys_[i] != kAbsent) i = (i + 1) & mask;
    keys_[i] = id;
    values_[i] = slot;
  }
  void Rehash(size_t at_least) {
    size_t slots = 16;
    while (slots < 2 * at_least) slots *= 2;
    std::vector<uint32_t> keys = std::move(keys_), values = std::move(values_);
    keys_.assign(slots, kAbsent);
    values_.assign(slots, 0);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != kAbsent) Place(keys[i], values[i]);
    }
  }

  std::vector<uint32_t> keys_;
  std::vector<uint32_t> values_;
  size_t size_ = 0;
};

// Entries that never move once made, in chunks that double in size: a reference stays
// valid as more are added (unlike a vector's), and a thousand entries cost a handful of
// allocations (a deque of large entries allocates every few).
template <typename T>
class StableVector {
 public:
  explicit StableVector(size_t first_chunk = 16)
      : next_chunk_(first_chunk < 16 ? 16 : first_chunk) {}

  T& push_back(T value) {
    if (used_ == capacity_) {
      chunks_.push_back(std::make_unique<T[]>(next_chunk_));
      capacity_ = next_chunk_;
      used_ = 0;
      next_chunk_ *= 2;
    }
    T& slot = chunks_.back()[used_++];
    slot = std::move(value);
    ++size_;
    return slot;
  }
  size_t size() const { return size_; }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t next_chunk_;
  size_t capacity_ = 0;  // of the last chunk
  size_t used_ = 0;      // of the last chunk
  size_t size_ = 0;
};

}  // namespace gantry

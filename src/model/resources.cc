#include "model/resources.h"

#include <algorithm>

namespace gantry {

Interner& ResourceNames() {
  static Interner* names = [] {
    auto* table = new Interner();
    // Fixed ids for the well-known resources; order must match the constants.
    table->Intern("cpu");
    table->Intern("memory");
    table->Intern(kGpuResourceName);
    table->Intern("pods");
    return table;
  }();
  return *names;
}

ResourceId InternResource(std::string_view name) { return ResourceNames().Intern(name); }
const std::string& ResourceName(ResourceId id) { return ResourceNames().Name(id); }

ResourceVector::ResourceVector(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) Set(e.id, e.amount);
}

void ResourceVector::Set(ResourceId id, Milli amount) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), id,
                             [](const Entry& e, ResourceId key) { return e.id < key; });
  if (it != entries_.end() && it->id == id) {
    if (amount == 0) {
      entries_.erase(it);
    } else {
      it->amount = amount;
    }
  } else if (amount != 0) {
    entries_.insert(it, Entry{id, amount});
  }
}

void ResourceVector::Add(const ResourceVector& other) {
  for (const Entry& e : other.entries_) Set(e.id, Get(e.id) + e.amount);
}

void ResourceVector::Subtract(const ResourceVector& other) {
  for (const Entry& e : other.entries_) Set(e.id, Get(e.id) - e.amount);
}

bool ResourceVector::CheckedAddInPlace(const ResourceVector& other) {
  ResourceVector sum = *this;
  for (const Entry& e : other.entries_) {
    Milli total;
    if (!CheckedAdd(sum.Get(e.id), e.amount, &total)) return false;
    sum.Set(e.id, total);
  }
  *this = std::move(sum);
  return true;
}

int64_t ResourceVector::FirstExceeding(const ResourceVector& limit, bool named_only) const {
  // Both vectors are sorted by id: one merge pass.
  auto lim = limit.entries_.begin();
  for (const Entry& e : entries_) {
    while (lim != limit.entries_.end() && lim->id < e.id) ++lim;
    bool named = lim != limit.entries_.end() && lim->id == e.id;
    Milli cap = named ? lim->amount : 0;
    if (!named && named_only) continue;
    if (e.amount > cap) return e.id;
  }
  return -1;
}

bool ResourceVector::FitsIn(const ResourceVector& limit) const {
  return FirstExceeding(limit, /*named_only=*/false) < 0;
}

bool ResourceVector::FitsInNamed(const ResourceVector& limit) const {
  return FirstExceeding(limit, /*named_only=*/true) < 0;
}

std::string ResourceVector::ToString() const {
  std::string out;
  for (const Entry& e : entries_) {
    if (!out.empty()) out += ", ";
    out += ResourceName(e.id);
    out += '=';
    out += FormatQuantity(e.amount, /*binary=*/e.id == kMemory);
  }
  return out.empty() ? "none" : out;
}

ResourceVector Min(const ResourceVector& a, const ResourceVector& b) {
  ResourceVector out;
  for (const auto& e : a.entries()) out.Set(e.id, std::min(e.amount, b.Get(e.id)));
  for (const auto& e : b.entries()) out.Set(e.id, std::min(e.amount, a.Get(e.id)));
  return out;
}

ResourceVector Max(const ResourceVector& a, const ResourceVector& b) {
  ResourceVector out = a;
  for (const auto& e : b.entries()) out.Set(e.id, std::max(e.amount, a.Get(e.id)));
  return out;
}

}  // namespace gantry

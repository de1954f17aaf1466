#include "model/resources.h"

#include <algorithm>
#include <limits>
#include <mutex>

#include "model/limits.h"

namespace gantry {

ResourceNameTable::ResourceNameTable() {
  // Fixed ids for the well-known resources; order must match the constants.
  names_.Intern("cpu");
  names_.Intern("memory");
  names_.Intern(kGpuResourceName);
  names_.Intern("pods");
}

ResourceNameTable& ProcessResourceNames() {
  static ResourceNameTable* table = new ResourceNameTable();
  return *table;
}

ResourceId InternResource(std::string_view name) {
  return ResourceNames().Intern(name);
}
const std::string& ResourceName(ResourceId id) {
  return ResourceNames().Name(id);
}

namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Why `name` is not a Kubernetes resource name, or "" when it is one.
std::string ResourceNameProblem(std::string_view name) {
  if (name.empty()) return "empty";
  if (name.size() > kMaxLabelKeyLength) {
    return std::to_string(name.size()) + " bytes long (the limit is " +
           std::to_string(kMaxLabelKeyLength) + ")";
  }
  std::string_view prefix, base = name;
  if (size_t slash = name.find('/'); slash != std::string_view::npos) {
    prefix = name.substr(0, slash);
    base = name.substr(slash + 1);
    if (prefix.empty() || prefix.size() > 253) return "its prefix must have 1 to 253 bytes";
    for (char c : prefix) {
      if (!IsAlnum(c) && c != '-' && c != '.') return "its prefix must be a DNS subdomain";
    }
  }
  if (base.empty() || base.size() > 63) return "its name must have 1 to 63 bytes";
  if (!IsAlnum(base.front()) || !IsAlnum(base.back())) {
    return "its name must begin and end with a letter or digit";
  }
  for (char c : base) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') {
      return "its name may hold only letters, digits, '-', '_' and '.'";
    }
  }
  return "";
}

}  // namespace

Result<ResourceId> ResourceNameTable::InternChecked(std::string_view name, NameSource source) {
  // Printable and short, whatever was given, for the messages.
  auto quoted = [&] {
    std::string out = "\"";
    for (char c : name.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return out + (name.size() > 80 ? "...\"" : "\"");
  };
  if (std::string why = ResourceNameProblem(name); !why.empty()) {
    return Status::Invalid("resource name " + quoted() + " is not valid: " + why);
  }
  if (int64_t known = names_.Find(name); known >= 0) return static_cast<ResourceId>(known);
  // Check and add under one lock, so that two threads cannot both take the last slot.
  std::lock_guard<std::mutex> lock(quota_mu_);
  if (int64_t known = names_.Find(name); known >= 0) return static_cast<ResourceId>(known);
  if (names_.size() >= kMaxResourceNames) {
    return Status::OutOfRange("resource name " + quoted() + " refused: already " +
                              std::to_string(kMaxResourceNames) +
                              " distinct resource names, the limit");
  }
  if (source == NameSource::kWorkload) {
    if (added_by_workloads_ >= kMaxResourceNamesFromWorkloads) {
      return Status::OutOfRange("resource name " + quoted() +
                                " refused: no node offers it, and workloads have already named " +
                                std::to_string(kMaxResourceNamesFromWorkloads) +
                                " such resources, the limit");
    }
    ++added_by_workloads_;
  }
  return names_.Intern(name);
}

Result<ResourceId> InternResourceName(std::string_view name, NameSource source) {
  return ProcessResourceNames().InternChecked(name, source);
}

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
  for (const Entry& e : other.entries_) Set(e.id, SaturatingAdd(Get(e.id), e.amount));
}

void ResourceVector::Subtract(const ResourceVector& other) {
  for (const Entry& e : other.entries_) Set(e.id, SaturatingSub(Get(e.id), e.amount));
}

bool ResourceVector::saturated() const {
  return std::any_of(entries_.begin(), entries_.end(), [](const Entry& e) {
    return e.amount == std::numeric_limits<Milli>::max() ||
           e.amount == std::numeric_limits<Milli>::min();
  });
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

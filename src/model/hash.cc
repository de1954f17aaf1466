#include "model/hash.h"

#include <functional>

namespace gantry {

Hasher& Hasher::Add(std::string_view s) {
  Add(static_cast<uint64_t>(s.size()));
  return Add(static_cast<uint64_t>(std::hash<std::string_view>()(s)));
}

Hasher& Hasher::Add(const ResourceVector& v) {
  Add(static_cast<uint64_t>(v.entries().size()));
  for (const ResourceVector::Entry& e : v.entries()) {
    Add(static_cast<uint64_t>(e.id));
    Add(static_cast<uint64_t>(e.amount));
  }
  return *this;
}

Hasher& Hasher::Add(const Labels& labels) {
  Add(static_cast<uint64_t>(labels.pairs().size()));
  for (const auto& [key, value] : labels.pairs()) Add(key).Add(value);
  return *this;
}

Hasher& Hasher::Add(const Taint& taint) {
  return Add(taint.key).Add(taint.value).Add(static_cast<uint64_t>(taint.effect));
}

Hasher& Hasher::Add(const Toleration& t) {
  return Add(t.key)
      .Add(static_cast<uint64_t>(t.op))
      .Add(t.value)
      .Add(static_cast<uint64_t>(t.any_effect))
      .Add(static_cast<uint64_t>(t.effect));
}

Hasher& Hasher::Add(const SelectorRequirement& r) {
  return Add(r.key).Add(static_cast<uint64_t>(r.op)).Add(r.values);
}

Hasher& Hasher::Add(const NodeAffinity& affinity) {
  return Add(affinity.terms);
}

}  // namespace gantry

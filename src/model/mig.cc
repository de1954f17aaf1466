#include "model/mig.h"

#include <algorithm>
#include <cctype>

#include "model/limits.h"

namespace gantry {
namespace {

// The seven profiles of a 7-slice GPU whose smallest slice has `g1` GB, in NVIDIA's
// names: 1g.<g1>, 1g.<g1>+me, 1g.<2 g1>, 2g.<2 g1>, 3g.<half>, 4g.<half>, 7g.<all>.
MigFamily SevenSliceFamily(std::string_view name, std::string_view g1, std::string_view g1me,
                           std::string_view g2, std::string_view c2, std::string_view c3,
                           std::string_view c4, std::string_view c7, int64_t slice_mib) {
  return MigFamily{name,
                   7,
                   8,
                   {{g1, 1, 1, slice_mib},
                    {g1me, 1, 1, slice_mib},
                    {g2, 1, 2, 2 * slice_mib},
                    {c2, 2, 2, 2 * slice_mib},
                    {c3, 3, 4, 4 * slice_mib},
                    {c4, 4, 4, 4 * slice_mib},
                    {c7, 7, 8, 8 * slice_mib}}};
}

std::vector<MigFamily> MakeFamilies() {
  std::vector<MigFamily> families;
  families.push_back(SevenSliceFamily("A100-80GB", "1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb",
                                      "3g.40gb", "4g.40gb", "7g.80gb", 10240));
  families.push_back(SevenSliceFamily("A100-40GB", "1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb",
                                      "3g.20gb", "4g.20gb", "7g.40gb", 5120));
  families.push_back(SevenSliceFamily("H100-94GB", "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb",
                                      "3g.47gb", "4g.47gb", "7g.94gb", 12032));
  families.push_back(SevenSliceFamily("H100-96GB", "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb",
                                      "3g.48gb", "4g.48gb", "7g.96gb", 12288));
  families.push_back(SevenSliceFamily("H200-141GB", "1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb",
                                      "3g.71gb", "4g.71gb", "7g.141gb", 18048));
  families.push_back(SevenSliceFamily("B200-180GB", "1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb",
                                      "3g.90gb", "4g.90gb", "7g.180gb", 23040));
  families.push_back(MigFamily{"A30-24GB",
                               4,
                               4,
                               {{"1g.6gb", 1, 1, 6144},
                                {"1g.6gb+me", 1, 1, 6144},
                                {"2g.12gb", 2, 2, 12288},
                                {"2g.12gb+me", 2, 2, 12288},
                                {"4g.24gb", 4, 4, 24576}}});
  return families;
}

const MigProfile* ProfileIn(const MigFamily& family, std::string_view name) {
  for (const MigProfile& p : family.profiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// "40GB" of "A100-40GB": what a product label of that family carries.
std::string_view MemoryToken(const MigFamily& family) {
  return family.name.substr(family.name.rfind('-') + 1);
}

std::string KnownProfiles() {
  std::vector<std::string_view> names;
  for (const MigFamily& f : MigFamilies()) {
    for (const MigProfile& p : f.profiles) names.push_back(p.name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

Status UnknownProfile(std::string_view profile) {
  return Status::Invalid("unknown MIG profile \"" + std::string(profile) +
                         "\" (known: " + KnownProfiles() + ")");
}

// A "+me" profile takes all of its GPU's media engines (decoders, JPEG, OFA), so a GPU
// holds at most one of them: `nvidia-smi mig -lgip` on an H200 lists 1g.18gb+me as 1/1
// instances beside 7/7 of 1g.18gb.
bool TakesAllMediaEngines(std::string_view profile) {
  return profile.ends_with("+me");
}

bool TakesAllMediaEngines(ResourceId resource) {
  return TakesAllMediaEngines(MigProfileOfResource(ResourceName(resource)));
}

// The slices each physical GPU has in use by the devices laid out on it.
struct GpuSlices {
  int32_t compute = 0;
  int32_t memory = 0;
  bool media_engines = false;  // a "+me" device holds them
};

Status CheckLayout(const std::string& where, const MigFamily& family,
                   const std::vector<MigDevice>& devices, int32_t gpus) {
  std::vector<GpuSlices> slices(static_cast<size_t>(gpus));
  for (const MigDevice& d : devices) {
    if (d.gpu < 0 || d.gpu >= gpus) {
      return Status::Invalid(where + ": a MIG device is on GPU " + std::to_string(d.gpu) + " of " +
                             std::to_string(gpus));
    }
    GpuSlices& s = slices[static_cast<size_t>(d.gpu)];
    s.compute += d.compute_slices;
    s.memory += d.memory_slices;
    if (TakesAllMediaEngines(d.resource)) {
      if (s.media_engines) {
        return Status::Invalid(where + ": GPU " + std::to_string(d.gpu) +
                               " has two MIG devices that each take all its media engines "
                               "(a \"+me\" profile: at most one per GPU)");
      }
      s.media_engines = true;
    }
    if (s.compute > family.gpu_compute_slices || s.memory > family.gpu_memory_slices) {
      return Status::Invalid(where + ": the MIG devices of GPU " + std::to_string(d.gpu) +
                             " take more than its " + std::to_string(family.gpu_compute_slices) +
                             " compute and " + std::to_string(family.gpu_memory_slices) +
                             " memory slices (" + std::string(family.name) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

const std::vector<MigFamily>& MigFamilies() {
  static const std::vector<MigFamily> families = MakeFamilies();
  return families;
}

Result<std::vector<MigProfileRef>> FindMigProfiles(const std::vector<std::string>& profiles,
                                                   std::string_view hint) {
  for (const std::string& p : profiles) {
    bool known = std::any_of(MigFamilies().begin(), MigFamilies().end(),
                             [&](const MigFamily& f) { return ProfileIn(f, p) != nullptr; });
    if (!known) return UnknownProfile(p);
  }
  const std::string upper_hint = Upper(hint);
  const MigFamily* chosen = nullptr;
  for (const MigFamily& f : MigFamilies()) {
    bool offers_all = std::all_of(profiles.begin(), profiles.end(),
                                  [&](const std::string& p) { return ProfileIn(f, p) != nullptr; });
    if (!offers_all) continue;
    if (chosen == nullptr) chosen = &f;
    if (!upper_hint.empty() && upper_hint.find(MemoryToken(f)) != std::string::npos) {
      chosen = &f;
      break;
    }
  }
  if (chosen == nullptr) {
    std::string names;
    for (const std::string& p : profiles) names += (names.empty() ? "" : ", ") + p;
    return Status::Invalid("MIG profiles " + names + " are not all of one GPU family");
  }
  std::vector<MigProfileRef> out;
  for (const std::string& p : profiles) out.push_back({chosen, ProfileIn(*chosen, p)});
  return out;
}

Result<MigProfileRef> FindMigProfile(std::string_view profile, std::string_view hint) {
  auto found = FindMigProfiles({std::string(profile)}, hint);
  if (!found.ok()) return found.status();
  return found->front();
}

std::string_view MigProfileOfResource(std::string_view resource_name) {
  if (!resource_name.starts_with(kMigResourcePrefix)) return {};
  return resource_name.substr(kMigResourcePrefix.size());
}

bool RequestsMig(const ResourceVector& requests) {
  return std::any_of(requests.entries().begin(), requests.entries().end(), [](const auto& e) {
    return !MigProfileOfResource(ResourceName(e.id)).empty();
  });
}

Status CheckMigRequests(const ResourceVector& requests, const std::string& where) {
  for (const auto& e : requests.entries()) {
    std::string_view profile = MigProfileOfResource(ResourceName(e.id));
    if (profile.empty()) continue;
    auto found = FindMigProfile(profile, "");
    if (!found.ok()) {
      return Status::Invalid((where.empty() ? "" : where + ".") + ResourceName(e.id) + ": " +
                             found.status().message());
    }
  }
  return Status::Ok();
}

int32_t MigDevicesPerGpu(const MigProfileRef& ref) {
  if (TakesAllMediaEngines(ref.profile->name)) return 1;
  return std::min(ref.family->gpu_compute_slices / ref.profile->compute_slices,
                  ref.family->gpu_memory_slices / ref.profile->memory_slices);
}

Status PrepareNodeMig(const std::string& node_name, const Labels& labels,
                      const ResourceVector& allocatable, std::string_view product, NodeMig* mig,
                      MigProfileRef* single_profile) {
  const std::string where = "node \"" + node_name + "\"";
  mig->unready_state.clear();
  if (const std::string* state = labels.Find(kMigConfigStateLabel);
      state != nullptr && *state != "success") {
    mig->unready_state = state->empty() ? "(empty)" : *state;
  }
  const std::string* strategy = labels.Find(kMigStrategyLabel);
  *single_profile = {};
  // Single strategy: only a GPU product that names a profile is cut; others are whole.
  if (strategy != nullptr && *strategy == "single") {
    mig->strategy = MigStrategy::kNone;
    mig->devices.clear();
    mig->gpus = 0;
    size_t at = product.rfind("-MIG-");
    if (at == std::string_view::npos) return Status::Ok();
    std::string_view profile = product.substr(at + 5);
    auto found = FindMigProfile(profile, product.substr(0, at));
    if (!found.ok()) {
      return Status::Invalid(
          where + ": metadata.labels[nvidia.com/gpu.product]: " + found.status().message());
    }
    mig->strategy = MigStrategy::kSingle;
    *single_profile = *found;
    return Status::Ok();
  }
  // Mixed (or no strategy label): the MIG resources in allocatable say what there is.
  std::vector<std::string> profiles;
  std::vector<std::pair<ResourceId, int64_t>> counts;
  for (const auto& e : allocatable.entries()) {
    std::string_view profile = MigProfileOfResource(ResourceName(e.id));
    if (profile.empty()) continue;
    const std::string field = where + ": allocatable " + ResourceName(e.id);
    if (e.amount % kMilliPerUnit != 0) {
      return Status::Invalid(field + ": " + FormatQuantity(e.amount) + " is not a whole number");
    }
    if (e.amount / kMilliPerUnit > kMaxGpusPerNode) {
      return Status::OutOfRange(field + ": " + std::to_string(e.amount / kMilliPerUnit) +
                                " devices is more than a node may have (" +
                                std::to_string(kMaxGpusPerNode) + ", the limit)");
    }
    profiles.emplace_back(profile);
    counts.emplace_back(e.id, e.amount / kMilliPerUnit);
  }
  if (profiles.empty()) {
    mig->strategy = MigStrategy::kNone;
    mig->devices.clear();
    mig->gpus = 0;
    return Status::Ok();
  }
  auto refs = FindMigProfiles(profiles, product);
  if (!refs.ok()) return Status::Invalid(where + ": allocatable: " + refs.status().message());
  const MigFamily& family = *refs->front().family;
  mig->strategy = MigStrategy::kMixed;
  int64_t total = 0;
  for (const auto& [id, count] : counts) total += count;
  if (total > kMaxGpusPerNode) {
    return Status::OutOfRange(where + ": " + std::to_string(total) +
                              " MIG devices is more than a node may have (" +
                              std::to_string(kMaxGpusPerNode) + ", the limit)");
  }
  if (!mig->devices.empty()) {
    // A layout the loader gave: it must be the devices the node advertises.
    for (size_t i = 0; i < counts.size(); ++i) {
      int64_t laid =
          std::count_if(mig->devices.begin(), mig->devices.end(),
                        [&](const MigDevice& d) { return d.resource == counts[i].first; });
      if (laid != counts[i].second) {
        return Status::Invalid(where + ": the MIG layout has " + std::to_string(laid) + " " +
                               profiles[i] + " devices, allocatable has " +
                               std::to_string(counts[i].second));
      }
    }
    if (static_cast<int64_t>(mig->devices.size()) != total) {
      return Status::Invalid(where + ": the MIG layout has devices allocatable does not name");
    }
    for (MigDevice& d : mig->devices) {
      const MigProfile* p = ProfileIn(family, MigProfileOfResource(ResourceName(d.resource)));
      d.compute_slices = p->compute_slices;
      d.memory_slices = p->memory_slices;
    }
    return CheckLayout(where, family, mig->devices, mig->gpus);
  }
  // No layout known: the largest devices first, each on the first GPU with room.
  std::vector<MigDevice> wanted;
  for (size_t i = 0; i < counts.size(); ++i) {
    const MigProfile& p = *(*refs)[i].profile;
    for (int64_t k = 0; k < counts[i].second; ++k) {
      wanted.push_back({counts[i].first, 0, p.compute_slices, p.memory_slices, kNoMigHolder});
    }
  }
  std::stable_sort(wanted.begin(), wanted.end(), [](const MigDevice& a, const MigDevice& b) {
    if (a.compute_slices != b.compute_slices) return a.compute_slices > b.compute_slices;
    if (a.memory_slices != b.memory_slices) return a.memory_slices > b.memory_slices;
    return a.resource < b.resource;
  });
  std::vector<GpuSlices> used;
  for (MigDevice& d : wanted) {
    const bool media_engines = TakesAllMediaEngines(d.resource);
    size_t g = 0;
    while (g < used.size() && (used[g].compute + d.compute_slices > family.gpu_compute_slices ||
                               used[g].memory + d.memory_slices > family.gpu_memory_slices ||
                               (media_engines && used[g].media_engines))) {
      ++g;
    }
    if (g == used.size()) used.emplace_back();
    used[g].compute += d.compute_slices;
    used[g].memory += d.memory_slices;
    used[g].media_engines = used[g].media_engines || media_engines;
    d.gpu = static_cast<int32_t>(g);
  }
  std::stable_sort(wanted.begin(), wanted.end(),
                   [](const MigDevice& a, const MigDevice& b) { return a.gpu < b.gpu; });
  mig->devices = std::move(wanted);
  mig->gpus = static_cast<int32_t>(used.size());
  return Status::Ok();
}

std::vector<int32_t> TakeMigDevices(NodeMig& mig, ResourceId resource, int64_t count,
                                    uint32_t holder) {
  std::vector<int32_t> taken;
  std::vector<int32_t> busy(static_cast<size_t>(mig.gpus), 0);
  for (const MigDevice& d : mig.devices) {
    if (d.holder != kNoMigHolder) busy[static_cast<size_t>(d.gpu)] += d.compute_slices;
  }
  while (static_cast<int64_t>(taken.size()) < count) {
    int32_t best = -1;
    for (size_t i = 0; i < mig.devices.size(); ++i) {
      const MigDevice& d = mig.devices[i];
      if (d.resource != resource || d.holder != kNoMigHolder) continue;
      if (best < 0 || busy[static_cast<size_t>(d.gpu)] >
                          busy[static_cast<size_t>(mig.devices[static_cast<size_t>(best)].gpu)]) {
        best = static_cast<int32_t>(i);
      }
    }
    if (best < 0) break;
    MigDevice& d = mig.devices[static_cast<size_t>(best)];
    d.holder = holder;
    busy[static_cast<size_t>(d.gpu)] += d.compute_slices;
    taken.push_back(best);
  }
  return taken;
}

MigUsage CountMig(const NodeMig& mig) {
  MigUsage usage;
  usage.devices = static_cast<int32_t>(mig.devices.size());
  usage.gpus = mig.gpus;
  std::vector<int32_t> used_on(static_cast<size_t>(mig.gpus), 0);
  for (const MigDevice& d : mig.devices) {
    if (d.holder == kNoMigHolder) continue;
    usage.used++;
    used_on[static_cast<size_t>(d.gpu)]++;
  }
  for (int32_t n : used_on) usage.untouched_gpus += n == 0 ? 1 : 0;
  for (const MigDevice& d : mig.devices) {
    if (d.holder == kNoMigHolder && used_on[static_cast<size_t>(d.gpu)] > 0) usage.stranded++;
  }
  return usage;
}

}  // namespace gantry

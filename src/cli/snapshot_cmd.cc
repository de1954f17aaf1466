// `gantry snapshot`: the live cluster, as the daemon would see it, in the scenario format.
// Every collection the daemon watches is listed once and fed to a ClusterCache (the code
// that turns API objects into the model), and the result is written by WriteScenario,
// with the pods of ours created in the last window as arrivals and the shapes of the
// pods it saw as the workload profile.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>

#include "cli/commands.h"
#include "daemon/config.h"
#include "daemon/watch_sources.h"
#include "k8s/client.h"
#include "k8s/credentials.h"
#include "k8s/objects.h"
#include "k8s/timestamp.h"
#include "sim/scenario_writer.h"

namespace gantry {
namespace {

using nlohmann::json;

// DRA's kinds, whose objects are written as listed (ScenarioWriteOptions::device_objects);
// null for the others.
const char* DeviceKindName(WatchKind kind) {
  switch (kind) {
    case WatchKind::kDeviceClass:
      return "DeviceClass";
    case WatchKind::kResourceSlice:
      return "ResourceSlice";
    case WatchKind::kResourceClaim:
      return "ResourceClaim";
    case WatchKind::kDeviceTaintRule:
      return "DeviceTaintRule";
    default:
      return nullptr;
  }
}

// An API object as a scenario holds it: without the server's bookkeeping of writers.
std::string ScenarioObject(const std::string& api_version, const std::string& kind, json item) {
  item["apiVersion"] = api_version;  // a list's items may leave them out
  item["kind"] = kind;
  if (item.contains("metadata") && item["metadata"].is_object()) {
    item["metadata"].erase("managedFields");
  }
  return item.dump();
}

// Lists a collection page by page, handing each item on. Returns false when the server
// does not have it (404: its CRD is not installed).
Result<bool> ListAll(k8s::Client& client, const std::string& collection,
                     const std::function<void(const json&)>& on_item) {
  std::string continue_token;
  do {
    std::string path = collection + "?limit=500";
    if (!continue_token.empty()) path += "&continue=" + k8s::UrlEncode(continue_token);
    auto response = client.Get(path);
    if (!response.ok()) return response.status();
    if (response->status == 404) return false;
    if (!response->ok()) return Status::Failed("GET " + path + ": " + response->Describe());
    json page = json::parse(response->body, nullptr, false);
    if (!page.is_object()) return Status::Failed("GET " + path + ": the answer is not JSON");
    const json meta = page.value("metadata", json::object());
    continue_token = meta.contains("continue") && meta["continue"].is_string()
                         ? meta["continue"].get<std::string>()
                         : "";
    if (page.contains("items") && page["items"].is_array()) {
      for (const json& item : page["items"]) on_item(item);
    }
  } while (!continue_token.empty());
  return true;
}

// The pods of ours created in the window before `now`: one arrival per job and shape,
// at its earliest pod's creation.
std::vector<ScenarioArrival> RecentArrivals(const ClusterState& state,
                                            const std::map<std::string, int64_t>& created,
                                            int64_t now, int64_t window) {
  std::vector<ScenarioArrival> out;
  for (JobId j = 0; j < state.jobs().size(); ++j) {
    const Job& job = state.job(j);
    if (job.tasks.empty() || state.queue(job.queue).name == kOtherSchedulersQueue) continue;
    std::map<SpecId, ScenarioArrival> by_spec;
    for (TaskId t : job.tasks) {
      auto it = created.find(state.task(t).name);
      if (it == created.end() || it->second < now - window || it->second > now) continue;
      auto [entry, inserted] = by_spec.try_emplace(state.task(t).spec);
      ScenarioArrival& a = entry->second;
      if (inserted) {
        a.at = it->second - now;
        a.job.name = job.name;
        a.job.queue = state.queue(job.queue).name;
        a.job.priority = job.priority;
        a.job.topology = job.topology;
        a.job.spec = state.spec(state.task(t).spec);
        a.job.pods = 0;
      }
      a.at = std::min(a.at, it->second - now);
      ++a.job.pods;
      a.job.movable = a.job.movable || state.task(t).movable;
    }
    for (auto& [spec, a] : by_spec) {
      a.job.min_member = std::min(job.min_member, a.job.pods);
      if (by_spec.size() > 1)
        a.job.name += "/" + (a.job.spec.role.empty() ? "task" : a.job.spec.role);
      out.push_back(std::move(a));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ScenarioArrival& a, const ScenarioArrival& b) { return a.at < b.at; });
  return out;
}

}  // namespace

int RunSnapshot(const SnapshotOptions& o) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "gantry snapshot: %s\n", message.c_str());
    return 2;
  };
  if (o.window_s < 1 || o.window_s > kMaxArrivalWindowS) {
    return fail("--window: must be 1 to " + std::to_string(kMaxArrivalWindowS) + " seconds");
  }
  if (o.scheduler_name.empty()) return fail("--scheduler-name: must not be empty");
  auto credentials = k8s::FindCredentials(o.kubeconfig);
  if (!credentials.ok()) return fail(credentials.status().message());
  k8s::ClientOptions client_options;
  client_options.user_agent = "gantry-snapshot";
  auto client = k8s::Client::Create(*credentials, client_options);
  if (!client.ok()) return fail(client.status().message());

  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  // As the daemon sees the cluster: its defaults (a daemon configuration's topology keys and
  // default spreading are not read here).
  const DaemonConfig defaults;
  ClusterCache cache(o.scheduler_name);
  cache.SetProfileHalfLife(defaults.workload_profile_half_life_s);
  ScenarioWriteOptions options;
  std::map<std::string, int64_t> created;  // pod key -> creation time
  int64_t pods = 0;
  for (const WatchSource& source : WatchSources()) {
    auto listed = ListAll(**client, source.path, [&](const json& item) {
      if (source.kind == WatchKind::kPod) {
        ++pods;
        // ParseMeta leaves creation times to the decoders: read it here.
        const json& m = item.value("metadata", json::object());
        auto meta = k8s::ParseMeta(item);
        if (meta.ok() && m.contains("creationTimestamp") && m["creationTimestamp"].is_string()) {
          auto at = k8s::ParseRfc3339(m["creationTimestamp"].get<std::string>());
          if (at.ok()) created[meta->Key()] = *at;
        }
      }
      ApplyWatchObject(cache, source.kind, k8s::EventType::kAdded, item);
      if (const char* kind = DeviceKindName(source.kind)) {
        // "/apis/GROUP/VERSION/RESOURCE": the objects' apiVersion is GROUP/VERSION.
        const std::string path = source.path;
        const std::string api_version =
            path.substr(6, path.rfind('/') - 6);  // 6: the length of "/apis/"
        options.device_objects.push_back(ScenarioObject(api_version, kind, item));
      }
    });
    if (listed.ok()) continue;
    // Without nodes or pods there is no snapshot; without the rest (RBAC may refuse a
    // kind), the daemon's view lacks what they add, which is said.
    if (source.kind == WatchKind::kNode || source.kind == WatchKind::kPod) {
      return fail(listed.status().message());
    }
    std::fprintf(stderr, "gantry snapshot: warning: %s (left out)\n",
                 listed.status().message().c_str());
  }
  for (const ObjectEvent& e : cache.TakeProblems()) {
    std::fprintf(stderr, "gantry snapshot: warning: %s %s%s%s: %s\n", e.kind.c_str(),
                 e.namespace_.c_str(), e.namespace_.empty() ? "" : "/", e.name.c_str(),
                 e.message.c_str());
  }
  ClusterState& state = cache.state();
  state.SetWorkloadProfile(cache.ProfileAt(static_cast<double>(now)));
  ScenarioSnapshot snapshot;
  snapshot.arrival_window_s = o.window_s;
  snapshot.arrivals = RecentArrivals(state, created, now, o.window_s);

  const DeviceInputs devices = cache.DeviceInputsForSession();
  if (devices.admin_namespaces != nullptr) {
    options.admin_access_namespaces.assign(devices.admin_namespaces->begin(),
                                           devices.admin_namespaces->end());
  }
  options.name = "snapshot";
  options.now = now;
  options.snapshot = &snapshot;
  options.running_bound = true;
  options.comments = {"gantry snapshot of " + credentials->server + " at " + std::to_string(now) +
                          " (seconds since 1970), scheduler name " + o.scheduler_name,
                      std::to_string(state.live_node_count()) + " nodes, " + std::to_string(pods) +
                          " pods, " + std::to_string(snapshot.arrivals.size()) +
                          " arrivals in the last " + std::to_string(o.window_s) + " s",
                      "Replay it: gantry sim --snapshot FILE --policy gantry,fgd"};
  const WrittenScenario written = WriteScenario(state, options);
  for (const std::string& line : written.left_out) {
    std::fprintf(stderr, "gantry snapshot: left out: %s\n", line.c_str());
  }
  if (o.out == "-") {
    std::fputs(written.text.c_str(), stdout);
    return 0;
  }
  std::ofstream out(o.out, std::ios::binary);
  out << written.text;
  if (!out) return fail(o.out + ": cannot write the file");
  std::fprintf(stderr, "gantry snapshot: wrote %s (%zu nodes, %lld pods, %zu arrivals)\n",
               o.out.c_str(), state.live_node_count(), static_cast<long long>(pods),
               snapshot.arrivals.size());
  return 0;
}

}  // namespace gantry

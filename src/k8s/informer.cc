#include "k8s/informer.h"

#include <chrono>
#include <thread>
#include <unordered_set>

#include "k8s/json_text.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

std::string KeyOf(const json& object) {
  const json& m = object.contains("metadata") ? object["metadata"] : json();
  std::string ns = m.is_object() && m.contains("namespace") && m["namespace"].is_string()
                       ? m["namespace"].get<std::string>()
                       : "";
  std::string name = m.is_object() && m.contains("name") && m["name"].is_string()
                         ? m["name"].get<std::string>()
                         : "";
  return ns.empty() ? name : ns + "/" + name;
}

std::string VersionOf(const json& object) {
  if (!object.contains("metadata")) return "";
  const json& m = object["metadata"];
  return m.contains("resourceVersion") && m["resourceVersion"].is_string()
             ? m["resourceVersion"].get<std::string>()
             : "";
}

// What a deletion found without its object (by a relist) reports: the key's metadata.
json DeletedStub(const std::string& key) {
  size_t slash = key.find('/');
  json stub = {{"metadata", {{"name", slash == std::string::npos ? key : key.substr(slash + 1)}}}};
  if (slash != std::string::npos) stub["metadata"]["namespace"] = key.substr(0, slash);
  return stub;
}

}  // namespace

Informer::Informer(Client& client, std::string path, EventHandler handler, InformerOptions options)
    : client_(client), path_(std::move(path)), handler_(std::move(handler)), options_(options) {}

std::string Informer::last_error() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return last_error_;
}

void Informer::SetError(std::string error) {
  std::lock_guard<std::mutex> lock(error_mu_);
  last_error_ = std::move(error);
}

void Informer::Sleep(double seconds, const std::atomic<bool>& stop) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!stop.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool Informer::List(const std::atomic<bool>& stop) {
  lists_++;
  // Each page is reported as it comes, so that memory holds one page of objects, not
  // the whole list; deletions are known only once the last page has come.
  std::unordered_set<std::string> seen;
  std::string continue_token;
  std::string version;
  do {
    std::string path = path_ + "?limit=" + std::to_string(options_.page_size);
    if (!continue_token.empty()) path += "&continue=" + UrlEncode(continue_token);
    auto response = client_.Get(path);
    if (!response.ok()) {
      SetError(response.status().message());
      return false;
    }
    if (response->status == 404) {
      // The resource does not exist here (no CRD): nothing to report, look again later.
      for (const auto& [key, v] : versions_) {
        handler_(EventType::kDeleted, DeletedStub(key));
      }
      versions_.clear();
      resource_version_.clear();
      synced_ = true;
      SetError("GET " + path_ + ": 404 (resource not installed)");
      return false;
    }
    if (response->status == 410 && !continue_token.empty()) {
      // The continue token expired mid-list: start over.
      continue_token.clear();
      seen.clear();
      continue;
    }
    if (!response->ok()) {
      SetError("GET " + path + ": " + response->Describe());
      return false;
    }
    json page = json::parse(response->body, nullptr, false);
    if (!page.is_object()) {
      SetError("GET " + path + ": the answer is not JSON");
      return false;
    }
    const json& meta = page.contains("metadata") ? page["metadata"] : json::object();
    continue_token = meta.contains("continue") && meta["continue"].is_string()
                         ? meta["continue"].get<std::string>()
                         : "";
    if (meta.contains("resourceVersion") && meta["resourceVersion"].is_string()) {
      version = meta["resourceVersion"].get<std::string>();
    }
    if (page.contains("items") && page["items"].is_array()) {
      // Report the difference from what the consumer already has.
      for (json& item : page["items"]) {
        std::string key = KeyOf(item);
        if (!seen.insert(key).second) continue;
        std::string v = VersionOf(item);
        auto it = versions_.find(key);
        if (it == versions_.end()) {
          versions_.emplace(key, v);
          handler_(EventType::kAdded, std::move(item));
        } else if (it->second != v) {
          it->second = v;
          handler_(EventType::kModified, std::move(item));
        }
      }
    }
  } while (!continue_token.empty() && !stop.load());
  if (stop.load()) return false;

  for (auto it = versions_.begin(); it != versions_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    handler_(EventType::kDeleted, DeletedStub(it->first));
    it = versions_.erase(it);
  }
  resource_version_ = version;
  synced_ = true;
  SetError("");
  return true;
}

Informer::WatchEnd Informer::Watch(const std::atomic<bool>& stop) {
  watches_++;
  std::string path = path_ + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" +
                     std::to_string(options_.watch_timeout_s) +
                     "&resourceVersion=" + UrlEncode(resource_version_);
  WatchEnd end = WatchEnd::kResume;
  auto on_line = [&](std::string_view line) {
    json event = json::parse(line, nullptr, false);
    if (!event.is_object() || !event.contains("type") || !event["type"].is_string()) {
      SetError("watch " + path_ + ": unreadable event, listing again");
      end = WatchEnd::kRelist;
      return false;
    }
    const std::string type = event["type"].get<std::string>();
    json& object = event["object"];
    if (type == "ERROR") {
      // Usually 410 Gone: the version we resumed from was compacted away.
      SetError("watch " + path_ + ": " + JsonPrefix(object, 200));
      end = WatchEnd::kRelist;
      return false;
    }
    std::string v = VersionOf(object);
    if (!v.empty()) resource_version_ = v;
    if (type == "BOOKMARK") return true;
    std::string key = KeyOf(object);
    auto it = versions_.find(key);
    if (type == "ADDED" || type == "MODIFIED") {
      if (it != versions_.end() && it->second == v) return true;  // seen already
      bool known = it != versions_.end();
      versions_[key] = v;
      handler_(known ? EventType::kModified : EventType::kAdded, std::move(object));
    } else if (type == "DELETED") {
      if (it == versions_.end()) return true;
      versions_.erase(it);
      handler_(EventType::kDeleted, std::move(object));
    }
    return true;
  };
  std::string error_body;
  auto status = client_.Stream(path, on_line, &stop, &error_body);
  if (!status.ok()) {
    SetError(status.status().message());
    return end;
  }
  if (*status == 410) return WatchEnd::kRelist;
  if (*status != 200 && *status != 0) {
    SetError("watch " + path_ + ": HTTP " + std::to_string(*status) + " " +
             error_body.substr(0, 200));
    return WatchEnd::kRelist;
  }
  return end;
}

void Informer::Run(const std::atomic<bool>& stop) {
  bool need_list = true;
  double backoff = options_.retry_initial_s;
  while (!stop.load()) {
    if (need_list) {
      if (!List(stop)) {
        if (resource_version_.empty() && synced_) {
          Sleep(options_.missing_retry_s, stop);  // resource not installed
        } else {
          Sleep(backoff, stop);
          backoff = std::min(backoff * 2, options_.retry_max_s);
        }
        continue;
      }
      need_list = false;
      backoff = options_.retry_initial_s;
    }
    auto started = std::chrono::steady_clock::now();
    WatchEnd end = Watch(stop);
    if (stop.load()) break;
    if (end == WatchEnd::kRelist) {
      need_list = true;
      continue;
    }
    // A watch that ended at once (server down) backs off; one that ran a while resumes.
    if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1)) {
      Sleep(backoff, stop);
      backoff = std::min(backoff * 2, options_.retry_max_s);
    } else {
      backoff = options_.retry_initial_s;
    }
  }
}

}  // namespace gantry::k8s

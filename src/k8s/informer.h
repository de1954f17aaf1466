// An informer keeps a consumer up to date with one kind of object: it lists (in pages),
// then watches from the list's resourceVersion with bookmarks; when the watch drops it
// resumes from the last version it saw, and when the server says that version is gone
// (410 Gone, or an ERROR event) it lists again and reports the difference. The consumer
// sees each change once: events that repeat a version it already saw are dropped.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "k8s/client.h"

namespace gantry::k8s {

enum class EventType { kAdded, kModified, kDeleted };

// Called on the informer's thread, which gives the object away (a consumer that keeps it
// moves it instead of copying). For a deletion found by a relist, `object` carries only
// metadata (namespace, name).
using EventHandler = std::function<void(EventType type, nlohmann::json object)>;

struct InformerOptions {
  int64_t page_size = 500;
  int64_t watch_timeout_s = 300;  // the server ends a watch after this; we resume
  double retry_initial_s = 0.2;
  double retry_max_s = 5;
  // A resource the server does not have (its CRD is not installed) is treated as empty
  // and listed again after this long.
  double missing_retry_s = 10;
};

class Informer {
 public:
  // `path` is the collection, e.g. "/api/v1/pods" or
  // "/apis/scheduling.volcano.sh/v1beta1/podgroups".
  Informer(Client& client, std::string path, EventHandler handler, InformerOptions options = {});

  // Runs until `stop` is set. Blocking; run it on its own thread.
  void Run(const std::atomic<bool>& stop);

  // True once the first list has been delivered (or the resource was found missing).
  bool synced() const { return synced_.load(); }
  const std::string& path() const { return path_; }
  // How many times it listed and watched; for tests and logs.
  int64_t lists() const { return lists_.load(); }
  int64_t watches() const { return watches_.load(); }
  // The last error it met, empty when none.
  std::string last_error() const;

 private:
  enum class WatchEnd { kResume, kRelist };
  // Lists every page and reports the differences from what was known; returns false
  // (with last_error set) on failure.
  bool List(const std::atomic<bool>& stop);
  WatchEnd Watch(const std::atomic<bool>& stop);
  void SetError(std::string error);
  void Sleep(double seconds, const std::atomic<bool>& stop);

  Client& client_;
  std::string path_;
  EventHandler handler_;
  InformerOptions options_;
  std::unordered_map<std::string, std::string> versions_;  // key -> resourceVersion
  std::string resource_version_;                           // where the next watch starts
  std::atomic<bool> synced_{false};
  std::atomic<int64_t> lists_{0};
  std::atomic<int64_t> watches_{0};
  mutable std::mutex error_mu_;
  std::string last_error_;
};

}  // namespace gantry::k8s

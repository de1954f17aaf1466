// An HTTP client for the Kubernetes API over libcurl: TLS with the cluster's CA, bearer
// tokens or client certificates, timeouts, and retries with backoff on 429, 5xx and
// connection errors. Thread-safe: each call borrows a connection from a pool, so that
// concurrent binds reuse TLS sessions instead of handshaking each time.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/credentials.h"
#include "model/status.h"

namespace gantry::k8s {

struct ClientOptions {
  double timeout_s = 30;  // whole request, except streams
  double connect_timeout_s = 5;
  int max_attempts = 5;  // for 429, 5xx and connection errors
  double backoff_initial_s = 0.05;
  double backoff_max_s = 2;
  std::string user_agent = "gantry";
};

struct Response {
  long status = 0;  // HTTP status
  std::string body;
  bool ok() const { return status >= 200 && status < 300; }
  // "404 Not Found: pods \"x\" not found" from a Kubernetes Status body, for messages.
  std::string Describe() const;
};

// Called with each line of a streamed response (a watch sends one JSON event a line).
// Returning false ends the stream.
using LineHandler = std::function<bool(std::string_view line)>;

class Client {
 public:
  static Result<std::unique_ptr<Client>> Create(Credentials credentials,
                                                ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends a request and returns the server's answer, whatever its status; an error only
  // when no answer came after all attempts. `path` starts with "/" (the API path and
  // query). Content type defaults to JSON; PATCH callers name the patch type.
  Result<Response> Request(std::string_view method, const std::string& path,
                           const std::string& body = "",
                           const std::string& content_type = "application/json");
  Result<Response> Get(const std::string& path) { return Request("GET", path); }

  // Streams a GET (a watch) line by line until the server ends it, the handler returns
  // false, or `stop` becomes true. No retries: the caller resumes from what it last saw.
  // Returns the HTTP status; for a non-200 status the body is returned in `error_body`.
  Result<long> Stream(const std::string& path, const LineHandler& on_line,
                      const std::atomic<bool>* stop, std::string* error_body = nullptr);

  const Credentials& credentials() const { return credentials_; }

 private:
  Client(Credentials credentials, ClientOptions options);
  void* Borrow();
  void Return(void* handle);
  // Sets a fresh or reused curl handle up for one request.
  void Prepare(void* handle, std::string_view method, const std::string& url,
               const std::string& body, void* headers, bool stream);
  std::string Token();
  void ReloadToken();

  Credentials credentials_;
  ClientOptions options_;
  std::mutex mu_;
  std::vector<void*> idle_;  // CURL* handles not in use
  std::string token_;        // guarded by mu_
};

// Percent-encodes a query parameter value.
std::string UrlEncode(std::string_view text);

}  // namespace gantry::k8s

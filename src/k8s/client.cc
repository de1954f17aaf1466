#include "k8s/client.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace gantry::k8s {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t CollectBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

struct RetryAfter {
  double seconds = -1;
};

size_t ReadHeader(char* data, size_t size, size_t n, void* user) {
  std::string_view line(data, size * n);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size()) {
    std::string lower(line.substr(0, kName.size()));
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (lower == kName) {
      try {
        static_cast<RetryAfter*>(user)->seconds = std::stod(std::string(line.substr(kName.size())));
      } catch (...) {
      }
    }
  }
  return size * n;
}

// A streamed body split into lines for the handler.
struct StreamState {
  const LineHandler* on_line = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::string pending;
  std::string error_body;
  CURL* handle = nullptr;
  bool ended_by_handler = false;
};

size_t StreamBody(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<StreamState*>(user);
  long status = 0;
  curl_easy_getinfo(s->handle, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    s->error_body.append(data, size * n);
    return size * n;
  }
  s->pending.append(data, size * n);
  size_t start = 0;
  for (size_t nl; (nl = s->pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(s->pending.data() + start, nl - start);
    if (line.empty()) continue;
    if (!(*s->on_line)(line)) {
      s->ended_by_handler = true;
      return 0;  // aborts the transfer
    }
  }
  s->pending.erase(0, start);
  return size * n;
}

int StreamProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* s = static_cast<StreamState*>(user);
  return s->stop && s->stop->load() ? 1 : 0;
}

bool Retryable(long status) {
  return status == 429 || (status >= 500 && status != 501);
}

// Failures that another attempt cannot fix: a certificate the CA does not vouch for, a
// bad client certificate or CA bundle, a URL curl cannot use.
bool Permanent(CURLcode rc) {
  switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return true;
    default:
      return false;
  }
}

// curl's detailed message ("SSL certificate problem: self-signed certificate") when it
// wrote one; its generic one for the code otherwise.
std::string CurlError(CURLcode rc, const char* detail) {
  return detail[0] ? std::string(detail) : std::string(curl_easy_strerror(rc));
}

}  // namespace

std::string Response::Describe() const {
  std::string out = std::to_string(status);
  auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("message") && parsed["message"].is_string()) {
    return out + ": " + parsed["message"].get<std::string>();
  }
  return out + (body.empty() ? "" : ": " + body.substr(0, 200));
}

std::string UrlEncode(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

Client::Client(Credentials credentials, ClientOptions options)
    : credentials_(std::move(credentials)),
      options_(std::move(options)),
      token_(credentials_.token) {}

Result<std::unique_ptr<Client>> Client::Create(Credentials credentials, ClientOptions options) {
  GlobalInit();
  if (credentials.server.rfind("https://", 0) != 0 && credentials.server.rfind("http://", 0) != 0) {
    return Status::Invalid(credentials.source + ": server \"" + credentials.server +
                           "\" is not an http(s) URL");
  }
  while (!credentials.server.empty() && credentials.server.back() == '/')
    credentials.server.pop_back();
  return std::unique_ptr<Client>(new Client(std::move(credentials), std::move(options)));
}

Client::~Client() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* Client::Borrow() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void Client::Return(void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(handle);
}

std::string Client::Token() {
  std::lock_guard<std::mutex> lock(mu_);
  return token_;
}

void Client::ReloadToken() {
  if (credentials_.token_file.empty()) return;
  std::ifstream in(credentials_.token_file);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string token = buffer.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  std::lock_guard<std::mutex> lock(mu_);
  if (!token.empty()) token_ = token;
}

void Client::Prepare(void* h, std::string_view method, const std::string& url,
                     const std::string& body, void* headers, bool stream) {
  CURL* c = static_cast<CURL*>(h);
  curl_easy_reset(c);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(headers));
  curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout_s * 1000));
  if (!stream)
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_s * 1000));
  if (!credentials_.ca_pem.empty()) {
    curl_blob blob{const_cast<char*>(credentials_.ca_pem.data()), credentials_.ca_pem.size(),
                   CURL_BLOB_NOCOPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
  }
  if (credentials_.insecure_skip_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!credentials_.client_cert_pem.empty()) {
    curl_blob cert{const_cast<char*>(credentials_.client_cert_pem.data()),
                   credentials_.client_cert_pem.size(), CURL_BLOB_NOCOPY};
    curl_blob key{const_cast<char*>(credentials_.client_key_pem.data()),
                  credentials_.client_key_pem.size(), CURL_BLOB_NOCOPY};
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (method == "GET") {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, std::string(method).c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
}

Result<Response> Client::Request(std::string_view method, const std::string& path,
                                 const std::string& body, const std::string& content_type) {
  const std::string url = credentials_.server + path;
  double backoff = options_.backoff_initial_s;
  std::string last_error;
  bool reloaded_token = false;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, ("Content-Type: " + content_type).c_str());
    headers = curl_slist_append(headers, "Accept: application/json");
    std::string token = Token();
    if (!token.empty())
      headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
    void* h = Borrow();
    Prepare(h, method, url, body, headers, /*stream=*/false);
    CURL* c = static_cast<CURL*>(h);
    Response response;
    RetryAfter retry_after;
    char error[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, CollectBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &response.body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, ReadHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &retry_after);
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK) {
      // A handle whose transfer failed may hold a broken connection: drop it.
      curl_easy_cleanup(c);
      last_error = CurlError(rc, error);
      if (Permanent(rc)) {
        return Status::IoError(std::string(method) + " " + url + ": " + last_error);
      }
    } else {
      Return(h);
      if (response.status == 401 && !reloaded_token && !credentials_.token_file.empty()) {
        ReloadToken();
        reloaded_token = true;
        continue;
      }
      if (!Retryable(response.status) || attempt == options_.max_attempts) return response;
      last_error = response.Describe();
    }
    if (attempt == options_.max_attempts) break;
    double wait =
        retry_after.seconds >= 0 ? std::min(retry_after.seconds, options_.backoff_max_s) : backoff;
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    backoff = std::min(backoff * 2, options_.backoff_max_s);
  }
  return Status::IoError(std::string(method) + " " + credentials_.server + path + ": " +
                         last_error + " (after " + std::to_string(options_.max_attempts) +
                         " attempts)");
}

Result<long> Client::Stream(const std::string& path, const LineHandler& on_line,
                            const std::atomic<bool>* stop, std::string* error_body) {
  const std::string url = credentials_.server + path;
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  std::string token = Token();
  if (!token.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
  CURL* c = curl_easy_init();
  Prepare(c, "GET", url, "", headers, /*stream=*/true);
  StreamState state;
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  state.on_line = &on_line;
  state.stop = stop;
  state.handle = c;
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, StreamBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, StreamProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &state);
  // A watch is silent for long stretches; a dead peer is noticed by keepalive probes.
  curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 10L);
  curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 5L);
  CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  curl_slist_free_all(headers);
  if (error_body) *error_body = std::move(state.error_body);
  if (status == 401) ReloadToken();
  bool stopped = state.ended_by_handler || (stop && stop->load());
  if (rc != CURLE_OK && !stopped) {
    return Status::IoError("GET " + url + ": " + CurlError(rc, error));
  }
  return status;
}

}  // namespace gantry::k8s

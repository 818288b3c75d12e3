// SPDX-License-Identifier: Apache-2.0
#include "net/http.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/shared_library.hpp"
#include "pin/sha256.hpp"
#include "secrets/rules.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace envpin::net {
namespace {

// A URL as messages and progress lines show it: without a user:password@ or a credential query
// parameter (a lock or an index URL may carry one; a terminal, a CI log or a bug report must not).
std::string shown(const std::string& url) { return secrets::url_without_credentials(url); }

// libcurl, loaded by the first request (io/shared_library.hpp says why). Each member has the
// type curl/curl.h declares for it.
struct Curl {
  io::SharedLibrary lib{ENVPIN_LIBCURL_SONAME, "libcurl4"};
#define ENVPIN_CURL_FN(name) decltype(&::curl_##name) name = lib.function<decltype(::curl_##name)>("curl_" #name)
  ENVPIN_CURL_FN(global_init);
  ENVPIN_CURL_FN(easy_init);
  ENVPIN_CURL_FN(easy_cleanup);
  ENVPIN_CURL_FN(easy_setopt);
  ENVPIN_CURL_FN(easy_perform);
  ENVPIN_CURL_FN(easy_getinfo);
  ENVPIN_CURL_FN(easy_strerror);
  ENVPIN_CURL_FN(slist_append);
  ENVPIN_CURL_FN(slist_free_all);
  ENVPIN_CURL_FN(url);
  ENVPIN_CURL_FN(url_set);
  ENVPIN_CURL_FN(url_get);
  ENVPIN_CURL_FN(url_cleanup);
  ENVPIN_CURL_FN(free);
  ENVPIN_CURL_FN(share_init);
  ENVPIN_CURL_FN(share_setopt);
#undef ENVPIN_CURL_FN
  // One DNS cache and one connection cache for all of envpin's requests (threads included):
  // a mirror's hundreds of files from one archive resolve its name once and reuse connections,
  // instead of a lookup and a handshake each (a lost DNS packet cost glibc's 5 s retry per file).
  CURLSH* share = nullptr;
  mutable std::mutex locks[CURL_LOCK_DATA_LAST];
  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
    static_cast<const Curl*>(self)->locks[data].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* self) { static_cast<const Curl*>(self)->locks[data].unlock(); }
  // Once per process, before any other call (curl_global_init is not thread-safe); envpin's
  // requests all come after it. Never cleaned up: the process ends first.
  Curl() {
    global_init(CURL_GLOBAL_DEFAULT);
    share = share_init();
    if (share) {
      share_setopt(share, CURLSHOPT_LOCKFUNC, &Curl::lock);
      share_setopt(share, CURLSHOPT_UNLOCKFUNC, &Curl::unlock);
      share_setopt(share, CURLSHOPT_USERDATA, this);
      share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
      share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    }
  }
};

const Curl& curl_api() {
  static const Curl api;
  return api;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  // A short count makes libcurl stop with CURLE_WRITE_ERROR.
  return static_cast<BodySink*>(user)->write(std::string_view(data, size * n)) ? size * n : 0;
}

class StringSink final : public BodySink {
 public:
  StringSink(std::string& out, std::size_t limit) : out_(out), limit_(limit) {}
  void reset() override {
    out_.clear();
    over_ = false;
  }
  bool write(std::string_view piece) override {
    if (piece.size() > limit_ - out_.size()) {
      over_ = true;
      return false;
    }
    out_.append(piece);
    return true;
  }
  bool over() const { return over_; }

 private:
  std::string& out_;
  std::size_t limit_;
  bool over_ = false;
};

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto& headers = *static_cast<std::map<std::string, std::string>*>(user);
  std::string line(data, size * n);
  if (line.starts_with("HTTP/")) headers.clear();  // a new response (after a redirect)
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.pop_back();
    headers[name] = value;
  }
  return size * n;
}

bool retryable(long status) { return status == 429 || (status >= 500 && status <= 599); }

}  // namespace

std::string Response::header(const std::string& name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? std::string{} : it->second;
}

namespace {
std::atomic<long> timeout_override{0};
}  // namespace

void set_network_timeout_s(long seconds) { timeout_override = seconds; }

long network_timeout_s() {
  if (const long flag = timeout_override; flag > 0) return flag;
  const char* e = std::getenv("ENVPIN_NET_TIMEOUT");
  if (!e || !*e) return 30;
  const std::string v = e;
  if (v.empty() || v.size() > 4 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stol(v) < 1 || std::stol(v) > 3600)
    throw diag::Error("ENVPIN_NET_TIMEOUT must be a whole number of seconds from 1 to 3600, found " + diag::quote(v),
                      std::nullopt, "set it like ENVPIN_NET_TIMEOUT=60, or unset it for 30 s");
  return std::stol(v);
}

namespace {

// One request, redirects not followed: a 3xx comes back with its target in redirect_url.
Response fetch_once(const Request& request, const HttpOptions& options, BodySink& sink, std::string& redirect_url) {
  const Curl& api = curl_api();
  long delay_ms = options.backoff_ms;
  std::string last_error;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  };
  for (int attempt = 1; attempt <= options.attempts; ++attempt) {
    std::unique_ptr<CURL, decltype(&::curl_easy_cleanup)> curl(api.easy_init(), api.easy_cleanup);
    if (!curl) throw diag::Error("cannot start an HTTP client (curl_easy_init failed)");
    Response response;
    sink.reset();
    char error[CURL_ERROR_SIZE] = {};
    curl_slist* headers = nullptr;
    for (const auto& h : request.headers) headers = api.slist_append(headers, h.c_str());
    std::unique_ptr<curl_slist, decltype(&::curl_slist_free_all)> header_list(headers, api.slist_free_all);
    api.easy_setopt(curl.get(), CURLOPT_URL, request.url.c_str());
    // URLs come from locks, manifests and servers: never file://, ftp:// or anything but the web.
    api.easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http,https");
    api.easy_setopt(curl.get(), CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    api.easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers);
    api.easy_setopt(curl.get(), CURLOPT_NOBODY, request.method == "HEAD" ? 1L : 0L);
    if (request.method == "POST") {
      api.easy_setopt(curl.get(), CURLOPT_POSTFIELDS, request.body.data());
      api.easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    }
    // Redirects are followed by fetch(), which decides what may go to another origin.
    api.easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 0L);
    api.easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, std::min(options.connect_timeout_s, options.stall_s));
    api.easy_setopt(curl.get(), CURLOPT_TIMEOUT, options.timeout_s);
    // Less than one byte a second for stall_s seconds: the server is not answering.
    api.easy_setopt(curl.get(), CURLOPT_LOW_SPEED_LIMIT, 1L);
    api.easy_setopt(curl.get(), CURLOPT_LOW_SPEED_TIME, options.stall_s);
    api.easy_setopt(curl.get(), CURLOPT_USERAGENT, "envpin");
    if (api.share) api.easy_setopt(curl.get(), CURLOPT_SHARE, api.share);
    api.easy_setopt(curl.get(), CURLOPT_BUFFERSIZE, 256L * 1024);  // fewer calls for a GB layer
    api.easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, on_body);
    api.easy_setopt(curl.get(), CURLOPT_WRITEDATA, static_cast<BodySink*>(&sink));
    api.easy_setopt(curl.get(), CURLOPT_HEADERFUNCTION, on_header);
    api.easy_setopt(curl.get(), CURLOPT_HEADERDATA, &response.headers);
    api.easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, error);
    api.easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
    const CURLcode code = api.easy_perform(curl.get());
    if (code == CURLE_OK) {
      api.easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &response.status);
      char* location = nullptr;
      api.easy_getinfo(curl.get(), CURLINFO_REDIRECT_URL, &location);
      redirect_url = location ? location : "";
      if (!retryable(response.status) || attempt == options.attempts) return response;
      last_error = "HTTP " + std::to_string(response.status);
      const std::string retry_after = response.header("retry-after");
      if (!retry_after.empty() && std::all_of(retry_after.begin(), retry_after.end(), ::isdigit))
        delay_ms = std::max(delay_ms, std::stol(retry_after) * 1000);
    } else {
      last_error = error[0] ? error : api.easy_strerror(code);
      // The sink refused more bytes: no retry would get fewer.
      if (code == CURLE_WRITE_ERROR) throw diag::Error(shown(request.url) + ": " + last_error);
      if (code == CURLE_UNSUPPORTED_PROTOCOL)
        throw diag::Error("envpin fetches only http:// and https:// URLs, not " + diag::quote(shown(request.url)),
                          std::nullopt, "name the file by its web address");
      // A host that accepts and then says nothing (or never accepts) would only make the user
      // wait again. The time named is the limit that ran out (the connect timeout, the stall
      // limit or the whole transfer's), the largest the wait reached: the same words however
      // late a loaded machine noticed.
      if (code == CURLE_OPERATION_TIMEDOUT) {
        long limit = std::min(options.connect_timeout_s, options.stall_s);
        for (const long l : {options.stall_s, options.timeout_s})
          if (l > limit && elapsed_ms() >= l * 1000) limit = l;
        throw diag::Error("no answer from " + shown(request.url) + " after " + std::to_string(limit) + " s",
                          std::nullopt,
                          "check that the server is up; wait longer with --timeout SECONDS (or ENVPIN_NET_TIMEOUT)");
      }
      if (attempt == options.attempts) break;
    }
    if (elapsed_ms() + delay_ms > options.stall_s * 1000) break;
    if (options.progress)
      options.progress(request.method + " " + shown(request.url) + ": " + last_error + "; retrying in " +
                       std::to_string(delay_ms) + " ms (attempt " + std::to_string(attempt + 1) + " of " +
                       std::to_string(options.attempts) + ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    delay_ms *= 2;
  }
  throw diag::Error(
      "cannot reach " + shown(request.url) + ": " + last_error, std::nullopt,
      "check that the server is up and the address is right (--timeout or ENVPIN_NET_TIMEOUT sets the wait)");
}

// scheme://host:port of `url` as libcurl parses it (default ports filled in, host lowercase);
// empty when it cannot be parsed.
std::string origin(const std::string& url) {
  const Curl& api = curl_api();
  std::unique_ptr<CURLU, decltype(&::curl_url_cleanup)> u(api.url(), api.url_cleanup);
  if (!u || api.url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return "";
  std::string out;
  for (const auto& [part, flags] : {std::pair{CURLUPART_SCHEME, 0u}, std::pair{CURLUPART_HOST, 0u},
                                    std::pair{CURLUPART_PORT, static_cast<unsigned>(CURLU_DEFAULT_PORT)}}) {
    char* text = nullptr;
    if (api.url_get(u.get(), part, &text, flags) != CURLUE_OK || !text) return "";
    std::string value = text;
    api.free(text);
    std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
    out += (out.empty() ? "" : part == CURLUPART_HOST ? "://" : ":") + value;
  }
  return out;
}

// A header that proves who sends the request (a token, a password, a session).
bool credential_header(const std::string& header) {
  std::string name = header.substr(0, header.find(':'));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name == "authorization" || name == "proxy-authorization" || name == "cookie" ||
         name.find("token") != std::string::npos || name.find("auth") != std::string::npos;
}

constexpr int kMaxRedirects = 5;

}  // namespace

Response fetch(const Request& request, const HttpOptions& options) {
  Response out;
  StringSink sink(out.body, options.max_body);
  Response r;
  try {
    r = fetch(request, sink, options);
  } catch (const diag::Error&) {
    if (!sink.over()) throw;
    throw diag::Error(shown(request.url) + " answered with more than " + diag::human_bytes(options.max_body) +
                          ", the most envpin reads from it; stopped there",
                      std::nullopt,
                      "check that the URL names the server envpin expects (an index, a registry, slurmrestd)");
  }
  r.body = std::move(out.body);
  return r;
}

namespace {

// http:// or https://, in any case: what envpin fetches (libcurl is told too, where it can be).
bool web_url(const std::string& url) {
  std::string scheme = url.substr(0, url.find("://"));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  return url.find("://") != std::string::npos && (scheme == "http" || scheme == "https");
}

}  // namespace

Response fetch(const Request& request, BodySink& sink, const HttpOptions& options) {
  Request current = request;
  for (int hop = 0;; ++hop) {
    if (!web_url(current.url))
      throw diag::Error("envpin fetches only http:// and https:// URLs, not " + diag::quote(shown(current.url)) +
                            (hop ? " (a redirect from " + shown(request.url) + ")" : ""),
                        std::nullopt, "name the file by its web address");
    std::string next;
    Response response = fetch_once(current, options, sink, next);
    const long s = response.status;
    if (s < 300 || s > 399 || next.empty()) return response;
    if (hop == kMaxRedirects)
      throw diag::Error("more than " + std::to_string(kMaxRedirects) + " redirects from " + shown(request.url) +
                            " (the last to " + diag::quote(shown(next)) + ")",
                        std::nullopt, "give envpin the URL the server really answers at");
    if (origin(next).empty() || origin(next) != origin(current.url)) {
      // Another origin: credentials and a request body (a job script, its environment) never
      // follow; where the caller allows it, a request without them does.
      const bool sensitive =
          !current.body.empty() || std::any_of(current.headers.begin(), current.headers.end(), credential_header);
      if (sensitive && !request.drop_credentials_across_origins)
        throw diag::Error(
            shown(current.url) + " redirected (HTTP " + std::to_string(s) + ") to " + diag::quote(shown(next)) +
                ", another origin: envpin does not send its credentials or the request there",
            std::nullopt, "give envpin the server's own URL; if the redirect is meant, use its target directly");
      std::erase_if(current.headers, credential_header);
    }
    // 303, and 301/302 after a POST as browsers and curl do: the next request is a GET.
    if (s == 303 || ((s == 301 || s == 302) && current.method == "POST")) {
      current.method = "GET";
      current.body.clear();
    }
    current.url = next;
  }
}

namespace {

// The body into a file, hashed as it is written, cut off past `limit` bytes.
class FileSink final : public BodySink {
 public:
  FileSink(const std::filesystem::path& path, std::int64_t limit) : path_(path), limit_(limit) {}
  ~FileSink() override {
    if (file_) std::fclose(file_);
  }
  void reset() override {
    if (file_) std::fclose(file_);
    file_ = nullptr;
    // A new file of its own: whatever was at that name (a link planted there) is not followed.
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) file_ = ::fdopen(fd, "wb");
    if (!file_) {
      if (fd >= 0) ::close(fd);
      throw diag::Error("cannot write " + path_.string() + ": " + std::strerror(errno));
    }
    hash_ = std::make_unique<pin::Sha256>();
    bytes_ = 0;
  }
  bool write(std::string_view piece) override {
    if (bytes_ + static_cast<std::int64_t>(piece.size()) > limit_) {
      over_ = true;
      return false;
    }
    if (std::fwrite(piece.data(), 1, piece.size(), file_) != piece.size()) return false;
    hash_->update(piece.data(), piece.size());
    bytes_ += static_cast<std::int64_t>(piece.size());
    return true;
  }
  // Closes the file; the hash of what was written. Not synced to disk: a file that a crash
  // leaves torn is hashed again by the next mirror, found wrong and fetched again.
  std::string finish() {
    const bool flushed = file_ && std::fflush(file_) == 0;
    const bool closed = file_ && std::fclose(file_) == 0;
    file_ = nullptr;
    if (!flushed || !closed) throw diag::Error("cannot write " + path_.string() + ": " + std::strerror(errno));
    return hash_->hex();
  }
  std::int64_t bytes() const { return bytes_; }
  bool over() const { return over_; }

 private:
  std::filesystem::path path_;
  std::int64_t limit_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<pin::Sha256> hash_;
  std::int64_t bytes_ = 0;
  bool over_ = false;
};

}  // namespace

std::int64_t download(const Request& request, const std::filesystem::path& to, const Expected& expected,
                      const HttpOptions& options) {
  std::filesystem::path partial = to;
  partial += ".partial";
  const std::int64_t limit = expected.size > 0 ? expected.size : expected.max_size;
  FileSink sink(partial, limit);
  std::error_code ignored;
  try {
    const Response r = fetch(request, sink, options);
    const std::string got = sink.finish();
    if (r.status != 200)
      throw diag::Error("cannot download " + shown(request.url) + " (HTTP " + std::to_string(r.status) + ")",
                        std::nullopt, "check that the server still has it; the lock names it by its sha256");
    if ((expected.size > 0 && sink.bytes() != expected.size) || got != expected.sha256)
      throw diag::Error(
          shown(request.url) + " served " + std::to_string(sink.bytes()) + " bytes hashing to sha256:" + got +
              ", not the locked " + (expected.size > 0 ? std::to_string(expected.size) + " bytes, " : "") +
              "sha256:" + expected.sha256,
          std::nullopt,
          "the server changed the file since the lock: do not use it; run 'envpin lock' if the change is meant");
  } catch (const diag::Error& e) {
    std::filesystem::remove(partial, ignored);
    if (sink.over() && expected.size > 0)
      throw diag::Error(
          shown(request.url) + " sent more than the " + std::to_string(limit) + " bytes expected; stopped there",
          std::nullopt, "the server changed the file since the lock: do not use it");
    if (sink.over())
      throw diag::Error(shown(request.url) + " sent more than " +
                            diag::human_bytes(static_cast<std::uintmax_t>(limit)) +
                            ", the most envpin fetches for a file the lock records no size for; stopped there",
                        std::nullopt, "run 'envpin lock' to record each file's size, then fetch again");
    throw;
  }
  std::filesystem::rename(partial, to);
  return sink.bytes();
}

}  // namespace envpin::net

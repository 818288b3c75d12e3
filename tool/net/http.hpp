// SPDX-License-Identifier: Apache-2.0
// A small libcurl client: timeouts, bounded retries with backoff on 429/5xx and connection
// failures, and errors that name the URL.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace envpin::net {

struct Response {
  long status = 0;
  std::map<std::string, std::string> headers;  // lowercase names; last value wins
  std::string body;
  std::string header(const std::string& name) const;
};

struct Request {
  std::string method = "GET";  // GET, HEAD or POST
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // POST: sent as it is
  // A redirect to another origin (scheme, host, port) never carries credentials (Authorization,
  // Cookie, *token* and *auth* headers) or a body: with this set, such a request follows it
  // without them (a registry's blob on a CDN); without, fetch() refuses it, naming the target.
  bool drop_credentials_across_origins = false;
};

// How long envpin waits for a server that sends nothing: ENVPIN_NET_TIMEOUT (seconds), else 30.
// Throws diag::Error for a value that is not a whole number of seconds from 1 to 3600.
long network_timeout_s();
// The --timeout flag: overrides ENVPIN_NET_TIMEOUT for the rest of the process (1-3600 s).
void set_network_timeout_s(long seconds);

struct HttpOptions {
  // A server that sends no byte for stall_s seconds (or does not accept the connection within
  // connect_timeout_s) fails the request without a retry; the retries of refused connections,
  // 429 and 5xx stop once stall_s has passed in all. So an unresponsive host fails in stall_s.
  long stall_s = network_timeout_s();
  long connect_timeout_s = 10;
  long timeout_s = 1800;  // a whole transfer that still makes progress (a large Packages index)
  int attempts = 4;       // total tries for 429, 5xx and connection failures
  long backoff_ms = 500;  // doubled after each retry; Retry-After (seconds) wins when larger
  std::function<void(const std::string&)> progress;  // one line per retry, for stderr
  // fetch() into Response::body: an answer longer than this is cut off there and fails the
  // request, naming the URL and the cap. Held in memory, so bounded: an apt Packages index (tens
  // of MiB) fits the default; registry manifests, token answers and slurmrestd's JSON use
  // kMaxJsonAnswer.
  std::size_t max_body = std::size_t{256} << 20;
};
// What a server's JSON answer may hold (a manifest, an index, a token, a job list): 16 MiB.
inline constexpr std::size_t kMaxJsonAnswer = std::size_t{16} << 20;

// Performs the request, following at most 5 redirects (same origin: as they are; another origin:
// see Request). Returns the final response (any status); throws diag::Error when the server
// cannot be reached after all attempts ("connection refused", "timed out", ...).
Response fetch(const Request& request, const HttpOptions& options = {});

// Where a body goes instead of Response::body: reset() before each attempt (a retry starts the
// file and its hash again), write() for each piece; false stops the transfer (too many bytes).
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual void reset() = 0;
  virtual bool write(std::string_view piece) = 0;
};
// fetch() with the body streamed into `sink` (Response::body stays empty).
Response fetch(const Request& request, BodySink& sink, const HttpOptions& options = {});

// A file whose bytes are known: what a mirror downloads. sha256 is lowercase hex.
struct Expected {
  std::string sha256;
  std::int64_t size = 0;  // the exact size when known (> 0); else max_size bounds the transfer
  // A file the lock records no size for (locks older than sizes): cut off at 8 GiB, above the
  // largest wheels published (torch's CUDA builds are 1-3 GB).
  std::int64_t max_size = std::int64_t{8} << 30;
};
// GETs `request` into `to`, hashing while it writes: written as to + ".partial", renamed into place
// only when the status is 200 and the bytes hash to expected.sha256 (and are expected.size long);
// else the partial file is removed and diag::Error names the URL and what differed. A server that
// sends more bytes than expected is cut off there. Returns the bytes written.
std::int64_t download(const Request& request, const std::filesystem::path& to, const Expected& expected,
                      const HttpOptions& options = {});

}  // namespace envpin::net

// SPDX-License-Identifier: Apache-2.0
// The only user of OpenSSL.
#include "pin/sha256.hpp"

#include <openssl/evp.h>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <new>

#include "diag/error.hpp"

namespace envpin::pin {
namespace {

// SHA-256 fetched from the default provider once: EVP_sha256() makes every EVP_DigestInit_ex
// fetch it again (a lock and a lookup per file when hashing a 10,000-file tree).
const EVP_MD* sha256_md() {
  static const EVP_MD* const md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched ? fetched : EVP_sha256();
  }();
  return md;
}

struct Hasher {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};

  explicit Hasher(const EVP_MD* md = sha256_md()) {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1)
      throw diag::Error("internal: cannot initialise a digest");
  }
  void update(const void* data, std::size_t size) {
    if (EVP_DigestUpdate(ctx.get(), data, size) != 1) throw diag::Error("internal: SHA-256 update failed");
  }
  std::string raw() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(ctx.get(), digest.data(), &size) != 1) throw diag::Error("internal: digest final failed");
    return std::string(reinterpret_cast<const char*>(digest.data()), size);
  }
  std::string hex() {
    const std::string digest = raw();
    const std::size_t size = digest.size();
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(size * 2);
    for (std::size_t i = 0; i < size; ++i) {
      const auto c = static_cast<unsigned char>(digest[i]);
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
    return out;
  }
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Hasher h;
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

namespace {

// The read buffer: 1 MiB, page-aligned, one per thread, left uninitialised. Measured on a 2-core
// EPYC with SHA-NI, 1 GiB from the page cache (bench/run.sh, /usr/bin/time, median of 7):
// 64 KiB-1 MiB buffers hash at the same user time (SHA-256 itself, ~0.60 s); what differs is the
// kernel's copy into the buffer: a page-aligned buffer takes 0.12-0.14 s of system time, the
// same 1 MiB from new[] (16 bytes past a page boundary) 0.16-0.20 s; mmap saves no wall time.
// A fresh zero-filled buffer per file cost 256 page faults and a memset each, more than hashing
// the file when a tree holds thousands of small ones.
constexpr std::size_t kBuffer = 1 << 20;
constexpr std::size_t kPage = 4096;

char* read_buffer() {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  thread_local const std::unique_ptr<char, Free> buffer(static_cast<char*>(std::aligned_alloc(kPage, kBuffer)));
  if (!buffer) throw std::bad_alloc();
  return buffer.get();
}

// Feeds `h` from `fd` to the end, or to `size` bytes when known (then the read that would only
// find the end of the file is not made).
void feed_fd(Hasher& h, int fd, const std::filesystem::path& name, std::int64_t size) {
  char* const buffer = read_buffer();
  std::int64_t total = 0;
  ssize_t n = 0;
  while ((size < 0 || total < size) && (n = ::read(fd, buffer, kBuffer)) > 0) {
    h.update(buffer, static_cast<std::size_t>(n));
    total += n;
  }
  if (n < 0) throw diag::Error("cannot read '" + name.generic_string() + "'");
}

void feed(Hasher& h, const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw diag::Error("cannot read '" + file.generic_string() + "'");
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // a larger readahead window from disk
  try {
    feed_fd(h, fd, file, -1);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

}  // namespace

Sha256::Sha256() : ctx_(new Hasher()) {}
Sha256::~Sha256() { delete static_cast<Hasher*>(ctx_); }
void Sha256::update(const void* data, std::size_t size) { static_cast<Hasher*>(ctx_)->update(data, size); }
std::string Sha256::hex() { return static_cast<Hasher*>(ctx_)->hex(); }

std::string md5_file(const std::filesystem::path& file) {
  Hasher h(EVP_md5());
  feed(h, file);
  return h.hex();
}

std::string sha256_file_b64url(const std::filesystem::path& file) {
  Hasher h;
  feed(h, file);
  const std::string digest = h.raw();
  std::string b64(4 * ((digest.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()),
                                reinterpret_cast<const unsigned char*>(digest.data()), static_cast<int>(digest.size()));
  b64.resize(static_cast<std::size_t>(n));
  for (char& c : b64) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  return b64;
}

std::string sha256_fd(int fd, const std::filesystem::path& name, std::int64_t size) {
  thread_local Hasher h;  // one context per thread, re-initialised per file
  if (EVP_DigestInit_ex(h.ctx.get(), sha256_md(), nullptr) != 1)
    throw diag::Error("internal: cannot initialise a digest");
  feed_fd(h, fd, name, size);
  return h.hex();
}

std::string sha256_file(const std::filesystem::path& file) {
  thread_local Hasher h;
  if (EVP_DigestInit_ex(h.ctx.get(), sha256_md(), nullptr) != 1)
    throw diag::Error("internal: cannot initialise a digest");
  feed(h, file);
  return h.hex();
}

bool file_matches(const std::filesystem::path& file, std::string_view sha256_hex, std::int64_t size) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::symlink_status(file, ec);
  if (ec || !std::filesystem::is_regular_file(st)) return false;
  if (size > 0 && std::filesystem::file_size(file, ec) != static_cast<std::uintmax_t>(size)) return false;
  return !ec && sha256_file(file) == sha256_hex;
}

}  // namespace envpin::pin

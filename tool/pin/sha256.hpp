// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace envpin::pin {

// Lowercase hex SHA-256 of `bytes` (OpenSSL EVP).
std::string sha256_hex(std::string_view bytes);

// Incremental SHA-256 (OpenSSL EVP) for data produced piecewise.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t size);
  std::string hex();  // once, at the end

 private:
  void* ctx_;
};

// Lowercase hex SHA-256 of a file, read in chunks. Throws diag::Error when unreadable.
std::string sha256_file(const std::filesystem::path& file);

// The same for a file already open for reading, from its current offset to the end, or to
// `size` bytes when the caller knows the size (from fstat); the descriptor stays open. `name`
// is for the error message.
std::string sha256_fd(int fd, const std::filesystem::path& name, std::int64_t size = -1);

// True when `file` is a regular file (not a link) of `size` bytes (any size when `size` <= 0)
// whose SHA-256 is `sha256_hex`: a file already downloaded that need not be fetched again.
bool file_matches(const std::filesystem::path& file, std::string_view sha256_hex, std::int64_t size);

// MD5 of a file, hex: what dpkg's *.md5sums record (checking them, never pinning with them).
std::string md5_file(const std::filesystem::path& file);

// SHA-256 of a file in urlsafe base64 without padding: what a wheel's RECORD holds.
std::string sha256_file_b64url(const std::filesystem::path& file);

}  // namespace envpin::pin

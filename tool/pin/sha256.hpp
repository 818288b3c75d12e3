// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace envpin::pin {

// Lowercase hex SHA-256 of `bytes` (OpenSSL EVP).
std::string sha256_hex(std::string_view bytes);

// Lowercase hex SHA-256 of a file, read in chunks. Throws diag::Error when unreadable.
std::string sha256_file(const std::filesystem::path& file);

// MD5 of a file, hex: what dpkg's *.md5sums record (checking them, never pinning with them).
std::string md5_file(const std::filesystem::path& file);

// SHA-256 of a file in urlsafe base64 without padding: what a wheel's RECORD holds.
std::string sha256_file_b64url(const std::filesystem::path& file);

}  // namespace envpin::pin

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

}  // namespace envpin::pin

// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace envpin::io {

// Replaces `path` with `bytes` atomically: a temporary file in the same directory is
// written, fsync'd and renamed over the target, so readers see the old or the new file,
// never a partial one. Creates missing parent directories. Throws diag::Error.
void write_atomic(const std::filesystem::path& path, const std::string& bytes, bool executable);

// The file's bytes, or nullopt when it does not exist. Throws diag::Error when unreadable.
std::optional<std::string> read_file(const std::filesystem::path& path);

// True when the file exists and has any execute bit.
bool is_executable(const std::filesystem::path& path);

}  // namespace envpin::io

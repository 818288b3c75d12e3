// SPDX-License-Identifier: Apache-2.0
// The deterministic digest of a directory tree, "h1m:": sha256 over the lines
// "<sha256>  <mode>  <path>[ -> <target>]" sorted bytewise by path (Go dirhash's h1 extended with
// the exec bit and symlink targets, reference/lockfiles.md §4.4). Files are hashed on every core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "diag/terminal.hpp"

namespace envpin::pin {

// "hashing: 812 of 10000 files, 403 MB" (decimal megabytes, as disk tools count): the progress
// line while a tree is hashed.
std::string hashing_line(std::size_t done, std::size_t total, std::uintmax_t bytes);

// The h1m digest of the tree at `root`; `files` and `bytes` get what it hashed. Directories are
// implied by their files; only regular files and symlinks count. Throws diag::Error on the first
// file it cannot read.
std::string tree_digest(const std::filesystem::path& root, std::size_t& files, std::uintmax_t& bytes,
                        diag::Progress& progress);

}  // namespace envpin::pin

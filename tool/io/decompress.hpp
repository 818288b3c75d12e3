// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace envpin::io {

// True when `head` starts like an xz, gzip, bzip2 or zstd stream.
bool is_compressed(std::string_view head);

// The bytes of a single compressed (or plain) stream, with libarchive's filters. Throws
// diag::Error naming `what` (a file or URL) when it cannot be read, or when it expands to more
// than `max` bytes (an apt Packages index is tens of MiB; a small stream that expands without end
// is stopped there, not held in memory).
std::string decompress(std::string_view bytes, const std::string& what, std::size_t max = std::size_t{1} << 30);

}  // namespace envpin::io

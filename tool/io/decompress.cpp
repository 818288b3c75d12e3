// SPDX-License-Identifier: Apache-2.0
#include "io/decompress.hpp"

#include <memory>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/libarchive.hpp"

namespace envpin::io {

bool is_compressed(std::string_view head) {
  return head.starts_with(
             "\xFD"
             "7zXZ") ||
         head.starts_with("\x1F\x8B") || head.starts_with("BZh") || head.starts_with("\x28\xB5\x2F\xFD");
}

std::string decompress(std::string_view bytes, const std::string& what, std::size_t max) {
  const io::LibArchive& la = io::libarchive();
  std::unique_ptr<archive, decltype(&archive_read_free)> a(la.read_new(), la.read_free);
  la.read_support_filter_all(a.get());
  la.read_support_format_raw(a.get());
  archive_entry* entry = nullptr;
  const auto why = [&] { return std::string(la.error_string(a.get()) ? la.error_string(a.get()) : "unknown format"); };
  if (la.read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK ||
      la.read_next_header(a.get(), &entry) != ARCHIVE_OK)
    throw diag::Error("cannot decompress " + what + ": " + why(), diag::Location{what, 0, 0});
  std::string out;
  std::string buffer(1 << 20, '\0');
  la_ssize_t n = 0;
  while ((n = la.read_data(a.get(), buffer.data(), buffer.size())) > 0) {
    if (static_cast<std::size_t>(n) > max - out.size())
      throw diag::Error("cannot decompress " + what + ": it expands to more than " + diag::human_bytes(max) +
                            ", the most envpin reads",
                        diag::Location{what, 0, 0});
    out.append(buffer.data(), static_cast<std::size_t>(n));
  }
  if (n < 0) throw diag::Error("cannot decompress " + what + ": " + why(), diag::Location{what, 0, 0});
  return out;
}

}  // namespace envpin::io

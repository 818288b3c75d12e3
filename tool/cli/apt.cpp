// SPDX-License-Identifier: Apache-2.0
// `envpin apt-lookup --index Packages[.xz|.gz] PKG[=VERSION]...`: exact pins (version, size,
// SHA256, pool file) from a Debian Packages index, offline — what `envpin lock` uses when no
// container engine can run apt.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "lock/resolve.hpp"

namespace envpin::cli {
namespace {

struct AptOptions {
  std::string index;
  std::vector<std::string> packages;
};

// Plain, .xz or .gz: libarchive's raw format with every filter.
std::string read_index(const std::string& file) {
  // Plain text is read as it is; only compressed indexes go through libarchive.
  if (auto text = io::read_file(file); text && !text->starts_with("\xFD" "7zXZ") && !text->starts_with("\x1F\x8B") &&
                                       !text->starts_with("BZh") && !text->starts_with("\x28\xB5\x2F\xFD"))
    return std::move(*text);
  std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(a.get());
  archive_read_support_format_raw(a.get());
  archive_entry* entry = nullptr;
  if (archive_read_open_filename(a.get(), file.c_str(), 1 << 20) != ARCHIVE_OK ||
      archive_read_next_header(a.get(), &entry) != ARCHIVE_OK)
    throw diag::Error("cannot read " + file + ": " + (archive_error_string(a.get()) ? archive_error_string(a.get()) : "?"),
                      diag::Location{file, 0, 0});
  std::string out;
  std::string buffer(1 << 20, '\0');
  la_ssize_t n = 0;
  while ((n = archive_read_data(a.get(), buffer.data(), buffer.size())) > 0) out.append(buffer.data(), static_cast<std::size_t>(n));
  if (n < 0) throw diag::Error("cannot decompress " + file + ": " + archive_error_string(a.get()), diag::Location{file, 0, 0});
  return out;
}

// A plain index is mapped, not copied (most of a 50 MB file is never touched).
struct Mapped {
  void* data = MAP_FAILED;
  std::size_t size = 0;
  ~Mapped() {
    if (data != MAP_FAILED) ::munmap(data, size);
  }
};

int apt_lookup(const AptOptions& o, Streams& io) {
  Mapped map;
  std::string owned;
  std::string_view text;
  const int fd = ::open(o.index.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  char magic[4] = {};
  const bool plain = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 4 &&
                     ::pread(fd, magic, 4, 0) == 4 && std::memcmp(magic, "\xFD" "7zX", 4) != 0 &&
                     std::memcmp(magic, "\x1F\x8B", 2) != 0 && std::memcmp(magic, "BZh", 3) != 0 &&
                     std::memcmp(magic, "\x28\xB5\x2F\xFD", 4) != 0;
  if (plain) {
    map.size = static_cast<std::size_t>(st.st_size);
    map.data = ::mmap(nullptr, map.size, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  if (fd >= 0) ::close(fd);
  if (map.data != MAP_FAILED) {
    text = std::string_view(static_cast<const char*>(map.data), map.size);
  } else {
    owned = read_index(o.index);
    text = owned;
  }
  std::vector<std::string> names;
  for (const auto& p : o.packages) names.push_back(p.substr(0, p.find('=')));
  const auto entries = lock::scan_packages_index(text, names);
  int missing = 0;
  for (const auto& p : o.packages) {
    const std::string name = p.substr(0, p.find('='));
    const std::string version = p.find('=') == std::string::npos ? "" : p.substr(p.find('=') + 1);
    const lock::IndexEntry* hit = nullptr;
    for (const auto& e : entries)
      if (e.name == name && (version.empty() || e.version == version)) hit = &e;
    if (!hit) {
      io.err << diag::format(diag::Error("'" + p + "' is not in " + o.index, std::nullopt,
                                         "check the name and version against the index"));
      ++missing;
      continue;
    }
    io.out << hit->name << "=" << hit->version << " " << hit->arch << " " << hit->size << " sha256:" << hit->sha256
           << " " << hit->filename << "\n";
  }
  return missing ? kError : kOk;
}

}  // namespace

Command apt_lookup_command() {
  return {"apt-lookup", "exact pins (version, size, SHA256, file) for packages from a Debian Packages index, offline",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<AptOptions>();
            app.add_option("--index", o->index, "a Packages, Packages.xz or Packages.gz file")->required();
            app.add_option("packages", o->packages, "NAME or NAME=VERSION")->required();
            return [o](Streams& io) { return apt_lookup(*o, io); };
          }};
}

}  // namespace envpin::cli

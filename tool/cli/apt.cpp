// SPDX-License-Identifier: Apache-2.0
// `envpin apt-lookup --index Packages[.xz|.gz] PKG[=VERSION]...`: exact pins (version, size,
// SHA256, pool file) from a Debian Packages index, offline — what `envpin lock` uses when no
// container engine can run apt.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "io/decompress.hpp"
#include "resolve/pins.hpp"

namespace envpin::cli {
namespace {

struct AptOptions {
  std::string index;
  std::vector<std::string> packages;
};

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
  char magic[6] = {};
  const bool plain = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 6 &&
                     ::pread(fd, magic, 6, 0) == 6 && !io::is_compressed(std::string_view(magic, 6));
  if (plain) {
    map.size = static_cast<std::size_t>(st.st_size);
    map.data = ::mmap(nullptr, map.size, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  if (fd >= 0) ::close(fd);
  if (map.data != MAP_FAILED) {
    text = std::string_view(static_cast<const char*>(map.data), map.size);
  } else {
    const auto bytes = io::read_file(o.index);
    if (!bytes)
      throw diag::Error("cannot read " + o.index, diag::Location{o.index, 0, 0}, "give the path of a Packages index");
    owned = io::decompress(*bytes, o.index);
    text = owned;
  }
  std::vector<std::string> names;
  for (const auto& p : o.packages) names.push_back(p.substr(0, p.find('=')));
  const auto entries = resolve::scan_packages_index(text, names);
  int missing = 0;
  for (const auto& p : o.packages) {
    const std::string name = p.substr(0, p.find('='));
    const std::string version = p.find('=') == std::string::npos ? "" : p.substr(p.find('=') + 1);
    const resolve::IndexEntry* hit = nullptr;
    for (const auto& e : entries)
      if (e.name == name && (version.empty() || e.version == version)) hit = &e;
    if (!hit) {
      io.err << diag::paint_diagnostic(io.err_term,
                                       diag::format(diag::Error("'" + p + "' is not in " + o.index, std::nullopt,
                                                                "check the name and version against the index")));
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

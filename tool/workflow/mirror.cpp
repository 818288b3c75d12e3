// SPDX-License-Identifier: Apache-2.0
#include "workflow/mirror.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/libarchive.hpp"
#include "lock/size.hpp"
#include "manifest/requirement.hpp"
#include "net/http.hpp"
#include "pin/sha256.hpp"
#include "workflow/project.hpp"

namespace envpin::workflow {
namespace {

namespace fs = std::filesystem;
using diag::Error;

// A file name from the lock, used as a path in the mirror and a link in its pages: one component
// of letters, digits and `extra`.
bool safe_file_name(std::string_view name, std::string_view suffix, std::string_view extra) {
  return name.size() > suffix.size() && name.size() <= 255 && name.ends_with(suffix) && name.front() != '.' &&
         diag::only_ascii(name, extra);
}

// An existing file that is exactly what the lock names: kept, not fetched again. Anything else
// at that path (other bytes, a link, a directory) is removed: it is not what the index will say.
bool already_there(const fs::path& file, const std::string& sha256, std::int64_t size) {
  if (pin::file_matches(file, sha256, size)) return true;
  std::error_code ec;
  fs::remove_all(file, ec);
  return false;
}

}  // namespace

std::string deb_control(const fs::path& deb) {
  const io::LibArchive& a = io::libarchive();
  constexpr std::size_t kMax = 1 << 20;
  const Error bad("cannot read the control file of " + deb.string(), std::nullopt,
                  "the file is not a Debian package; delete it and run 'envpin mirror' again");
  std::unique_ptr<archive, decltype(a.read_free)> outer(a.read_new(), a.read_free);
  a.read_support_format_ar(outer.get());
  if (a.read_open_filename(outer.get(), deb.c_str(), 1 << 16) != ARCHIVE_OK) throw bad;
  archive_entry* entry = nullptr;
  while (a.read_next_header(outer.get(), &entry) == ARCHIVE_OK) {
    const std::string name = a.entry_pathname(entry) ? a.entry_pathname(entry) : "";
    if (!name.starts_with("control.tar")) continue;
    std::string member;
    char buf[1 << 16];
    for (la_ssize_t n; (n = a.read_data(outer.get(), buf, sizeof buf)) > 0;) {
      member.append(buf, static_cast<std::size_t>(n));
      if (member.size() > 16 * kMax) throw bad;
    }
    std::unique_ptr<archive, decltype(a.read_free)> inner(a.read_new(), a.read_free);
    a.read_support_filter_all(inner.get());
    a.read_support_format_tar(inner.get());
    if (a.read_open_memory(inner.get(), member.data(), member.size()) != ARCHIVE_OK) throw bad;
    while (a.read_next_header(inner.get(), &entry) == ARCHIVE_OK) {
      const std::string path = a.entry_pathname(entry) ? a.entry_pathname(entry) : "";
      if (path != "./control" && path != "control") continue;
      std::string control;
      for (la_ssize_t n; (n = a.read_data(inner.get(), buf, sizeof buf)) > 0;) {
        control.append(buf, static_cast<std::size_t>(n));
        if (control.size() > kMax) throw bad;
      }
      return control;
    }
    throw bad;
  }
  throw bad;
}

std::string packages_stanza(const std::string& control, const lock::AptPackage& p, const std::string& file) {
  // deb822: "Field: value" lines, continuation lines starting with a space or tab, no blank line.
  std::string out, package, version;
  std::set<std::string> fields;
  bool skipping = false;
  std::size_t line_no = 0;
  const Error bad("the control file of " + file + " is not one deb822 paragraph", std::nullopt,
                  "delete the file and run 'envpin mirror' again");
  for (std::size_t start = 0; start < control.size();) {
    std::size_t end = control.find('\n', start);
    if (end == std::string::npos) end = control.size();
    std::string line = control.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (control.find_first_not_of("\r\n", start) != std::string::npos) throw bad;  // a second paragraph
      break;
    }
    if (std::any_of(line.begin(), line.end(), [](unsigned char c) { return c < 0x20 && c != '\t'; })) throw bad;
    if (line.front() == ' ' || line.front() == '\t') {
      if (line_no == 1) throw bad;
      if (!skipping) out += line + "\n";  // a dropped field's continuation goes with it
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0 || !diag::only_ascii(line.substr(0, colon), "-_")) throw bad;
    // Field names are case-insensitive (deb822): "filename" is apt's Filename.
    std::string field = line.substr(0, colon);
    std::transform(field.begin(), field.end(), field.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    // What the repository says about the file is the lock's, never the package's own claim.
    skipping = field == "filename" || field == "size" || field == "sha256" || field == "md5sum" || field == "sha1" ||
               field == "sha512";
    if (skipping) continue;
    if (!fields.insert(field).second) throw bad;  // apt would take one of the two
    if (field == "package") package = value;
    if (field == "version") version = value;
    out += line + "\n";
  }
  if (package != p.name || version != p.version)
    throw Error(file + " is " + diag::quote(package) + " " + diag::quote(version) + ", but the lock names " + p.name +
                    " " + p.version,
                std::nullopt, "delete the file and run 'envpin mirror' again");
  return out + "Filename: ./" + file + "\nSize: " + std::to_string(p.size) + "\nSHA256: " + p.sha256 + "\n\n";
}

MirrorSummary mirror(const lock::Lock& l, const MirrorOptions& o) {
  // What is wrong with the lock's data is said at the lock (the entries carry no line numbers).
  const std::optional<diag::Location> at =
      o.lock_file.empty() ? std::nullopt : std::optional<diag::Location>(diag::Location{o.lock_file, 0, 0});
  if (l.platforms.size() != 1)
    throw Error(
        "envpin.lock pins " + std::to_string(l.platforms.size()) + " platforms; a mirror holds the images of one", at,
        "lock one platform for the offline cluster (platforms: [linux/amd64])");
  if (!l.apt.empty() && l.apt_closure == "partial")
    throw Error(
        "envpin.lock holds only the requested .debs (apt-closure = \"partial\"): an offline build would "
        "miss their dependencies",
        at, "run 'envpin lock' where docker or podman can run the base image, for the full closure");
  const auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  MirrorSummary sum;
  const fs::path images = o.dir / kMirrorImages, apt = o.dir / kMirrorApt, wheels = o.dir / kMirrorWheels;
  // The directory is the user's (a link they made is theirs to follow); those in it are envpin's,
  // made by envpin or refused when a link is there (io::owned_directory): nothing is ever written
  // through one to a file outside the mirror.
  fs::create_directories(o.dir);

  // Images: each locked platform manifest with its config and layers, a directory each.
  std::vector<fs::path> image_dirs;
  for (const auto& [name, image] :
       {std::pair{"image", &l.image}, std::pair{"devel-image", &l.devel_image}, std::pair{"uv-image", &l.uv_image}}) {
    if (!*image) continue;
    const lock::Image& i = **image;
    if (i.platforms.size() != 1)
      throw Error("[" + std::string(name) + "] of envpin.lock has no single platform manifest", at,
                  "run 'envpin lock' for one platform");
    const net::ImageReference ref = net::parse_image_reference(i.reference);
    const std::string& manifest = i.platforms.front().manifest;
    say("image " + i.requested + " (" + manifest.substr(0, 19) + ")");
    io::owned_directory(images);
    io::owned_directory(images / name);
    const net::MirroredImage m =
        net::mirror_image(i.reference, manifest, images / name, image_dirs, o.registry,
                          [&](const std::string& digest, std::int64_t size) {
                            say("  blob " + digest.substr(0, 19) + " " + lock::bytes_text(size));
                          });
    image_dirs.push_back(images / name);
    sum.fetched += m.fetched;
    sum.kept += m.kept;
    sum.images.push_back({name, i.requested, ref.repository, ref.tag, manifest});
  }

  // .debs from the archive the lock found them in, as a flat repository.
  std::string packages;
  std::set<std::string> names;
  for (const lock::AptPackage& p : l.apt) {
    const auto source = std::find_if(l.apt_sources.begin(), l.apt_sources.end(),
                                     [&](const lock::AptSource& s) { return s.id == p.source; });
    const std::string file = p.filename.substr(p.filename.rfind('/') + 1);
    if (source == l.apt_sources.end() || !manifest::is_index_url(source->uri) ||
        !safe_file_name(file, ".deb", "._+~%-") || p.filename.find("..") != std::string::npos ||
        !names.insert(file).second)
      throw Error("[[apt]] '" + p.name + "' of envpin.lock has no usable source and file name (" +
                      diag::quote(p.source) + ", " + diag::quote(p.filename) + ")",
                  at, "run 'envpin lock' to write the lock again");
    io::owned_directory(apt);
    const fs::path path = apt / file;
    if (already_there(path, p.sha256, p.size)) {
      sum.kept += p.size;
    } else {
      const std::string url = source->uri + (source->uri.ends_with("/") ? "" : "/") + p.filename;
      say("deb " + file + " " + lock::bytes_text(p.size));
      sum.fetched += net::download(net::Request{"GET", url, {}, {}, true}, path, net::Expected{p.sha256, p.size});
    }
    packages += packages_stanza(deb_control(path), p, file);
    ++sum.debs;
  }

  // Wheels for pip --no-index --find-links: the files and a page of links with their hashes.
  std::string links = "<!DOCTYPE html>\n<html><body>\n";
  for (const lock::PythonPackage& p : l.python)
    for (const lock::WheelFile& f : p.files) {
      if (!safe_file_name(f.name, ".whl", "._+-") || !names.insert(f.name).second)
        throw Error("[[python]] '" + p.name + "' of envpin.lock has an unusable file name " + diag::quote(f.name), at,
                    "run 'envpin lock' to write the lock again");
      io::owned_directory(wheels);
      const fs::path path = wheels / f.name;
      if (already_there(path, f.sha256, f.size)) {
        sum.kept += fs::file_size(path);
      } else {
        say("wheel " + f.name + (f.size > 0 ? " " + lock::bytes_text(f.size) : ""));
        sum.fetched += net::download(net::Request{"GET", f.url, {}, {}, true}, path, net::Expected{f.sha256, f.size});
      }
      links += "<a href=\"" + f.name + "#sha256=" + f.sha256 + "\">" + f.name + "</a><br>\n";
      ++sum.wheels;
    }
  links += "</body></html>\n";

  // The indexes last, together: a mirror that has them has every file they name.
  std::vector<io::PendingFile> files;
  if (sum.debs > 0) {
    files.push_back({apt / "Packages", packages, false});
    // No signature: the repository is trusted as a directory ([trusted=yes]); apt still checks
    // each .deb against the SHA256 above, which is the lock's.
    files.push_back({apt / "Release",
                     "Origin: envpin mirror\nLabel: envpin mirror\nSHA256:\n " + pin::sha256_hex(packages) + " " +
                         std::to_string(packages.size()) + " Packages\n",
                     false});
  }
  if (sum.wheels > 0) files.push_back({wheels / "index.html", links, false});
  io::owned_directory(commit_journal(o.dir).parent_path());
  io::write_all_atomic(files, commit_journal(o.dir));
  return sum;
}

}  // namespace envpin::workflow

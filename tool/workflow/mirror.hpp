// SPDX-License-Identifier: Apache-2.0
// `envpin mirror DIR`: every byte envpin.lock names, fetched by its digest into one directory
// that builds the image with no other server: each image in the layout of containers/image's
// directory transport (skopeo copy dir:...), the .debs as a flat apt repository, the wheels as
// a pip --find-links directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "lock/lock.hpp"
#include "net/registry.hpp"

namespace envpin::workflow {

// The mirror's layout, relative to its directory.
inline constexpr const char* kMirrorImages = "images";  // image/, devel-image/, uv-image/: skopeo dir: layouts
inline constexpr const char* kMirrorApt = "apt";        // *.deb, Packages, Release (a flat repository: "./")
inline constexpr const char* kMirrorWheels = "wheels";  // *.whl and index.html (pip --find-links)

struct MirrorOptions {
  std::filesystem::path dir;
  std::string lock_file;  // names the lock in errors about its entries ("" : none)
  net::RegistryOptions registry;
  std::function<void(const std::string&)> progress;  // one line per file fetched
};

struct MirroredRef {
  std::string name;        // its directory under images/: "image", "devel-image", "uv-image"
  std::string requested;   // as the lock names it
  std::string repository;  // where a registry serves it: "library/debian"
  std::string tag;         // the tag it was locked from ("" when only a digest)
  std::string manifest;    // the platform manifest's digest: what FROM names
};

struct MirrorSummary {
  std::vector<MirroredRef> images;
  int debs = 0, wheels = 0;
  std::int64_t fetched = 0, kept = 0;  // bytes downloaded, and found already there and verified
};

// Mirrors `l` (a current lock of one platform with a full apt closure) into o.dir. Files already
// there that hash to the lock are kept; each new one is verified while written and renamed into
// place; the indexes (each image's manifest.json, then Packages and index.html) come last. Throws
// diag::Error naming the entry, the URL and what differed.
MirrorSummary mirror(const lock::Lock& l, const MirrorOptions& o);

// A .deb's control paragraph (DEBIAN/control), read with libarchive from the ar member
// control.tar[.gz|.xz|.zst]: at most 1 MiB. Throws diag::Error when it is not a .deb.
std::string deb_control(const std::filesystem::path& deb);

// One stanza of a Packages index: `control` (a deb822 paragraph whose Package and Version must
// be `p`'s) with Filename, Size and SHA256 from the lock. Throws diag::Error when the control is
// not a paragraph or names another package.
std::string packages_stanza(const std::string& control, const lock::AptPackage& p, const std::string& file);

}  // namespace envpin::workflow

// SPDX-License-Identifier: Apache-2.0
// `envpin lock`: the real resolvers at the edge, beside the policies of this directory. The image digest from the
// registry (libcurl), the apt closure from apt itself inside the pinned image (docker or podman), the wheels from pip's
// resolver for the target platform, the files' sha256 (OpenSSL EVP).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lock/lock.hpp"
#include "manifest/model.hpp"
#include "resolve/environment.hpp"

namespace envpin::resolve {

struct ResolveOptions {
  std::vector<std::string> insecure_registries;  // reached over http:// (loopback always is)
  std::string python;  // interpreter whose pip resolves wheels; default $ENVPIN_PIP_PYTHON or python3
  std::string engine;  // container engine for apt; default $ENVPIN_CONTAINER_ENGINE, else docker, else podman
  std::function<void(const std::string&)> progress;  // one line per step, for stderr; called from two threads
  // When set: the wall time of each phase ("registry", "apt", "python ...", "total"), in seconds.
  std::vector<std::pair<std::string, double>>* phases = nullptr;
  // The lock being replaced, when its digest holds: a wheel with the same sha256 is the same
  // bytes, so its recorded size is taken from there instead of asking the index again.
  std::optional<lock::Lock> previous;
};

lock::Lock resolve_lock(const manifest::Manifest& m, const resolve::Environment& env, const ResolveOptions& options);

// Each wheel's size: from `previous` for a file of the same sha256, else a HEAD of its URL (eight
// at a time, 10 s and one try each, a minute in all); 0 where neither says.
void record_wheel_sizes(std::vector<lock::PythonPackage>& packages, const std::optional<lock::Lock>& previous);

// Parsers of the tools' output (pure; tested on recorded output).
// `apt-get download --print-uris` lines: 'URI' name_version_arch.deb size SHA256:hex
std::vector<lock::AptPackage> parse_apt_print_uris(const std::string& text, std::vector<lock::AptSource>& sources);
// Stanzas of a Debian Packages index for the `wanted` package names only (one pass over the
// text, nothing copied for other packages): Package, Version, Architecture, Filename, Size, SHA256.
struct IndexEntry {
  std::string name, version, arch, filename, sha256;
  std::int64_t size = 0;
};
std::vector<IndexEntry> scan_packages_index(std::string_view text, const std::vector<std::string>& wanted);

// `pip install --dry-run --report` JSON.
std::vector<lock::PythonPackage> parse_pip_report(const std::string& json_text);

}  // namespace envpin::resolve

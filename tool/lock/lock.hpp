// SPDX-License-Identifier: Apache-2.0
// envpin.lock: every pin with its sha256 and what was requested. A strict TOML subset written
// only by envpin (fixed key order, sorted arrays, no floats or datetimes), digested over its
// canonical JSON form (sorted keys, compact, UTF-8: what Python's json.dumps(sort_keys=True,
// separators=(",", ":"), ensure_ascii=False) gives). See reference/lockfiles.md §6.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.hpp"

namespace envpin::lock {

inline constexpr const char* kLockVersion = "1.0";

struct PlatformManifest {
  std::string platform, manifest, config;
  std::int64_t size = 0;  // the compressed bytes of its layers, what a node pulls; 0: not recorded
};

struct Image {
  std::string requested;  // as the manifest (or the CUDA choice) names it
  std::string reference;  // requested@digest: what FROM uses
  std::string digest;     // what the tag pointed at (index or manifest)
  std::string media_type;
  std::vector<PlatformManifest> platforms;
};

struct Cuda {
  std::string toolkit, architectures, driver_min, torch_variant;
};

struct AptSource {
  std::string id;   // host/path of the archive, e.g. "deb.debian.org/debian"
  std::string uri;  // "http://deb.debian.org/debian"
};

struct AptPackage {
  std::string name, version, arch, source;
  std::string requested;  // the manifest's spec ("jq" or "jq=1.6-2.1"); empty for dependencies
  std::string filename;   // pool path
  std::int64_t size = 0;
  std::string sha256;
};

struct WheelFile {
  std::string name, url, sha256;
  std::int64_t size = 0;  // bytes, as the index served it; 0: not recorded (the index did not say)
};

struct PythonPackage {
  std::string name, version;
  std::string requested;  // the manifest's requirement; empty for dependencies
  std::vector<WheelFile> files;
};

struct File {
  std::string path;  // relative to the manifest, '/' separated
  std::int64_t size = 0;
  std::string mode;  // "0644"
  std::string sha256;
};

struct Lock {
  std::string lock_version = kLockVersion;
  std::string created_by;
  std::vector<std::string> platforms;
  std::string inputs_digest;
  std::string lock_digest;
  std::optional<Image> image;
  std::optional<Image> devel_image;  // with CUDA: the devel image of the same line the smoke stage compiles in
  std::optional<Image> uv_image;     // the uv image a standalone Python is installed with ([uv-image])
  std::optional<Cuda> cuda;
  std::vector<AptSource> apt_sources;
  std::string apt_closure;  // "full" (apt's solver in the image) or "partial" (requested packages only)
  std::vector<AptPackage> apt;
  std::string python_index;  // the index the wheels came from
  std::vector<PythonPackage> python;
  std::vector<File> files;
};

// Sorts every array by its documented key and fills lock_digest.
void seal(Lock& lock);

// The canonical TOML text (what envpin writes) and JSON projection (what lock-digest covers,
// without lock-digest when `for_digest`).
std::string to_toml(const Lock& lock);
std::string to_json(const Lock& lock, bool for_digest = false);
std::string compute_lock_digest(const Lock& lock);

// Parses envpin.lock text (toml++). Throws diag::Error with file:line:col for syntax errors,
// an unsupported lock-version, or a missing or mistyped key (naming the entry).
Lock parse(const std::string& text, const std::string& file);

// sha256 over the canonical JSON of everything in the manifest that affects resolution
// (requirements file content included): a changed manifest makes the lock stale.
std::string inputs_digest(const manifest::Manifest& m);

// pip hash format: one "name==version --hash=sha256:..." line per wheel, sorted.
std::string requirements_lock(const Lock& lock);

// The wheels the image installs in a layer of their own, before the others: torch, torchvision,
// torchaudio, triton and nvidia-* (the CUDA libraries torch's wheels depend on), hundreds of MB
// to GBs each, which a bump of another pin must not download and install again. By normalized name.
bool heavy_wheel(std::string_view name);
// Those, and any other wheel of at least kHeavyWheelBytes by the sizes the lock records (a
// TensorFlow, jaxlib or onnxruntime-gpu wheel is hundreds of MB too).
inline constexpr std::int64_t kHeavyWheelBytes = 100'000'000;
bool heavy_wheel(const PythonPackage& package);
// requirements_lock's lines of the heavy wheels (`heavy`) or of the others, in the same format.
// The image's two install layers read these (.envpin/requirements.heavy.lock and
// .envpin/requirements.rest.lock); together they are requirements.lock's lines.
std::string requirements_lock(const Lock& lock, bool heavy);

// requirements.lock is part of the lock: its bytes are exactly requirements_lock(lock), so
// they are covered by lock-digest. Returns why `file_text` (the file as found; nullopt when it
// is absent) is not that, or "" when it is (or the lock has no wheels).
std::string requirements_lock_problem(const Lock& lock, const std::optional<std::string>& file_text);

}  // namespace envpin::lock

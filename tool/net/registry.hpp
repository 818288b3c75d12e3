// SPDX-License-Identifier: Apache-2.0
// Image tag -> digest with the registry HTTP API v2 (OCI distribution spec): HEAD then GET the
// manifest with every manifest media type in Accept, hash the body, follow an index to the
// per-platform manifests and their configs. Anonymous bearer tokens (Docker Hub style).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "net/http.hpp"

namespace envpin::net {

struct ImageReference {
  std::string registry;    // "registry-1.docker.io" for Docker Hub, else host[:port]
  std::string repository;  // "library/debian"
  std::string tag;         // may be empty when only a digest is given
  std::string digest;      // "sha256:..." when given
  std::string written;     // the reference without its digest, as the user wrote it
};

// Parses docker's reference grammar: [registry/]path[:tag][@sha256:hex]; Docker Hub short
// names become library/<name>. Throws diag::Error when malformed.
ImageReference parse_image_reference(std::string_view text);

struct PlatformManifest {
  std::string platform;   // "linux/amd64"
  std::string manifest;   // sha256:... of that platform's image manifest
  std::string config;     // sha256:... of its config blob
  std::int64_t size = 0;  // the sum of its layers' compressed sizes; 0: the manifest did not say
};

struct ResolvedImage {
  std::string requested;  // as written
  std::string registry;
  std::string repository;
  std::string digest;  // what the tag points at: the index, or the only manifest
  std::string media_type;
  std::vector<PlatformManifest> platforms;  // one per requested platform, in request order
};

struct RegistryOptions {
  std::vector<std::string> insecure;  // registries reached over http:// (loopback always is)
  HttpOptions http;
};

ResolvedImage resolve_image(const std::string& reference, const std::vector<std::string>& platforms,
                            const RegistryOptions& options);

// One image manifest of `reference`'s repository with its config and layers, copied into `dir`
// in the layout of containers/image's directory transport (what `skopeo copy dir:DIR ...` reads,
// any manifest type, digests kept): manifest.json, `version`, and each blob named by its sha256
// hex. Each blob is verified by its digest and its descriptor's size while it is written; one
// already in `dir`, or in one of `shared` (the mirror's other images: CUDA's runtime and devel
// share layers), that hashes right is kept or hard-linked. `manifest_digest` must name an image
// manifest, not an index (the lock's platform manifest).
struct MirroredImage {
  std::string media_type;              // of the manifest
  std::int64_t fetched = 0, kept = 0;  // blob bytes downloaded, and found already there
};
// Called before each blob with its digest and size, for progress lines.
using BlobProgress = std::function<void(const std::string& digest, std::int64_t size)>;
MirroredImage mirror_image(const std::string& reference, const std::string& manifest_digest,
                           const std::filesystem::path& dir, const std::vector<std::filesystem::path>& shared,
                           const RegistryOptions& options, const BlobProgress& progress = {});

// Media types sent in Accept, index types first (see reference/lockfiles.md §3.2).
inline constexpr const char* kManifestAccept =
    "Accept: application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";

}  // namespace envpin::net

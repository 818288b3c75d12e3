// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lock/lock.hpp"
#include "manifest/model.hpp"
#include "resolve/cuda_policy.hpp"

namespace envpin::resolve {

// How the requested Python gets into the image.
enum class PythonSource {
  none,        // no python section
  image,       // the official python:<version>-slim-<debian> base image carries it
  standalone,  // uv installs a python-build-standalone CPython of that exact version
  system       // python.source: system: the image's python3 from apt, in a venv
};

// Every decision generate needs, made from the manifest alone (pure: no I/O).
// Where an offline build takes every pinned byte from (envpin generate --mirror): a server of an
// `envpin mirror` directory and a registry holding its images, by digest.
struct Mirror {
  std::string files;     // "http://127.0.0.1:8000": serves the directory (apt/, wheels/)
  std::string registry;  // "127.0.0.1:5000": the images, pushed there from its OCI layout
};

// The image `envpin push` recorded (.envpin/push.json), read by generate when jobs.push is set.
struct PushedImage {
  std::string reference;   // REGISTRY/REPOSITORY:TAG as pushed
  std::string repository;  // REGISTRY/REPOSITORY
  std::string digest;      // sha256:HEX, the registry's answer
  std::string stale;       // why it no longer holds this project ("" when it does, or not judged)
};

struct Environment {
  std::string base_image;              // "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"
  std::string os_id;                   // os-release ID ("ubuntu", "debian"); empty when unknown
  std::string os_version;              // os-release VERSION_ID ("22.04", "12"); empty when unknown
  std::string glibc;                   // the OS release's glibc ("2.36"), for wheel platform tags
  std::string codename;                // "bookworm", "jammy": the apt suite
  std::vector<std::string> platforms;  // "linux/amd64", ...
  std::vector<std::string> machines;   // matching `uname -m` values
  PythonSource python_source = PythonSource::none;
  std::optional<CudaDecision> cuda;
  bool remove_ubuntu_user = false;    // ubuntu:24.04 images ship user 'ubuntu' with uid 1000
  std::vector<std::string> warnings;  // formatted with diag::format_warning
  std::optional<lock::Lock> lock;     // set by generate when envpin.lock exists: pinned artifacts
  std::string uv_image;               // with a standalone Python: the uv image (python.uv_image or kUvImage)
  std::optional<Mirror> mirror;       // set by generate --mirror: FROM, apt and pip use it alone
  std::optional<PushedImage> pushed;  // set by generate with jobs.push once envpin push recorded one
};

// The uv release whose image provides `uv python install` in generated Dockerfiles.
inline constexpr const char* kUvImage = "ghcr.io/astral-sh/uv:0.12.9";

// Decides base image, OS, Python source and CUDA details for `m`.
// Throws diag::Error (with the manifest location) when a request cannot be met,
// e.g. a CUDA version without an nvidia/cuda tag or a GPU the toolkit cannot target.
Environment resolve(const manifest::Manifest& m);

// The torch minor ("2.9") the CUDA policy chose for a torch range, or "" (no range, no cuda).
inline std::string torch_range_minor(const Environment& env) {
  return env.cuda && env.cuda->torch && !env.cuda->torch->range.empty() ? env.cuda->torch->version : std::string();
}

// With python.source: system, throws diag::Error (at python.version) unless the python3
// package in `l`'s apt closure is the version the manifest asks for.
void check_locked_python(const manifest::Manifest& m, const lock::Lock& l);

// A warning (diag::format_warning's line) when the locked wheels, dependencies included, hold a
// package that loads CUDA libraries from the system while the image is nvidia/cuda's base
// flavor, which has none; "" otherwise. The manifest's own requirements are judged before the
// lock (the flavor decision); this sees what they pull in (whisperx -> faster-whisper -> ctranslate2).
std::string system_cuda_in_closure(const lock::Lock& l);

}  // namespace envpin::resolve

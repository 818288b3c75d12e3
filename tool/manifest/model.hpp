// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "diag/error.hpp"
#include "manifest/requirement.hpp"

namespace envpin::manifest {

using diag::Location;

// A value together with where the user wrote it.
template <class T>
struct Located {
  T value{};
  Location where;
};

enum class Arch { amd64, arm64 };

struct Platform {
  Arch arch = Arch::amd64;
  std::string text() const { return arch == Arch::amd64 ? "linux/amd64" : "linux/arm64"; }
  // What `uname -m` prints on this platform.
  std::string machine() const { return arch == Arch::amd64 ? "x86_64" : "aarch64"; }
};

enum class CudaFlavor { base, runtime, devel };
enum class GpuRequirement { none, optional, required };

struct Cuda {
  Located<std::string> version;  // "12.4" or "12.4.1"
  Located<CudaFlavor> flavor{CudaFlavor::runtime, {}};
  Located<bool> cudnn{false, {}};
  std::vector<Located<std::string>> gpus;  // product names or capabilities
  Location gpus_where;                     // the list (or the cuda section when it is missing)
  std::optional<Located<std::string>> driver;  // the fleet's driver floor, "535.104.05"
};

struct Python {
  Located<std::string> version;  // "3.11" or "3.11.9"
  std::vector<Located<Requirement>> packages;
  std::optional<Located<std::string>> requirements;  // path relative to the project
  std::vector<Located<Requirement>> requirement_lines;  // parsed from that file
  std::optional<Located<std::string>> index;
  std::vector<Located<std::string>> extra_index;
  bool system = false;    // python.source: system: the image's own python3 (from apt), in a venv
  Location source_where;
};

struct AptPackage {
  std::string name;
  std::string version;  // empty: the base image's candidate
};

struct NamedValue {
  Located<std::string> name;
  Located<std::string> value;
};

struct User {
  Located<std::string> name{"dev", {}};
  Located<int> uid{1000, {}};
};

struct Devcontainer {
  std::vector<Located<std::string>> extensions;
  std::vector<Located<int>> forward_ports;
  Located<GpuRequirement> gpu{GpuRequirement::optional, {}};
};

// Where each artifact is written, relative to the project directory.
struct Outputs {
  Located<std::string> dockerfile{"Dockerfile", {}};
  Located<std::string> devcontainer{".devcontainer/devcontainer.json", {}};
  Located<std::string> check_env{".envpin/check_env.sh", {}};
  Located<std::string> dockerignore{".dockerignore", {}};
  // Fixed, not a manifest key: EnvPin.cmake finds it next to the manifest.
  Located<std::string> cmake{".envpin/envpin.cmake", {}};
};

// The typed form of envpin.yaml (schema version 1). Every value keeps its source location.
struct Manifest {
  std::string file;                   // the path as the user gave it, used in messages
  std::filesystem::path project_dir;  // the directory holding the manifest
  std::string source;                 // the manifest's bytes, for its digest

  Located<int> schema;
  Located<std::string> name;
  std::vector<Located<Platform>> platforms;
  std::optional<Located<std::string>> os;
  std::optional<Located<std::string>> base;
  std::optional<Cuda> cuda;
  std::optional<Python> python;
  std::vector<Located<AptPackage>> apt;
  std::vector<NamedValue> env;
  std::vector<Located<std::string>> secrets;
  std::vector<NamedValue> paths;
  Located<std::string> workdir{"/workspace", {}};
  User user;
  std::vector<Located<std::string>> context_exclude;
  std::vector<Located<std::string>> context_allow_secrets;  // secret files the context may carry
  Devcontainer devcontainer;
  Outputs outputs;
};

}  // namespace envpin::manifest

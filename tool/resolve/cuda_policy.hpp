// SPDX-License-Identifier: Apache-2.0
// The CUDA choice: toolkit, nvidia/cuda tag, arch list, torch wheel variant and driver floor
// that fit a fleet, or an error naming the two inputs that conflict. Pure: no I/O, no host
// facts (an arm64 laptop and an amd64 CI machine decide the same).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diag/error.hpp"
#include "manifest/model.hpp"

namespace envpin::resolve {

// Where an input came from: a manifest location, or a command-line flag.
struct Origin {
  std::string label;                    // "cuda.version", "--cuda"
  std::optional<diag::Location> where;  // set for manifest inputs
  // "cuda.version (line 4)" or "--cuda"
  std::string describe() const;
  // The location errors are reported at: the manifest position, or the flag itself.
  diag::Location location() const;
};

template <class T>
struct Input {
  T value{};
  Origin origin;
};

struct CudaRequest {
  Input<std::string> cuda{"auto", {"--cuda", {}}};  // "auto", "12.4" or "12.4.1"
  std::vector<Input<std::string>> gpus;             // product names or capabilities
  Origin gpus_origin{"--gpu", {}};                  // where the (possibly empty) list is
  std::optional<Input<std::string>> driver;         // the fleet's driver floor
  std::optional<Input<std::string>> torch;          // "2.4.1", from python.packages or --torch
  std::optional<Input<std::string>> torch_range;    // ">=2.7" ("" for a bare torch): resolved against the table
  std::optional<Input<std::string>> torch_variant;  // "cu124", from a download.pytorch.org index
  std::optional<Input<std::string>> python;         // "3.11", python.version: torch wheels must exist for it
  std::vector<Input<manifest::Arch>> platforms;     // empty: linux/amd64
  std::optional<Input<std::string>> ubuntu;         // "22.04"; unset: 22.04 where published
  std::string flavor = "runtime";                   // base, runtime, devel
  bool flavor_given = false;                        // cuda.flavor set in the manifest
  std::string flavor_why;                           // why the flavor, when envpin chose it (a reason line)
  std::string system_user;                          // a requirement that loads the system's CUDA libraries
  std::string system_libraries_missing;             // a requirement loads CUDA libraries the image lacks (a warning)
  bool cudnn = false;
  std::optional<Input<bool>> forward_compat;  // cuda.forward_compat: true
  std::optional<Input<bool>> require_off;     // cuda.require_check: off (the image's start gate bypassed)
  std::string repository = "nvidia/cuda";     // cuda.repository: where nvidia/cuda's tags are pulled from
};

struct GpuTarget {
  std::string input;    // as the user wrote it
  std::string product;  // table name, or "" for a bare capability
  int sm = 0;
};

struct TorchChoice {
  std::string version;    // as pinned, "2.4.1"; for a range, the minor chosen ("2.9")
  std::string range;      // the specifier it was chosen for (">=2.7"), empty when pinned
  std::string variant;    // "cu124"
  std::string index_url;  // https://download.pytorch.org/whl/cu124
  std::vector<int> sass;  // cubins in the wheel for the first platform
  int ptx = 0;
};

struct Note {
  std::string text;
  std::optional<diag::Location> where;
};

enum class DriverFit { unknown, full, minor_version, forward };

struct CudaDecision {
  std::string toolkit;                 // "12.4.1"
  std::string minor;                   // "12.4"
  std::string os_version;              // "22.04"
  std::string base_image;              // "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"
  std::string devel_image;             // the same line's nvcc: "nvidia/cuda:12.4.1-devel-ubuntu22.04"
  std::vector<std::string> platforms;  // "linux/amd64"
  std::vector<GpuTarget> gpus;
  std::vector<int> sms;             // fleet SMs, ascending, unique
  std::string cmake_architectures;  // "80-real;90": SASS for each, PTX for the newest
  std::string torch_arch_list;      // "8.0;9.0+PTX"
  std::string driver_packaged;      // full compatibility: "550.54.15"
  std::string driver_minor_compat;  // minor-version compatibility floor: "525.60.13"
  std::string driver_floor;         // the fleet's floor as given, may be empty
  DriverFit driver_fit = DriverFit::unknown;
  // The image's NVIDIA_REQUIRE_CUDA against the fleet's driver: "" when no driver is given,
  // else what lets the container start ("the driver reports CUDA 12.8", "R535 for nvidia GPUs").
  std::string start_gate;
  bool gate_bypassed = false;  // cuda.require_check: off, and the gate would refuse: NVIDIA_DISABLE_REQUIRE=1
  std::optional<TorchChoice> torch;
  std::vector<std::string> reasons;  // why, one line each
  std::vector<Note> warnings;
};

// "H100 (sm_90)", or the capability as written for a bare capability.
std::string gpu_label(const GpuTarget& g);

// Decides, or throws diag::Error naming the conflicting inputs and a fix.
CudaDecision decide_cuda(const CudaRequest& request);

// The torch version pinned by a requirement list ("torch==2.4.1" -> "2.4.1"), if any.
std::optional<Input<std::string>> torch_pin(const manifest::Manifest& m);

// The request a manifest with a cuda section makes.
CudaRequest request_from_manifest(const manifest::Manifest& m);

// What `envpin cuda` is given on its command line, as typed (spaces around a value are dropped).
struct CudaFlags {
  std::vector<std::string> gpus;       // --gpu: products or capabilities
  std::string driver;                  // --driver: a version, or ">=" one
  std::string torch;                   // --torch: "2.4.1", "==2.4.1+cu121", "torch>=2.6,<2.8"
  std::string cuda;                    // --cuda: x.y, x.y.z or "auto"
  std::vector<std::string> platforms;  // --platform: linux/amd64, linux/arm64
  std::string os;                      // --os: ubuntuXX.YY
};

// The request the flags make, over the manifest's when there is one (a flag given wins). Throws
// diag::Error located at the flag (--cuda, --platform, --os) for a value it cannot be.
CudaRequest request_from_flags(const CudaFlags& given, const manifest::Manifest* m);

// Human text (what `envpin cuda` prints) and JSON (`envpin cuda --json`).
std::string format_decision(const CudaDecision& d);
std::string decision_json(const CudaDecision& d);

}  // namespace envpin::resolve

// SPDX-License-Identifier: Apache-2.0
// What a node pulls for a locked project, from the sizes envpin.lock records (the base image's
// compressed layers, each .deb, each wheel), and the CUDA libraries it then carries twice: in
// the nvidia/cuda image flavor and again in the nvidia-* wheels torch depends on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lock/lock.hpp"

namespace envpin::lock {

struct Part {
  int count = 0;
  std::int64_t bytes = 0;  // of those with a recorded size
  int unknown = 0;         // how many have none
};

// A CUDA library both the base image and a wheel bring.
struct Duplicate {
  std::string library;  // "cuBLAS"
  std::string soname;   // "libcublas.so.12": the wheel's
  std::string wheel;    // "nvidia-cublas-cu12"
  std::string version;  // "12.4.5.8"
  std::int64_t bytes = 0;
};

struct SizeReport {
  std::string platform;  // the lock's first
  std::string image;     // the base image as requested
  Part base;             // 1, or 0 without an image
  Part apt, heavy, light;
  std::string flavor;  // of an nvidia/cuda base: "base", "runtime", "devel", with "cudnn-" before; else ""
  std::vector<Duplicate> duplicates;
  std::string system_user;  // a locked wheel that needs the image's CUDA libraries: "name: why"
  std::int64_t total() const { return base.bytes + apt.bytes + heavy.bytes + light.bytes; }
  int unknown() const { return base.unknown + apt.unknown + heavy.unknown + light.unknown; }
};

SizeReport size_report(const Lock& lock);

// Why a locked wheel (by its normalized name) loads CUDA libraries from the system rather than
// from torch's nvidia-* wheels, whatever extras it was installed with; "" for the others. The
// sources are at resolve's system_cuda_user (cuda_request.cpp), which also reads extras.
std::string system_cuda_reason(std::string_view normalized_name);

// The nvidia/cuda flavor in an image reference's tag ("12.4.1-cudnn-runtime-ubuntu22.04" ->
// "cudnn-runtime"), or "" for another repository or a tag of another form.
std::string cuda_flavor(std::string_view image);

// "363.4 MB": decimal units, as registries and pip print them.
std::string bytes_text(std::int64_t bytes);

// The report as envpin size prints it, and as JSON.
std::string size_text(const SizeReport& r);
std::string size_json(const SizeReport& r);

}  // namespace envpin::lock

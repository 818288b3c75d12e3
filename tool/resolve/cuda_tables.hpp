// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::resolve {

// One CUDA minor release line as published in nvidia/cuda.
struct CudaRelease {
  std::string_view minor;                       // "12.4"
  std::vector<std::string_view> patches;        // tags still published, oldest first
  std::vector<std::string_view> ubuntu;         // "22.04", ...
  std::string_view cudnn_part;                  // "cudnn8", "cudnn9" or "cudnn"
};

// Every release line envpin can map to an nvidia/cuda tag.
std::span<const CudaRelease> cuda_releases();

// The release line for "12.4" or "12.4.1", or nullptr when there is none.
const CudaRelease* find_cuda_release(std::string_view version);

// Real SM targets (e.g. 90 for sm_90) that nvcc of toolkit `minor` can compile.
std::vector<int> compilable_sms(std::string_view minor);

struct GpuModel {
  std::string_view name;  // as NVIDIA markets it, e.g. "H100"
  int sm;                 // compute capability times ten, e.g. 90
};

// Product name -> compute capability.
std::span<const GpuModel> gpu_models();

// Looks up a product name ("H100", "nvidia a100", "RTX 4090") or a capability
// ("9.0", "sm_90"). Returns the SM number, or nullopt when unknown.
std::optional<int> gpu_sm(std::string_view name_or_capability);

// "9.0" for 90, "12.0" for 120.
std::string capability_text(int sm);

}  // namespace envpin::resolve

// SPDX-License-Identifier: Apache-2.0
// What this machine has: NVIDIA driver, GPUs, nvcc. The edge of envpin: it loads NVML with
// dlopen (no link-time dependency on the driver), falls back to nvidia-smi, then to
// /proc/driver/nvidia/version, and says plainly when there is no GPU. Policy never calls it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::probe {

struct ProbedGpu {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int sm = 0;        // 90; 0 when the source cannot tell
  std::uint64_t memory_mib = 0;
};

struct GpuProbe {
  std::string source;       // "nvml", "nvidia-smi", "proc" or "" when no driver was found
  std::string driver;       // "550.54.15"
  std::string cuda_driver;  // highest CUDA the driver runs, "12.4"
  std::vector<ProbedGpu> gpus;
  std::string cuda_runtime;       // libcudart's cudaRuntimeGetVersion, "13.0"; empty when none
  std::string cuda_runtime_path;  // the library that answered
  std::string nvcc;               // "13.0.48", empty when no nvcc
  std::string nvcc_path;
  std::vector<std::string> notes;  // why each source that failed failed
};

struct ProbeOptions {
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string proc_version = "/proc/driver/nvidia/version";
  std::string path;     // PATH to search for nvidia-smi and nvcc
  std::string cudacxx;  // $CUDACXX: nvcc to ask first
  // CUDA runtime libraries to dlopen, first found wins (the dynamic loader's search path).
  std::vector<std::string> cudart = {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
                                     "/usr/local/cuda/lib64/libcudart.so"};
};

// Options from the environment: PATH, CUDACXX, and ENVPIN_NVML_LIBRARY,
// ENVPIN_NVIDIA_PROC_VERSION and ENVPIN_CUDART_LIBRARY, which point the probe at other files
// (recorded fakes in tests).
ProbeOptions options_from_environment();

GpuProbe probe_machine(const ProbeOptions& options);

// Parsers of recorded tool output (pure).
// `nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader,nounits`
bool parse_smi_query(std::string_view text, GpuProbe& out, std::string& error);
// The "CUDA Version: 12.4" of nvidia-smi's banner.
std::string parse_smi_cuda_version(std::string_view text);
// "Cuda compilation tools, release 13.0, V13.0.48" -> "13.0.48".
std::string parse_nvcc_version(std::string_view text);
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ..." -> "550.54.15".
std::string parse_proc_version(std::string_view text);
// 12040 (cudaDriverGetVersion encoding) -> "12.4".
std::string cuda_version_text(int encoded);

std::string format_probe(const GpuProbe& p);
std::string probe_json(const GpuProbe& p);  // one JSON object, no trailing newline

}  // namespace envpin::probe

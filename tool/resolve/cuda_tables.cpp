// SPDX-License-Identifier: Apache-2.0
#include "resolve/cuda_tables.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace envpin::resolve {
namespace {

// nvidia/cuda tags. Source: NVIDIA container-images/cuda doc/supported-tags.md (Dec 2024)
// for 11.x-12.6; Ubuntu-only 12.8/12.9/13.x lines from Docker Hub tag listings as collected
// in replicate/cog pkg/config/cuda_compatibility.json (Aug 2026). cuDNN tag part: cudnn8 up to
// 12.2, cudnn9 for 12.3, plain "cudnn" (cuDNN 9) from 12.4 on. Only OSes envpin supports
// (Ubuntu, since generated images install with apt) are listed.
const std::vector<CudaRelease>& releases() {
  static const std::vector<CudaRelease> table = {
      {"11.0", {"11.0.3"}, {"20.04"}, "cudnn8"},
      {"11.1", {"11.1.1"}, {"20.04"}, "cudnn8"},
      {"11.2", {"11.2.2"}, {"20.04"}, "cudnn8"},
      {"11.4", {"11.4.3"}, {"20.04"}, "cudnn8"},
      {"11.5", {"11.5.2"}, {"20.04"}, "cudnn8"},
      {"11.6", {"11.6.2"}, {"20.04"}, "cudnn8"},
      {"11.7", {"11.7.1"}, {"20.04", "22.04"}, "cudnn8"},
      {"11.8", {"11.8.0"}, {"20.04", "22.04"}, "cudnn8"},
      {"12.0", {"12.0.1"}, {"20.04", "22.04"}, "cudnn8"},
      {"12.1", {"12.1.1"}, {"20.04", "22.04"}, "cudnn8"},
      {"12.2", {"12.2.2"}, {"20.04", "22.04"}, "cudnn8"},
      {"12.3", {"12.3.2"}, {"20.04", "22.04"}, "cudnn9"},
      {"12.4", {"12.4.1"}, {"20.04", "22.04"}, "cudnn"},
      {"12.5", {"12.5.1"}, {"20.04", "22.04", "24.04"}, "cudnn"},
      {"12.6", {"12.6.3"}, {"20.04", "22.04", "24.04"}, "cudnn"},
      {"12.8", {"12.8.1"}, {"20.04", "22.04", "24.04"}, "cudnn"},
      {"12.9", {"12.9.1"}, {"20.04", "22.04", "24.04"}, "cudnn"},
      {"13.0", {"13.0.0", "13.0.1", "13.0.2", "13.0.3"}, {"22.04", "24.04"}, "cudnn"},
      {"13.1", {"13.1.1", "13.1.2"}, {"22.04", "24.04"}, "cudnn"},
      {"13.2", {"13.2.0", "13.2.1"}, {"22.04", "24.04"}, "cudnn"},
  };
  return table;
}

// Product -> compute capability. Source: NVIDIA "CUDA GPU Compute Capability",
// https://developer.nvidia.com/cuda-gpus and https://developer.nvidia.com/cuda-legacy-gpus.
constexpr GpuModel kGpus[] = {
    {"GB10", 121},        {"RTX PRO 6000", 120},  {"RTX PRO 5000", 120}, {"RTX PRO 4500", 120},
    {"RTX PRO 4000", 120}, {"RTX 5090", 120},     {"RTX 5080", 120},     {"RTX 5070 Ti", 120},
    {"RTX 5070", 120},    {"RTX 5060 Ti", 120},   {"RTX 5060", 120},     {"Jetson T5000", 110},
    {"Jetson T4000", 110}, {"GB300", 103},        {"B300", 103},         {"GB200", 100},
    {"B200", 100},        {"GH200", 90},          {"H200", 90},          {"H100", 90},
    {"H20", 90},          {"L40S", 89},           {"L40", 89},           {"L4", 89},
    {"RTX 6000 Ada", 89}, {"RTX 4090", 89},       {"RTX 4080", 89},      {"RTX 4070 Ti", 89},
    {"RTX 4070", 89},     {"RTX 4060 Ti", 89},    {"RTX 4060", 89},      {"Jetson AGX Orin", 87},
    {"Jetson Orin NX", 87}, {"Jetson Orin Nano", 87}, {"A40", 86},       {"A10", 86},
    {"A10G", 86},         {"A16", 86},            {"A2", 86},            {"RTX A6000", 86},
    {"RTX A5000", 86},    {"RTX A4000", 86},      {"RTX 3090", 86},      {"RTX 3080", 86},
    {"RTX 3070", 86},     {"RTX 3060", 86},       {"A100", 80},          {"A30", 80},
    {"T4", 75},           {"RTX 2080 Ti", 75},    {"RTX 2080", 75},      {"RTX 2070", 75},
    {"RTX 2060", 75},     {"Quadro RTX 8000", 75}, {"Quadro RTX 6000", 75}, {"Jetson AGX Xavier", 72},
    {"Jetson Xavier NX", 72}, {"V100", 70},       {"TITAN V", 70},       {"P40", 61},
    {"P4", 61},           {"GTX 1080 Ti", 61},    {"GTX 1080", 61},      {"P100", 60},
    {"Jetson Nano", 53},  {"M60", 52},            {"M40", 52},           {"K80", 37},
};

std::string normalize_gpu(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (std::string_view vendor : {"nvidia", "geforce", "tesla"})
    if (out.starts_with(vendor)) out.erase(0, vendor.size());
  return out;
}

}  // namespace

std::span<const CudaRelease> cuda_releases() { return releases(); }

const CudaRelease* find_cuda_release(std::string_view version) {
  const auto first_dot = version.find('.');
  const auto second_dot = version.find('.', first_dot + 1);
  const std::string_view minor = version.substr(0, second_dot);
  for (const CudaRelease& r : releases())
    if (r.minor == minor) return &r;
  return nullptr;
}

std::vector<int> compilable_sms(std::string_view minor) {
  // Source: CMake Modules/Internal/CMakeCUDAArchitecturesAll.cmake, cross-checked with the
  // CUDA Features Archive (13.0 removed sm_50-72 and renamed sm_101 to sm_110).
  const int major = std::stoi(std::string(minor.substr(0, minor.find('.'))));
  const int sub = std::stoi(std::string(minor.substr(minor.find('.') + 1)));
  std::vector<int> sms;
  if (major >= 13) return {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
  if (major == 11) {
    sms = {35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80};
    if (sub >= 1) sms.push_back(86);
    if (sub >= 4) sms.push_back(87);
    if (sub >= 8) sms.insert(sms.end(), {89, 90});
    return sms;
  }
  if (major == 12) {
    sms = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90};
    if (sub >= 8) sms.insert(sms.end(), {100, 101, 120});
    if (sub >= 9) sms.insert(sms.end(), {103, 121});
    return sms;
  }
  return sms;
}

std::span<const GpuModel> gpu_models() { return kGpus; }

std::optional<int> gpu_sm(std::string_view text) {
  static const std::regex capability(R"(^(\d{1,2})\.(\d)$)");
  static const std::regex sm(R"(^(?:sm_|compute_)?(\d{1,2})(\d)$)");
  const std::string s(text);
  std::smatch m;
  if (std::regex_match(s, m, capability)) return std::stoi(m[1]) * 10 + std::stoi(m[2]);
  if (std::regex_match(s, m, sm)) return std::stoi(m[1]) * 10 + std::stoi(m[2]);
  const std::string wanted = normalize_gpu(text);
  if (wanted.empty()) return std::nullopt;
  for (const GpuModel& g : kGpus)
    if (normalize_gpu(g.name) == wanted) return g.sm;
  return std::nullopt;
}

std::string capability_text(int sm) { return std::to_string(sm / 10) + "." + std::to_string(sm % 10); }

}  // namespace envpin::resolve

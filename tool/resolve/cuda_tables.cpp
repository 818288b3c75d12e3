// SPDX-License-Identifier: Apache-2.0
#include "resolve/cuda_tables.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <utility>

#include "diag/cursor.hpp"

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

// NVIDIA_REQUIRE_CUDA of each tag's Ubuntu base Dockerfile (runtime, devel and cudnn images
// inherit it). Source: NVIDIA's gitlab.com/nvidia/container-images/cuda as mirrored on GitHub in
// pranavmishra90/nvidia-container-images-cuda, dist/<tag>/ubuntu2204/base/Dockerfile (11.x in
// ubuntu2004, end-of-life tags under dist/end-of-life/) @ 60a1c892e6b9 (up to 13.0.0), @ f577282f0a3a
// (13.0.1, 13.0.2, 13.1.x, 13.2.1), @ f070c94843cc (13.0.3), @ 3c965d3a69b4 (13.2.0). A tag rebuilt
// later can carry other clauses (the 2023-11-08 commit 684356f0 removed the R418/R450 clauses of
// the 11.x tags still published): the lock pins the image by digest.
const std::vector<StartGate>& start_gates() {
  using enum GateBrands;
  static const std::vector<StartGate> table = {
      {"11.0.3", "11.0", {418}, tesla, false},
      {"11.1.1", "11.1", {418, 450}, tesla, false},
      {"11.2.2", "11.2", {418, 450}, tesla, false},
      {"11.4.3", "11.4", {}, none, true},
      {"11.5.2", "11.5", {470}, list_a, false},
      {"11.6.2", "11.6", {470}, list_a, false},
      {"11.7.1", "11.7", {470}, list_a, false},
      {"11.8.0", "11.8", {470}, list_a, false},
      {"12.0.1", "12.0", {470}, list_a, false},
      {"12.1.1", "12.1", {470, 525}, list_a, false},
      {"12.2.2", "12.2", {470, 525}, list_a, false},
      {"12.3.2", "12.3", {470, 525, 535}, list_a, false},
      {"12.4.1", "12.4", {470, 525, 535}, list_a, true},
      {"12.5.1", "12.5", {470, 535, 550}, list_b, true},
      {"12.6.3", "12.6", {470, 535, 550}, list_b, true},
      {"12.8.1", "12.8", {470, 535, 550, 560, 565}, list_b, true},
      {"12.9.1", "12.9", {535, 550, 560, 565, 570}, list_b, true},
      {"13.0.0", "13.0", {535, 550, 565, 570, 575}, list_b, true},
      {"13.0.1", "13.0", {535, 550, 565, 570, 575}, list_b, true},
      {"13.0.2", "13.0", {535, 550, 565, 570, 575}, list_b, true},
      {"13.0.3", "13.0", {535, 550, 565, 570, 575}, list_b, true},
      {"13.1.1", "13.1", {535, 550, 570, 575, 580}, list_b, true},
      {"13.1.2", "13.1", {535, 550, 560, 565, 570, 580}, list_b, true},
      {"13.2.0", "13.2", {535, 570, 580, 590}, list_b, true},
      {"13.2.1", "13.2", {535, 570, 580, 590}, list_b, true},
  };
  return table;
}

// Product -> compute capability. Source: NVIDIA "CUDA GPU Compute Capability",
// https://developer.nvidia.com/cuda-gpus and https://developer.nvidia.com/cuda-legacy-gpus
// (reference/cuda-facts.md §2.1). A10G (AWS) = 8.6 and GTX 16xx = 7.5 are from third-party
// catalogues (§8 item 5). Grace superchips (GH200, GB200, GB300, GB10) and Jetson modules
// only exist in arm64 hosts.
using enum GpuKind;
constexpr GpuModel kGpus[] = {
    // Blackwell
    {"GB10", 121, data_center, HostArch::arm64},
    // DGX Spark is GB10's system; nvidia-smi prints "NVIDIA GB10" (NVIDIA/k8s-device-plugin#1482).
    {"DGX Spark", 121, data_center, HostArch::arm64},
    {"RTX PRO 6000", 120, workstation},
    {"RTX PRO 5000", 120, workstation},
    {"RTX PRO 4500", 120, workstation},
    {"RTX PRO 4000", 120, workstation},
    {"RTX PRO 2000", 120, workstation},
    {"RTX 5090", 120, consumer},
    {"RTX 5080", 120, consumer},
    {"RTX 5070 Ti", 120, consumer},
    {"RTX 5070", 120, consumer},
    {"RTX 5060 Ti", 120, consumer},
    {"RTX 5060", 120, consumer},
    {"RTX 5050", 120, consumer},
    {"Jetson T5000", 110, jetson, HostArch::arm64},
    {"Jetson T4000", 110, jetson, HostArch::arm64},
    // The developer kit's and the series' names as NVIDIA markets them ("NVIDIA Jetson AGX Thor
    // Developer Kit", "Jetson Thor"), as users write them (pollen-robotics/microduck_rl#38).
    {"Jetson AGX Thor", 110, jetson, HostArch::arm64},
    {"Jetson Thor", 110, jetson, HostArch::arm64},
    // What the driver prints on Jetson AGX Thor: "NVIDIA Thor" (vllm-project/vllm#34470).
    {"Thor", 110, jetson, HostArch::arm64},
    {"GB300", 103, data_center, HostArch::arm64},
    {"B300", 103, data_center},
    {"GB200", 100, data_center, HostArch::arm64},
    {"B200", 100, data_center},
    // Hopper
    {"GH200", 90, data_center, HostArch::arm64},
    {"H200", 90, data_center},
    {"H100", 90, data_center},
    {"H20", 90, data_center},
    // China SKUs as nvidia-smi prints them: "NVIDIA H800" (ml4bio/Dense-Homolog-Retrieval#28),
    // "NVIDIA A800-SXM4-80GB" (dexmal/dexbotic#41), "L20-2-PCIE-48GB-..." (vllm-project/vllm#10652).
    {"H800", 90, data_center},
    // Ada Lovelace
    {"L40S", 89, data_center},
    {"L40", 89, data_center},
    {"L4", 89, data_center},
    {"L20", 89, data_center},
    {"RTX 6000 Ada", 89, workstation},
    {"RTX 5000 Ada", 89, workstation},
    {"RTX 4500 Ada", 89, workstation},
    {"RTX 4000 Ada", 89, workstation},
    {"RTX 2000 Ada", 89, workstation},
    {"RTX 4090", 89, consumer},
    {"RTX 4080", 89, consumer},
    {"RTX 4070 Ti", 89, consumer},
    {"RTX 4070", 89, consumer},
    {"RTX 4060 Ti", 89, consumer},
    {"RTX 4060", 89, consumer},
    {"RTX 4050", 89, consumer},
    // Ampere
    {"Jetson AGX Orin", 87, jetson, HostArch::arm64},
    {"Jetson Orin NX", 87, jetson, HostArch::arm64},
    {"Jetson Orin Nano", 87, jetson, HostArch::arm64},
    {"Jetson Orin", 87, jetson, HostArch::arm64},
    // What nvidia-smi prints on JetPack 6: "Orin (nvgpu)".
    {"Orin", 87, jetson, HostArch::arm64},
    {"A40", 86, data_center},
    {"A10G", 86, data_center},
    {"A10", 86, data_center},
    {"A16", 86, data_center},
    {"A2", 86, data_center},
    {"RTX A6000", 86, workstation},
    {"RTX A5000", 86, workstation},
    {"RTX A4000", 86, workstation},
    {"RTX A3000", 86, workstation},
    {"RTX A2000", 86, workstation},
    {"RTX 3090", 86, consumer},
    {"RTX 3080", 86, consumer},
    {"RTX 3070", 86, consumer},
    {"RTX 3060", 86, consumer},
    {"RTX 3050", 86, consumer},
    {"A100", 80, data_center},
    {"A30", 80, data_center},
    {"A800", 80, data_center},
    // Turing
    {"T4", 75, data_center},
    {"Quadro RTX 8000", 75, workstation},
    {"Quadro RTX 6000", 75, workstation},
    {"Quadro RTX 5000", 75, workstation},
    {"Quadro RTX 4000", 75, workstation},
    {"T1000", 75, workstation},
    {"T600", 75, workstation},
    {"T400", 75, workstation},
    {"RTX 2080 Ti", 75, consumer},
    {"RTX 2080", 75, consumer},
    {"RTX 2070", 75, consumer},
    {"RTX 2060", 75, consumer},
    {"GTX 1660", 75, consumer},
    {"GTX 1650", 75, consumer},
    // Volta
    {"Jetson AGX Xavier", 72, jetson, HostArch::arm64},
    {"Jetson Xavier NX", 72, jetson, HostArch::arm64},
    {"V100", 70, data_center},
    {"Quadro GV100", 70, workstation},
    {"TITAN V", 70, consumer},
    // Pascal
    {"Jetson TX2", 62, jetson, HostArch::arm64},
    {"P40", 61, data_center},
    {"P4", 61, data_center},
    {"TITAN Xp", 61, consumer},
    {"GTX 1080 Ti", 61, consumer},
    {"GTX 1080", 61, consumer},
    {"GTX 1070", 61, consumer},
    {"GTX 1060", 61, consumer},
    {"GTX 1050", 61, consumer},
    {"P100", 60, data_center},
    {"Quadro GP100", 60, workstation},
    // Maxwell, Kepler
    {"Jetson Nano", 53, jetson, HostArch::arm64},
    {"M60", 52, data_center},
    {"M40", 52, data_center},
    {"GTX 980", 52, consumer},
    {"GTX 970", 52, consumer},
    {"K80", 37, data_center},
    {"K40", 35, data_center},
};

std::string compact(std::string s) {
  std::erase(s, ' ');
  return s;
}

// Packaged Linux driver per toolkit release. Source: CUDA 13.2 Update 2 release notes,
// Table 3 "CUDA Toolkit and Corresponding Driver Versions",
// https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/ (cuda-facts.md §1.1).
// "Update N" rows are written as the patch release they name.
// The 10.x rows (torch 1.x wheels bring CUDA 10.1 and 10.2 runtimes) are from the same table
// of the CUDA 11.0 release notes ("CUDA 10.1 (10.1.105 general release, and updates) >= 418.39"),
// https://docs.nvidia.com/cuda/archive/11.0/cuda-toolkit-release-notes/.
constexpr ToolkitDriver kToolkitDrivers[] = {
    {"10.0.130", "410.48"},  {"10.1.105", "418.39"},  {"10.1.243", "418.39"},   {"10.2.89", "440.33"},
    {"11.0.1", "450.36.06"}, {"11.0.2", "450.51.05"}, {"11.0.3", "450.51.06"},  {"11.1.0", "455.23"},
    {"11.1.1", "455.32"},    {"11.2.0", "460.27.03"}, {"11.2.1", "460.32.03"},  {"11.2.2", "460.32.03"},
    {"11.3.0", "465.19.01"}, {"11.3.1", "465.19.01"}, {"11.4.0", "470.42.01"},  {"11.4.1", "470.57.02"},
    {"11.4.2", "470.57.02"}, {"11.4.3", "470.82.01"}, {"11.4.4", "470.82.01"},  {"11.5.0", "495.29.05"},
    {"11.5.1", "495.29.05"}, {"11.5.2", "495.29.05"}, {"11.6.0", "510.39.01"},  {"11.6.1", "510.47.03"},
    {"11.6.2", "510.47.03"}, {"11.7.0", "515.43.04"}, {"11.7.1", "515.48.07"},  {"11.8.0", "520.61.05"},
    {"12.0.0", "525.60.13"}, {"12.0.1", "525.85.12"}, {"12.1.0", "530.30.02"},  {"12.1.1", "530.30.02"},
    {"12.2.0", "535.54.03"}, {"12.2.1", "535.86.09"}, {"12.2.2", "535.104.05"}, {"12.3.0", "545.23.06"},
    {"12.3.1", "545.23.08"}, {"12.4.0", "550.54.14"}, {"12.4.1", "550.54.15"},  {"12.5.0", "555.42.02"},
    {"12.5.1", "555.42.06"}, {"12.6.0", "560.28.03"}, {"12.6.1", "560.35.03"},  {"12.6.2", "560.35.03"},
    {"12.6.3", "560.35.05"}, {"12.8.0", "570.26"},    {"12.8.1", "570.124.06"}, {"12.9.0", "575.51.03"},
    {"12.9.1", "575.57.08"}, {"13.0.0", "580.65.06"}, {"13.0.1", "580.82.07"},  {"13.0.2", "580.95.05"},
    {"13.1.0", "590.44.01"}, {"13.1.1", "590.48.01"}, {"13.2.0", "595.45.04"},  {"13.2.1", "595.58.03"},
    {"13.2.2", "595.71.05"},
};

// Minor-version compatibility floors. Source: same release notes, Table 2, and
// https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
// (cuda-facts.md §1.2): 11.x needs R450 at 450.80.02, 12.x 525.60.13, 13.x R580.
constexpr MinorCompat kMinorCompat[] = {
    {11, "450.80.02"},
    {12, "525.60.13"},
    {13, "580"},
};

// PyTorch wheels. Variants per release: pytorch/pytorch RELEASE.md "Release Compatibility
// Matrix", cross-checked with replicate/cog pkg/config/torch_compatibility.json (Aug 2026)
// (cuda-facts.md §3.2). SASS/PTX per variant: TORCH_CUDA_ARCH_LIST in
// pytorch/builder manywheel/build_cuda.sh and pytorch/pytorch .ci/manywheel/build_cuda.sh,
// and cog's measured torch._C._cuda_getArchFlags() (§3.3). aarch64 lists only where verified.
// Python range per release: the same matrix's Python column, experimental versions included.
const std::vector<TorchRelease>& torch_table() {
  const std::vector<int> kepler_to_ampere = {37, 50, 60, 70, 75, 80, 86};
  const std::vector<int> kepler_to_hopper = {37, 50, 60, 70, 75, 80, 86, 90};
  const std::vector<int> maxwell_to_hopper = {50, 60, 70, 75, 80, 86, 90};
  const std::vector<int> volta_to_blackwell = {70, 75, 80, 86, 90, 100, 120};
  const std::vector<int> turing_to_blackwell = {75, 80, 86, 90, 100, 120};
  const std::vector<int> arm64_cu126 = {80, 90};
  const std::vector<int> arm64_cu13 = {80, 90, 100, 110, 120};
  auto variant = [](std::string_view tag, std::string_view cuda, std::vector<int> sass, int ptx = 0,
                    std::vector<int> sass_arm64 = {}, int ptx_arm64 = 0) {
    return TorchVariant{tag, cuda, std::move(sass), ptx, std::move(sass_arm64), ptx_arm64};
  };
  // torch 1.8-1.13 (issue 33): variants and Python ranges from pytorch.org's previous-versions
  // page (pytorch/pytorch.github.io _get_started/previous-versions.md @ 04862e37), pip's listing of
  // download.pytorch.org/whl/torch_stable.html pasted in public issues, and RELEASE.md's matrix for
  // 1.12/1.13; arch lists from pytorch/builder manywheel/build_cuda.sh on each release branch
  // (lts/release/1.8 @ 7e44027e ... release/1.13 @ d08f2264), measured where issues paste
  // torch.cuda.get_arch_list(): 1.9.0+cu111 ['sm_37' ... 'sm_86'] (lucasxlu/ComboLoss#3), 1.13.1+cu117
  // on H100 "sm_90 is not compatible ... supports sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86"
  // (pytorch/pytorch#90761). cu101/cu102 dropped sm_75 to fit PyPI's size limit (builder, Feb 2021).
  // 1.8.0's cu111 was built with the pruned 5.0;7.0;8.0;8.6 (builder on release day; a nightly of
  // the day before reported exactly those, pytorch/pytorch#53164).
  const std::vector<int> kepler_to_volta = {37, 50, 60, 70};
  // torch 1.7 (Oct and Dec 2020): cu101, cu102 (PyPI's build) and cu110, CPython 3.6-3.8 (1.7.0)
  // and 3.6-3.9 (1.7.1), from the previous-versions page above; arch lists from pytorch/builder
  // manywheel/build.sh as of the 1.7.0 release (0b54a237, 2020-10-26): "3.7;5.0;6.0;7.0", plus
  // "7.5;8.0" for 11.x and "7.5" for 10.x. Its cu92 wheels are not rows: no nvidia/cuda image
  // envpin chooses serves CUDA 9.2 (a +cu92 pin is refused for that).
  const TorchVariant cu101_17 = variant("cu101", "10.1", {37, 50, 60, 70, 75});
  const TorchVariant cu102_17 = variant("cu102", "10.2", {37, 50, 60, 70, 75});
  const TorchVariant cu110_17 = variant("cu110", "11.0", {37, 50, 60, 70, 75, 80});
  const TorchVariant cu101 = variant("cu101", "10.1", kepler_to_volta);
  const TorchVariant cu102 = variant("cu102", "10.2", kepler_to_volta);
  const TorchVariant cu111_180 = variant("cu111", "11.1", {50, 70, 80, 86});
  const TorchVariant cu111 = variant("cu111", "11.1", kepler_to_ampere);
  const TorchVariant cu113 = variant("cu113", "11.3", kepler_to_ampere);
  const TorchVariant cu115 = variant("cu115", "11.5", kepler_to_ampere);
  const TorchVariant cu116 = variant("cu116", "11.6", kepler_to_ampere);
  const TorchVariant cu117 = variant("cu117", "11.7", kepler_to_ampere);
  const TorchVariant cu118 = variant("cu118", "11.8", kepler_to_hopper);
  const TorchVariant cu121 = variant("cu121", "12.1", maxwell_to_hopper);
  // aarch64 (linux/arm64: GH200, GB200, DGX Spark) CUDA wheels per release, from a scrape of
  // download.pytorch.org/whl/cuXXX/torch/ (PozzettiAndrea/cuda-wheels matrix/matrix.json @ 8b3a9fd9)
  // cross-checked with index copies and pins in public issues: 2.4/2.5 cu124 (untagged
  // torch-2.5.1-cp310-cp310-linux_aarch64.whl, astral-sh/uv#10843), 2.6 cu126 only, 2.7 cu128 only
  // (astral-sh/uv#13195), 2.8 cu129 only ("torch==2.8.0+cu128 has no wheels with a matching platform
  // tag" on a GB10, OpenRAL/openral#88), every variant from 2.9 on (pytorch/pytorch#162664). Arch
  // lists from .ci/aarch64_linux/aarch64_ci_build.sh of each release: 12.4 and 12.6 "9.0", 12.8
  // "9.0;10.0;12.0" (2.7), 12.9 "8.0;9.0;10.0;12.0" (2.8; sm_80 not certain there, left out), and
  // from 2.9 12.6 "8.0;9.0", 12.8 "8.0;9.0;10.0;12.0" (measured 2.9.1+cu128 ['sm_80', 'sm_90',
  // 'sm_100', 'sm_120'], OpenRAL/openral#167), 13.0 "8.0;9.0;10.0;11.0;12.0+PTX".
  const std::vector<int> hopper = {90};
  const TorchVariant cu124 = variant("cu124", "12.4", maxwell_to_hopper);
  const TorchVariant cu124_arm = variant("cu124", "12.4", maxwell_to_hopper, 0, hopper);
  const TorchVariant cu126_26 = variant("cu126", "12.6", maxwell_to_hopper, 0, hopper);
  const TorchVariant cu126_x86 = variant("cu126", "12.6", maxwell_to_hopper);
  const TorchVariant cu126 = variant("cu126", "12.6", maxwell_to_hopper, 0, arm64_cu126);
  const TorchVariant cu128_27 = variant("cu128", "12.8", turing_to_blackwell, 120, {90, 100, 120});
  const TorchVariant cu128_28 = variant("cu128", "12.8", volta_to_blackwell);
  const TorchVariant cu128 = variant("cu128", "12.8", volta_to_blackwell, 0, {80, 90, 100, 120});
  TorchVariant cu129 = variant("cu129", "12.9", volta_to_blackwell, 120, {90, 100, 120});
  cu129.unsettled_arm64 = 80;
  cu129.unsettled_why =
      "pytorch/pytorch#157843 added sm_80 to 12.9's aarch64 list on 2025-07-09, after 2.8's branch cut "
      "(2025-06-24, #156745), and no get_arch_list() of 2.8.0+cu129 on aarch64 is published";
  // 2.11 built cu128 without Volta: its release compatibility matrix (pytorch/pytorch RELEASE.md,
  // PR #175253, after RFC #172352) lists "12.8.1: Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0),
  // Blackwell(10.0, 12.0)"; cu126 keeps 7.0. Measured: torch.cuda.get_arch_list() of 2.11.0+cu128
  // is sm_75 ... sm_120, of 2.11.0+cu126 sm_50 ... sm_90, of 2.10.0+cu128 sm_70 ... sm_120
  // (pytorch/pytorch#182250). A V100 fleet on 2.11 takes cu126, a V100 + sm_120 fleet torch 2.10.
  // 2.9.0 and 2.9.1 were also published on the cu129 index, for x86_64 and aarch64, though the 2.9
  // release matrix names 12.6, 12.8 and 13.0 only (torch-2.9.1+cu129-...-manylinux_2_28_aarch64.whl
  // listed in astral-sh/uv#17380; 2.9.0+cu129 pinned in public projects). Its lists are 2.9's build
  // scripts' for 12.9 (.ci/manywheel/build_cuda.sh: as 12.8; aarch64 8.0;9.0;10.0;12.0 since
  // pytorch/pytorch#157843), without PTX: not measured on a released wheel, and release wheels
  // drop +PTX (#157516).
  TorchVariant cu129_29 = variant("cu129", "12.9", volta_to_blackwell, 0, {80, 90, 100, 120});
  cu129_29.pinned_only = true;
  const TorchVariant cu128_211 = variant("cu128", "12.8", turing_to_blackwell, 0, {80, 90, 100, 120});
  // The record conflicts on cu130/cu132's PTX: RELEASE.md lists "12.0+PTX", but release wheels were
  // built without it up to 2.12.1 (pytorch/pytorch#175567 for 2.11, #188914), and 2.13.0 cu130 had it
  // by mistake (#188925). It changes no verdict today: every GPU in gpu_models() past sm_120 is a
  // 12.x part the sm_120 cubin runs on. Kept as RELEASE.md says until a wheel is measured.
  const TorchVariant cu130 = variant("cu130", "13.0", turing_to_blackwell, 120, arm64_cu13, 120);
  const TorchVariant cu132 = variant("cu132", "13.2", turing_to_blackwell, 120, arm64_cu13, 120);
  static const std::vector<TorchRelease> table = {
      {"1.7.0", {cu101_17, cu102_17, cu110_17}, "3.6", "3.8", {"cu92"}},
      {"1.7", {cu101_17, cu102_17, cu110_17}, "3.6", "3.9", {"cu92"}},
      {"1.8.0", {cu101, cu102, cu111_180}, "3.6", "3.9"},
      {"1.8", {cu101, cu102, cu111}, "3.6", "3.9"},
      {"1.9", {cu102, cu111}, "3.6", "3.9"},
      {"1.10", {cu102, cu111, cu113}, "3.6", "3.9"},
      {"1.11", {cu102, cu113, cu115}, "3.7", "3.10"},
      {"1.12", {cu102, cu113, cu116}, "3.7", "3.10"},
      {"1.13", {cu116, cu117}, "3.7", "3.10"},
      {"2.0", {cu117, cu118}, "3.8", "3.11"},
      {"2.1", {cu118, cu121}, "3.8", "3.11"},
      {"2.2", {cu118, cu121}, "3.8", "3.12"},
      {"2.3", {cu118, cu121}, "3.8", "3.12"},
      {"2.4", {cu118, cu121, cu124_arm}, "3.8", "3.12"},
      {"2.5", {cu118, cu121, cu124_arm}, "3.9", "3.13"},
      {"2.6", {cu118, cu124, cu126_26}, "3.9", "3.13"},
      {"2.7", {cu118, cu126_x86, cu128_27}, "3.9", "3.13"},
      {"2.8", {cu126_x86, cu128_28, cu129}, "3.9", "3.13"},
      {"2.9", {cu126, cu128, cu129_29, cu130}, "3.10", "3.14"},
      {"2.10", {cu126, cu128, cu130}, "3.10", "3.14"},
      {"2.11", {cu126, cu128_211, cu130}, "3.10", "3.14"},
      {"2.12", {cu126, cu130, cu132}, "3.10", "3.14"},
      {"2.13", {cu126, cu130, cu132}, "3.10", "3.15"},
      {"2.14", {cu126, cu130, cu132}, "3.10", "3.15"},
  };
  return table;
}

std::pair<int, int> minor_numbers(std::string_view minor) {
  const auto dot = minor.find('.');
  const std::string major_text(minor.substr(0, dot));
  const std::string rest(dot == std::string_view::npos ? "0"
                                                       : minor.substr(dot + 1, minor.find('.', dot + 1) - dot - 1));
  // Saturating: a hostile "--cuda 99999999999.0" is a version with no image, not an exception.
  const auto number = [](const std::string& digits) {
    int value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    (void)end;
    return ec == std::errc::result_out_of_range ? std::numeric_limits<int>::max() : value;
  };
  return {number(major_text), number(rest)};
}

}  // namespace

// "NVIDIA GeForce RTX 4090" -> "rtx 4090": lowercase words of letters and digits, single
// spaces, no vendor words.
std::string gpu_words(std::string_view s) {
  std::string out;
  bool gap = false;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (gap && !out.empty()) out += ' ';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      gap = false;
    } else {
      gap = true;
    }
  }
  // "HGX GB200" is what collect_env printed on a GB200 system (NVIDIA/nccl#1769).
  for (std::string_view vendor : {"nvidia ", "geforce ", "tesla ", "hgx "})
    if (out.starts_with(vendor)) out.erase(0, vendor.size());
  return out;
}

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
  // CUDA Features Archive (cuda-facts.md §2.3): 12.0 removed sm_35/37, 12.8 added
  // sm_100/101/120, 12.9 sm_103/121, 13.0 removed sm_50-72 and renamed sm_101 to sm_110.
  const auto [major, sub] = minor_numbers(minor);
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
    std::sort(sms.begin(), sms.end());
    return sms;
  }
  return sms;
}

std::optional<DriverVersion> parse_driver(std::string_view text) {
  // MAJOR[.MINOR[.PATCH]]: 2-4 digits, then up to two parts of 1-3 digits.
  diag::Cursor c{text};
  DriverVersion v{};
  const auto major = c.digits(2, 4);
  if (!major) return std::nullopt;
  v[0] = *diag::to_int(*major);
  for (std::size_t i = 1; i < 3 && c.eat("."); ++i) {
    const auto part = c.digits(1, 3);
    if (!part) return std::nullopt;
    v[i] = *diag::to_int(*part);
  }
  if (!c.done()) return std::nullopt;
  return v;
}

std::string driver_text(const DriverVersion& v) {
  std::string out = std::to_string(v[0]);
  if (v[1] || v[2]) out += "." + std::to_string(v[1]);
  if (v[2]) out += (v[2] < 10 ? ".0" : ".") + std::to_string(v[2]);
  return out;
}

std::span<const ToolkitDriver> toolkit_drivers() { return kToolkitDrivers; }

std::string packaged_driver(std::string_view toolkit) {
  const auto [major, sub] = minor_numbers(toolkit);
  const std::string prefix = std::to_string(major) + "." + std::to_string(sub) + ".";
  const auto last_dot = toolkit.rfind('.');
  const int patch = toolkit.find('.') == last_dot ? 99 : std::stoi(std::string(toolkit.substr(last_dot + 1)));
  std::string best;
  for (const ToolkitDriver& row : kToolkitDrivers) {
    if (!row.toolkit.starts_with(prefix)) continue;
    if (std::stoi(std::string(row.toolkit.substr(prefix.size()))) <= patch) best = row.linux_driver;
  }
  return best;
}

std::string first_driver_reporting(std::string_view minor) {
  const std::string prefix = std::string(minor) + ".";
  for (const ToolkitDriver& row : kToolkitDrivers)
    if (row.toolkit.starts_with(prefix)) return std::string(row.linux_driver);
  return {};
}

const StartGate* find_start_gate(std::string_view tag) {
  for (const StartGate& g : start_gates())
    if (g.tag == tag) return &g;
  return nullptr;
}

// The runtime (libnvidia-container src/cli/dsl.c) ORs the space-separated clauses and ANDs the
// comma-separated conditions in one; a brand matches NVML's brand name case-insensitively
// (src/driver.c, since libnvidia-container 1.9); driver>=R,driver<R+1 is branch R exactly.
bool gate_admits(const StartGate& gate, std::string_view brand, int branch, bool arm64) {
  if (arm64 && !gate.arm64_same) return false;
  if (std::find(gate.branches.begin(), gate.branches.end(), branch) == gate.branches.end()) return false;
  static constexpr std::string_view kListA[] = {"tesla",      "unknown", "nvidia",    "nvidiartx", "geforce",
                                                "geforcertx", "quadro",  "quadrortx", "titan",     "titanrtx"};
  static constexpr std::string_view kListB[] = {"unknown",   "grid",  "tesla", "nvidia", "quadro", "quadrortx",
                                                "nvidiartx", "vapps", "vpc",   "vcs",    "vws",    "cloudgaming"};
  switch (gate.brands) {
    case GateBrands::none:
      return false;
    case GateBrands::tesla:
      return brand == "tesla";
    case GateBrands::list_a:
      return std::find(std::begin(kListA), std::end(kListA), brand) != std::end(kListA);
    case GateBrands::list_b:
      return std::find(std::begin(kListB), std::end(kListB), brand) != std::end(kListB);
  }
  return false;
}

// NVML's CUDA driver version (what the runtime compares cuda>=X with) is the newest CUDA the
// driver runs in full; a driver reports a line from that line's first release on (Table 3).
std::string cuda_reported_by(const DriverVersion& driver) {
  std::string best;
  for (const ToolkitDriver& row : kToolkitDrivers) {
    const std::string_view minor = row.toolkit.substr(0, row.toolkit.rfind('.'));
    if (first_driver_reporting(minor) == row.linux_driver && driver >= *parse_driver(row.linux_driver))
      best = std::string(minor);
  }
  return best;
}

std::span<const MinorCompat> minor_compat_floors() { return kMinorCompat; }

std::string minor_compat_floor(int major) {
  for (const MinorCompat& row : kMinorCompat)
    if (row.major == major) return std::string(row.min_driver);
  return {};
}

std::span<const GpuModel> gpu_models() { return kGpus; }

const GpuModel* find_gpu(std::string_view name) {
  const std::string words = gpu_words(name);
  if (words.empty()) return nullptr;
  for (const GpuModel& g : kGpus)
    if (compact(gpu_words(g.name)) == compact(words)) return &g;
  // nvidia-smi names carry a form factor and memory: "A100-SXM4-80GB", "H100 80GB HBM3",
  // "RTX 6000 Ada Generation". Take the longest product the name starts with as a whole word:
  // "A10" matches neither "A100" nor the typo "A10O" (an A100 by its look, an A10 by a prefix).
  const GpuModel* best = nullptr;
  std::size_t best_len = 0;
  for (const GpuModel& g : kGpus) {
    const std::string n = gpu_words(g.name);
    if (n.size() <= best_len || !words.starts_with(n)) continue;
    if (words.size() > n.size() && words[n.size()] != ' ') continue;
    best = &g;
    best_len = n.size();
  }
  // What follows the product is a form factor or memory size, never another GPU: "A100 V100"
  // (or "A100,V100") is two GPUs, not an A100.
  if (best && best_len < words.size()) {
    const std::string rest = words.substr(best_len + 1);
    const std::string first = rest.substr(0, rest.find(' '));
    for (const GpuModel& g : kGpus) {
      const std::string n = gpu_words(g.name);
      if (rest == n || rest.starts_with(n + " ") || first == compact(n)) return nullptr;
    }
  }
  return best;
}

// NVML's brand, as nvidia-smi -q prints it under "Product Brand" in public reports: GeForce for
// every GeForce (RTX 3090 on 520.61.05, RTX 4090, RTX 5090; NVML marks GEFORCE_RTX "Unused"),
// Titan for TITAN RTX, "NVIDIA RTX" for RTX A6000 and RTX 6000 Ada (mrirecon/bart#323), NVIDIA for
// data-center GPUs on current drivers (A100 on 470.103.01, NVIDIA/CUDALibrarySamples#104; T4,
// NVIDIA/nvidia-container-toolkit#188; H100, L40S, RTX PRO 6000 Blackwell Server Edition), Tesla
// for them on old drivers (V100 on 390.30, NVIDIA/nvidia-docker#738; before R470 the branch a
// data-center GPU first reported NVIDIA on is not known, so Tesla is assumed, as the 11.0-11.2
// tags, which list only tesla, were built for). Quadro boards are quadro or quadrortx: both are
// in every list that names either.
std::string_view gpu_brand(const GpuModel& g, int branch) {
  const std::string words = gpu_words(g.name);
  switch (g.kind) {
    case GpuKind::consumer:
      return words.starts_with("titan") ? "titan" : "geforce";
    case GpuKind::workstation:
      return words.starts_with("quadro rtx") ? "quadrortx" : words.starts_with("quadro") ? "quadro" : "nvidiartx";
    case GpuKind::data_center:
    case GpuKind::jetson:
      break;
  }
  return branch < 470 ? "tesla" : "nvidia";
}

std::optional<int> gpu_sm(std::string_view text) {
  {  // a compute capability, "9.0" or "12.0"
    diag::Cursor c{text};
    const auto major = c.digits(1, 2);
    if (major && c.eat(".")) {
      const auto minor = c.digits(1, 1);
      if (minor && c.done()) return *diag::to_int(*major) * 10 + *diag::to_int(*minor);
    }
  }
  {  // an arch name, "sm_90", "compute_120" or "90": the last digit is the minor version
    diag::Cursor c{text};
    if (!c.eat("sm_")) c.eat("compute_");
    const auto digits = c.digits(2, 3);
    if (digits && c.done()) return *diag::to_int(*digits);
  }
  if (const GpuModel* g = find_gpu(text)) return g->sm;
  return std::nullopt;
}

std::string capability_text(int sm) { return std::to_string(sm / 10) + "." + std::to_string(sm % 10); }

std::string_view architecture_name(int sm) {
  // Source: NVIDIA/cuda-samples Common/helper_cuda.h _ConvertSMVer2ArchName (cuda-facts.md §2.2).
  if (sm >= 100) return "Blackwell";
  if (sm == 90) return "Hopper";
  if (sm == 89) return "Ada Lovelace";
  if (sm >= 80) return "Ampere";
  if (sm == 75) return "Turing";
  if (sm >= 70) return "Volta";
  if (sm >= 60) return "Pascal";
  if (sm >= 50) return "Maxwell";
  if (sm >= 30) return "Kepler";
  return "unknown";
}

std::span<const TorchRelease> torch_releases() { return torch_table(); }

const TorchRelease* find_torch_release(std::string_view version) {
  const auto first_dot = version.find('.');
  if (first_dot == std::string_view::npos) return nullptr;
  const auto second_dot = version.find('.', first_dot + 1);
  const std::string_view minor = version.substr(0, second_dot);
  // A row for the exact release (1.8.0, built unlike 1.8.1) before the row of its minor.
  for (const TorchRelease& r : torch_table())
    if (r.minor == version) return &r;
  for (const TorchRelease& r : torch_table())
    if (r.minor == minor) return &r;
  return nullptr;
}

const TorchVariant* find_torch_variant(std::string_view version, std::string_view cuda) {
  const TorchRelease* release = find_torch_release(version.substr(0, version.find('+')));
  if (!release || cuda.empty()) return nullptr;
  std::string tag = "cu" + std::string(cuda);
  std::erase(tag, '.');
  for (const TorchVariant& v : release->variants)
    if (v.tag == tag) return &v;
  return nullptr;
}

bool kernels_run_on(const std::vector<int>& sass, int ptx, int sm) {
  for (int a : sass)
    if (a / 10 == sm / 10 && a <= sm) return true;
  return ptx != 0 && ptx <= sm;
}

std::string torch_index_url(std::string_view variant_tag) {
  // Source: https://pytorch.org/get-started/previous-versions (cuda-facts.md §3.1).
  return "https://download.pytorch.org/whl/" + std::string(variant_tag);
}

}  // namespace envpin::resolve

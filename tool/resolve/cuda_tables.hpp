// SPDX-License-Identifier: Apache-2.0
// The facts envpin's CUDA policy is made of. Pure data with lookups; every table cites its
// source in cuda_tables.cpp (from ../shared/reference/cuda-facts.md).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::resolve {

// One CUDA minor release line as published in nvidia/cuda.
struct CudaRelease {
  std::string_view minor;                 // "12.4"
  std::vector<std::string_view> patches;  // tags still published, oldest first
  std::vector<std::string_view> ubuntu;   // "22.04", ...
  std::string_view cudnn_part;            // "cudnn8", "cudnn9" or "cudnn"
};

// Every release line envpin can map to an nvidia/cuda tag, oldest first.
std::span<const CudaRelease> cuda_releases();

// The release line for "12.4" or "12.4.1", or nullptr when there is none.
const CudaRelease* find_cuda_release(std::string_view version);

// Real SM targets (e.g. 90 for sm_90) that nvcc of toolkit `minor` can compile.
std::vector<int> compilable_sms(std::string_view minor);

// --- Drivers ---------------------------------------------------------------------------

// A driver version as numbers: "535.104.05" -> {535, 104, 5}. Missing parts are 0.
using DriverVersion = std::array<int, 3>;
std::optional<DriverVersion> parse_driver(std::string_view text);
std::string driver_text(const DriverVersion& v);  // "535.104.05" keeps two-digit parts as NVIDIA writes them

struct ToolkitDriver {
  std::string_view toolkit;       // "12.4.1"
  std::string_view linux_driver;  // the driver packaged with it, "550.54.15"
};
// The packaged (full-compatibility) Linux driver of every toolkit release.
std::span<const ToolkitDriver> toolkit_drivers();
// The packaged driver for "12.4.1": the exact row, else the newest row of that minor at or
// below the patch. Empty when the minor is unknown.
std::string packaged_driver(std::string_view toolkit);

// The first driver that reports CUDA `minor` ("12.9") as its "CUDA Version": the packaged driver
// of that line's first release. Empty when the table has no such line.
std::string first_driver_reporting(std::string_view minor);

struct MinorCompat {
  int major;                    // CUDA major, e.g. 12
  std::string_view min_driver;  // lowest driver of any 12.y app under minor-version compatibility
};
std::span<const MinorCompat> minor_compat_floors();
// The minor-version-compatibility floor for CUDA `major`, or empty when there is none.
std::string minor_compat_floor(int major);

// --- The image's start gate ----------------------------------------------------------------

// Which GPU brands the brand=B,driver>=R,driver<R+1 clauses of a tag name (the same list for
// every branch of one tag). list_a: tesla unknown nvidia nvidiartx geforce geforcertx quadro
// quadrortx titan titanrtx; list_b: unknown grid tesla nvidia quadro quadrortx nvidiartx vapps vpc
// vcs vws cloudgaming (no GeForce, no TITAN).
enum class GateBrands { none, tesla, list_a, list_b };

// An nvidia/cuda tag's NVIDIA_REQUIRE_CUDA: "cuda>=X" OR one of its brand-and-branch clauses.
struct StartGate {
  std::string_view tag;       // "12.8.1"
  std::string_view cuda;      // "12.8": the driver's own CUDA version must be at least this
  std::vector<int> branches;  // R of each brand=...,driver>=R,driver<R+1 clause
  GateBrands brands;
  bool arm64_same;  // the sbsa (arm64) image has the same clauses; false: a bare cuda>=X
};

// The gate of tag "12.8.1", or nullptr when envpin has no row for it.
const StartGate* find_start_gate(std::string_view tag);
// Whether the gate's clauses let a GPU of brand `brand` (the runtime's word: "geforce", "nvidia")
// through on driver branch `branch`, for an image of that platform.
bool gate_admits(const StartGate& gate, std::string_view brand, int branch, bool arm64);
// "12.2" for driver 535.104.05: the newest CUDA whose first driver is at or below `driver`, as
// NVML reports it to the container runtime. Empty below the table.
std::string cuda_reported_by(const DriverVersion& driver);

// --- GPUs ------------------------------------------------------------------------------

enum class GpuKind { data_center, workstation, consumer, jetson };
enum class HostArch { any, arm64 };  // arm64: only ever in an arm64 host (Grace, Jetson)

struct GpuModel {
  std::string_view name;  // as NVIDIA markets it, e.g. "H100"
  int sm;                 // compute capability times ten, e.g. 90
  GpuKind kind;
  HostArch host = HostArch::any;
};

// Product name -> compute capability.
std::span<const GpuModel> gpu_models();

// A GPU name as find_gpu compares it: lowercase words of letters and digits, single spaces,
// without a leading "nvidia", "geforce" or "tesla" ("NVIDIA A100-SXM4-80GB" -> "a100 sxm4 80gb").
std::string gpu_words(std::string_view name);

// A product name ("H100", "nvidia a100", "NVIDIA A100-SXM4-80GB" as nvidia-smi prints it),
// or nullptr when unknown. Capabilities are not products: see gpu_sm.
const GpuModel* find_gpu(std::string_view name);

// The brand NVML reports for a GPU, in the NVIDIA container runtime's word ("geforce", "titan",
// "nvidiartx", "quadro", "quadrortx", "nvidia", "tesla"), with driver branch `branch`.
std::string_view gpu_brand(const GpuModel& g, int branch);

// Looks up a product name or a capability ("9.0", "sm_90"). Returns the SM number, or
// nullopt when unknown.
std::optional<int> gpu_sm(std::string_view name_or_capability);

// "9.0" for 90, "12.0" for 120.
std::string capability_text(int sm);

// "Hopper" for 90.
std::string_view architecture_name(int sm);

// --- PyTorch wheels --------------------------------------------------------------------

struct TorchVariant {
  std::string_view tag;         // "cu124"
  std::string_view cuda;        // "12.4"
  std::vector<int> sass;        // cubins in the x86_64 wheel, ascending
  int ptx = 0;                  // compute_XX PTX in the x86_64 wheel, 0 for none
  std::vector<int> sass_arm64;  // cubins in the aarch64 wheel; empty: no verified aarch64 wheel
  int ptx_arm64 = 0;
  // Published, but outside the release's matrix and not measured (2.9's cu129): taken when a pin
  // names it, never chosen or proposed in its place.
  bool pinned_only = false;
  // An arch whose kernels in the aarch64 wheel the public record does not settle (0: none), left
  // out of sass_arm64, and why: a refusal for that GPU says so instead of claiming it.
  int unsettled_arm64 = 0;
  std::string_view unsettled_why = {};
};

struct TorchRelease {
  std::string_view minor;              // "2.4", or a release built unlike its minor's others ("1.8.0")
  std::vector<TorchVariant> variants;  // oldest CUDA first
  std::string_view python_min;         // oldest CPython minor with wheels, "3.8"
  std::string_view python_max;         // newest, experimental builds included, "3.12"
  // Variants it had that envpin cannot serve (no nvidia/cuda image of their CUDA): "cu92".
  std::vector<std::string_view> unserved = {};
};

std::span<const TorchRelease> torch_releases();
// The release for "2.4" or "2.4.1", or nullptr when envpin has no row for it.
const TorchRelease* find_torch_release(std::string_view version);
// "https://download.pytorch.org/whl/cu124"
std::string torch_index_url(std::string_view variant_tag);

// The official wheel of torch `version` ("2.4.1" or "2.4.1+cu124") built with CUDA `cuda`
// ("12.4"), or nullptr when envpin's table has no such variant.
const TorchVariant* find_torch_variant(std::string_view version, std::string_view cuda);

// Whether code with cubins for `sass` and PTX for `ptx` (0: none) runs on a GPU of SM `sm`: a
// cubin runs on the same major at an equal or higher minor, PTX on any later GPU (Blackwell
// Compatibility Guide, cuda-facts.md §2.4).
bool kernels_run_on(const std::vector<int>& sass, int ptx, int sm);

}  // namespace envpin::resolve

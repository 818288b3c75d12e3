// SPDX-License-Identifier: Apache-2.0
// The CUDA decision on named scenarios: each expected verdict was worked out by hand from
// ../shared/reference/cuda-facts.md (driver Table 3/Table 2, SM ranges, torch wheel lists).
#include <gtest/gtest.h>

#include <sstream>

#include "resolve/cuda_policy.hpp"
#include "resolve/cuda_tables.hpp"

namespace envpin::resolve {
namespace {

// Builds a request as the command-line flags would.
class Req {
 public:
  Req& gpu(const std::string& g) {
    r_.gpus.push_back({g, {"--gpu", {}}});
    return *this;
  }
  Req& cuda(const std::string& v) {
    r_.cuda = {v, {"--cuda", {}}};
    return *this;
  }
  Req& driver(const std::string& v) {
    r_.driver = Input<std::string>{v, {"--driver", {}}};
    return *this;
  }
  Req& torch(const std::string& v) {
    r_.torch = Input<std::string>{v, {"--torch", {}}};
    return *this;
  }
  Req& torch_range(const std::string& v) {
    r_.torch_range = Input<std::string>{v, {"python.packages", diag::Location{"envpin.yaml", 8, 7}}};
    return *this;
  }
  Req& variant(const std::string& v) {
    r_.torch_variant = Input<std::string>{v, {"python.extra_index", diag::Location{"envpin.yaml", 9, 5}}};
    return *this;
  }
  Req& python(const std::string& v) {
    r_.python = Input<std::string>{v, {"python.version", diag::Location{"envpin.yaml", 7, 12}}};
    return *this;
  }
  Req& forward_compat() {
    r_.forward_compat = Input<bool>{true, {"cuda.forward_compat", diag::Location{"envpin.yaml", 6, 19}}};
    return *this;
  }
  Req& arm64() {
    r_.platforms.push_back({manifest::Arch::arm64, {"--platform", {}}});
    return *this;
  }
  Req& amd64() {
    r_.platforms.push_back({manifest::Arch::amd64, {"--platform", {}}});
    return *this;
  }
  Req& os(const std::string& v) {
    r_.ubuntu = Input<std::string>{v, {"--os", {}}};
    return *this;
  }
  const CudaRequest& get() const { return r_; }

 private:
  CudaRequest r_;
};

const char* fit(DriverFit f) {
  return f == DriverFit::full            ? "full"
         : f == DriverFit::minor_version ? "minor-version"
         : f == DriverFit::forward       ? "forward"
                                         : "unknown";
}

// One line per decision: toolkit, image, CMake archs, torch variant, driver fit, warning count.
std::string verdict(const Req& r) {
  try {
    const CudaDecision d = decide_cuda(r.get());
    std::ostringstream out;
    out << d.toolkit << " " << d.base_image.substr(d.base_image.find(':') + 1) << " [" << d.cmake_architectures
        << "] torch=" << (d.torch ? d.torch->variant : "-") << " driver>=" << d.driver_packaged << " "
        << fit(d.driver_fit) << " warnings=" << d.warnings.size();
    return out.str();
  } catch (const diag::Error& e) {
    return diag::format(e);
  }
}

struct Scenario {
  const char* name;
  Req request;
  std::string expected;
};

class CudaScenario : public testing::TestWithParam<Scenario> {};

// Issue 14, class 8: the reasons name the real constraint.
TEST(CudaReasons, NameTheRealConstraint) {
  // A pinned cu124 rules out the toolkit the driver runs fully (12.2), not the driver.
  const CudaDecision pinned = decide_cuda(Req().gpu("H100").torch("2.4.1").variant("cu124").driver("535.104.05").get());
  EXPECT_EQ(pinned.reasons.front(),
            "toolkit: CUDA 12.4.1, the newest that builds for every fleet GPU, has torch 2.4.1 wheels, runs on driver "
            "535.104.05, matching the torch cu124 wheels (CUDA 12.2.2 runs fully on driver 535.104.05, but the pinned "
            "torch cu124 wheels need a CUDA 12.4 or newer image)");
  // A runtime image has no nvcc: the note names its CUDA runtime.
  const CudaDecision runtime = decide_cuda(Req().gpu("H100").torch("2.4.1").cuda("12.6").get());
  const auto has = [](const CudaDecision& d, const std::string& text) {
    return std::any_of(d.reasons.begin(), d.reasons.end(),
                       [&](const std::string& r) { return r.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has(runtime, "they bring their own CUDA 12.4 libraries, the image's CUDA runtime is 12.6"));
  EXPECT_FALSE(has(runtime, "nvcc"));
  // A cudnn8 image (CUDA 12.2) under torch 2.4's cuDNN 9 wheels: said, not silent.
  Req cudnn = Req().gpu("A100").torch("2.4.1").cuda("12.2");
  CudaRequest r = cudnn.get();
  r.cudnn = true;
  const CudaDecision mixed = decide_cuda(r);
  ASSERT_EQ(mixed.warnings.size(), 2u);
  // The first: a cuDNN image under torch carries a second copy of the libraries (tests/unit/size_test.cpp).
  EXPECT_EQ(mixed.warnings[0].text.rfind("cuda.flavor: runtime with cuda.cudnn carries CUDA libraries", 0), 0u);
  EXPECT_EQ(
      mixed.warnings[1].text,
      "the image's cuDNN 8 (nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04) is not the cuDNN 9 torch 2.4.1's wheels "
      "bring: torch uses its own, code linking the system cuDNN gets the other major");
  r.cuda.value = "12.4";  // cuDNN 9 in both: only the second copy is said
  EXPECT_EQ(decide_cuda(r).warnings.size(), 1u);
}

TEST_P(CudaScenario, Verdict) { EXPECT_EQ(verdict(GetParam().request), GetParam().expected); }

std::string name_of(const testing::TestParamInfo<Scenario>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(
    All, CudaScenario,
    testing::Values(
        // Driver 535.104.05 is what CUDA 12.2.2 ships with; torch 2.4 has cu121, which that
        // driver runs fully, so auto matches the toolkit to the wheels (12.1.1).
        Scenario{"h100_driver535_torch24_auto", Req().gpu("H100").driver("535.104.05").torch("2.4.1"),
                 "12.1.1 12.1.1-runtime-ubuntu22.04 [90] torch=cu121 driver>=530.30.02 full warnings=0"},
        Scenario{"a100_h100_cuda124_torch24",
                 Req().gpu("A100").gpu("H100").cuda("12.4").torch("2.4.1").driver("550.54.15"),
                 "12.4.1 12.4.1-runtime-ubuntu22.04 [80-real;90] torch=cu124 driver>=550.54.15 full warnings=0"},
        // torch 2.4 cu124 on a 535 driver: allowed through minor-version compatibility, warned.
        Scenario{"torch24_cu124_on_driver535", Req().gpu("H100").cuda("12.4").torch("2.4.1").driver("535.104.05"),
                 "12.4.1 12.4.1-runtime-ubuntu22.04 [90] torch=cu124 driver>=550.54.15 minor-version warnings=2"},
        Scenario{
            "sm120_with_cuda124", Req().gpu("RTX 5090").cuda("12.4"),
            "envpin: error: --gpu: CUDA 12.4.1 (--cuda) cannot build code for 'RTX 5090' (sm_120); CUDA 12.8 to 13.2 can\n"
            "envpin: hint: set --cuda to 12.8 or newer, or drop 'RTX 5090'\n"},
        Scenario{"sm120_with_cuda128", Req().gpu("RTX 5090").cuda("12.8"),
                 "12.8.1 12.8.1-runtime-ubuntu22.04 [120] torch=- driver>=570.124.06 unknown warnings=0"},
        Scenario{"sm120_auto", Req().gpu("RTX 5090"),
                 "13.2.1 13.2.1-runtime-ubuntu22.04 [120] torch=- driver>=595.58.03 unknown warnings=0"},
        Scenario{
            "v100_with_cuda13", Req().gpu("V100").cuda("13.0"),
            "envpin: error: --gpu: CUDA 13.0.3 (--cuda) cannot build code for 'V100' (sm_70); CUDA 11.0 to 12.9 can\n"
            "envpin: hint: set --cuda to 12.9 or older, or drop 'V100'\n"},
        // Mixed Volta + Hopper: CUDA 13 dropped sm_70, so the newest line building both is 12.9.
        Scenario{"mixed_v100_h100_auto", Req().gpu("V100").gpu("H100"),
                 "12.9.1 12.9.1-runtime-ubuntu22.04 [70-real;90] torch=- driver>=575.57.08 unknown warnings=0"},
        Scenario{"mixed_v100_h100_torch28", Req().gpu("V100").gpu("H100").torch("2.8.0"),
                 "12.9.1 12.9.1-runtime-ubuntu22.04 [70-real;90] torch=cu129 driver>=575.57.08 unknown warnings=0"},
        Scenario{"cuda13_on_driver560", Req().gpu("H100").cuda("13.0").driver("560.35.03"),
                 "envpin: error: --driver: CUDA 13.0.3 (--cuda) needs NVIDIA driver >= 580.95.05 (>= 580 with "
                 "minor-version compatibility), but --driver is 560.35.03\n"
                 "envpin: hint: set --cuda to 12.5 (the newest this driver runs fully; up to 12.9 with minor-version "
                 "compatibility), or upgrade the fleet's driver to 580.95.05 or newer\n"},
        // 12.6.3 ships with 560.35.05, one patch above the fleet: 12.5.1 is the newest full fit.
        Scenario{"driver560_auto", Req().gpu("H100").driver("560.35.03"),
                 "12.5.1 12.5.1-runtime-ubuntu22.04 [90] torch=- driver>=555.42.06 full warnings=0"},
        Scenario{
            "torch24_with_cuda13", Req().gpu("H100").torch("2.4.1").cuda("13.0"),
            "envpin: error: --torch: torch 2.4.1 (--torch) has no wheels that fit a CUDA 13.0.3 image (--cuda): "
            "its variants are cu118, cu121, cu124, and one must be CUDA 13.x at or below 13.0 (torch refuses to build "
            "extensions with an nvcc of another CUDA major, as DeepSpeed's and apex's builds do)\n"
            "envpin: hint: set --cuda to 12.4, or pin a torch built for CUDA 13\n"},
        Scenario{"jetson_orin", Req().gpu("Jetson AGX Orin"),
                 "envpin: error: --gpu: 'Jetson AGX Orin' is a Jetson module (sm_87): nvidia/cuda images do not run on "
                 "Jetson, which uses L4T\n"
                 "envpin: hint: build Jetson images from NVIDIA's L4T images with 'base:' and no cuda section\n"},
        Scenario{"jetson_thor_arm64", Req().gpu("Jetson T5000").arm64(),
                 "13.2.1 13.2.1-runtime-ubuntu22.04 [110] torch=- driver>=595.58.03 unknown warnings=0"},
        Scenario{"jetson_thor_amd64", Req().gpu("Jetson T5000"),
                 "envpin: error: --gpu: 'Jetson T5000' only exists in arm64 hosts (Jetson), but the image is built "
                 "for linux/amd64 only\n"
                 "envpin: hint: add linux/arm64 to platforms\n"},
        Scenario{"gh200_amd64", Req().gpu("GH200"),
                 "envpin: error: --gpu: 'GH200' only exists in arm64 hosts (Grace), but the image is built for "
                 "linux/amd64 only\n"
                 "envpin: hint: add linux/arm64 to platforms\n"},
        Scenario{"gh200_arm64_torch29", Req().gpu("GH200").arm64().torch("2.9.0"),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [90] torch=cu130 driver>=580.95.05 unknown warnings=0"},
        // An arm64 laptop asking for its amd64 fleet decides exactly what an amd64 host does: the
        // host is not an input (see PlatformIsNotTheHost).
        Scenario{"amd64_fleet_from_anywhere", Req().gpu("H100").amd64().torch("2.9.0"),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [90] torch=cu130 driver>=580.95.05 unknown warnings=0"},
        Scenario{"sm120_torch24", Req().gpu("RTX 5090").torch("2.4.1"),
                 "envpin: error: --torch: torch 2.4.1 (--torch) has no wheels with kernels for 'RTX 5090' (sm_120): "
                 "none of its variants (cu118, cu121, cu124) does, so it would fail with \"no kernel image is "
                 "available for execution on the device\"\n"
                 "envpin: hint: use torch 2.7 or newer (cu128)\n"},
        Scenario{"sm120_torch27", Req().gpu("RTX 5090").torch("2.7.0"),
                 "12.8.1 12.8.1-runtime-ubuntu22.04 [120] torch=cu128 driver>=570.124.06 unknown warnings=0"},
        Scenario{"b300_with_cuda128", Req().gpu("B300").cuda("12.8"),
                 "envpin: error: --gpu: CUDA 12.8.1 (--cuda) cannot build code for 'B300' (sm_103); CUDA 12.9 to "
                 "13.2 can\n"
                 "envpin: hint: set --cuda to 12.9 or newer, or drop 'B300'\n"},
        // Issue 14, class 1: a list in one entry was prefix-matched to its first GPU (V100
        // silently dropped, CUDA 13 chosen for a fleet that has sm_70).
        Scenario{"gpu_list_with_comma", Req().gpu("A100,V100"),
                 "envpin: error: --gpu: 'A100,V100' names 2 GPUs in one entry\n"
                 "envpin: hint: give each GPU its own entry: a YAML list (gpus: [A100, V100]) or one --gpu per GPU\n"},
        Scenario{"gpu_list_with_space", Req().gpu("A100 V100"),
                 "envpin: error: --gpu: 'A100 V100' names 2 GPUs in one entry\n"
                 "envpin: hint: give each GPU its own entry: a YAML list (gpus: [A100, V100]) or one --gpu per GPU\n"},
        Scenario{"gpu_list_capabilities", Req().gpu("8.0, 7.0"),
                 "envpin: error: --gpu: '8.0, 7.0' names 2 GPUs in one entry\n"
                 "envpin: hint: give each GPU its own entry: a YAML list (gpus: [8.0, 7.0]) or one --gpu per GPU\n"},
        // nvidia-smi names still match their product (form factor and memory after it).
        Scenario{"smi_name_a100_sxm4", Req().gpu("NVIDIA A100-SXM4-80GB").cuda("12.4"),
                 "12.4.1 12.4.1-runtime-ubuntu22.04 [80] torch=- driver>=550.54.15 unknown warnings=0"},
        Scenario{"smi_name_rtx6000_ada", Req().gpu("NVIDIA RTX 6000 Ada Generation").cuda("12.4"),
                 "12.4.1 12.4.1-runtime-ubuntu22.04 [89] torch=- driver>=550.54.15 unknown warnings=0"},
        // Issue 14, class 4: Tegra-only capabilities and JetPack 6's names are Jetson.
        Scenario{"tegra_capability_87", Req().gpu("8.7"),
                 "envpin: error: --gpu: compute capability '8.7' (sm_87) is Jetson Orin only: nvidia/cuda images do "
                 "not run on Jetson, which uses L4T\n"
                 "envpin: hint: build Jetson images from NVIDIA's L4T images with 'base:' and no cuda section\n"},
        Scenario{
            "tegra_sm_72", Req().gpu("sm_72"),
            "envpin: error: --gpu: compute capability 'sm_72' (sm_72) is Jetson Xavier only: nvidia/cuda images do "
            "not run on Jetson, which uses L4T\n"
            "envpin: hint: build Jetson images from NVIDIA's L4T images with 'base:' and no cuda section\n"},
        Scenario{
            "tegra_capability_53", Req().gpu("5.3"),
            "envpin: error: --gpu: compute capability '5.3' (sm_53) is Jetson Nano/TX1 only: nvidia/cuda images do "
            "not run on Jetson, which uses L4T\n"
            "envpin: hint: build Jetson images from NVIDIA's L4T images with 'base:' and no cuda section\n"},
        Scenario{"tegra_capability_62", Req().gpu("6.2"),
                 "envpin: error: --gpu: compute capability '6.2' (sm_62) is Jetson TX2 only: nvidia/cuda images do "
                 "not run on Jetson, which uses L4T\n"
                 "envpin: hint: build Jetson images from NVIDIA's L4T images with 'base:' and no cuda section\n"},
        Scenario{
            "thor_old_name_sm101", Req().gpu("sm_101").arm64(),
            "envpin: error: --gpu: compute capability 'sm_101' (sm_101) is Jetson Thor before CUDA 13.0 renamed it "
            "sm_110\n"
            "envpin: hint: give '11.0' (sm_110), which CUDA 13.0 and newer build for\n"},
        Scenario{"jetpack6_smi_name", Req().gpu("Orin (nvgpu)").arm64(),
                 "envpin: error: --gpu: 'Orin (nvgpu)' is a Jetson module (sm_87): nvidia/cuda images do not run on "
                 "Jetson, which uses L4T\n"
                 "envpin: hint: build Jetson images from NVIDIA's L4T images with 'base:' and no cuda section\n"},
        Scenario{"jetson_orin_short_name", Req().gpu("Jetson Orin").arm64(),
                 "envpin: error: --gpu: 'Jetson Orin' is a Jetson module (sm_87): nvidia/cuda images do not run on "
                 "Jetson, which uses L4T\n"
                 "envpin: hint: build Jetson images from NVIDIA's L4T images with 'base:' and no cuda section\n"},
        // Issue 14, class 3: a torch range is resolved against the table (newest fitting release)
        // instead of installing whatever PyPI serves (a CUDA 13 build without sm_70 since 2.11).
        Scenario{"range_v100_newest_fitting", Req().gpu("V100").torch_range(">=2.7"),
                 "12.6.3 12.6.3-runtime-ubuntu22.04 [70] torch=cu126 driver>=560.35.05 unknown warnings=0"},
        // Issue 50: torch 2.11 built cu128 without Volta (its release matrix: 12.8 has Turing 7.5 and
        // newer; 12.6 keeps 7.0). The table said 2.9/2.10's list and a V100 fleet got cu128 wheels.
        Scenario{"v100_torch211", Req().gpu("V100").torch("2.11.0"),
                 "12.6.3 12.6.3-runtime-ubuntu22.04 [70] torch=cu126 driver>=560.35.05 unknown warnings=0"},
        Scenario{"v100_torch211_cu128", Req().gpu("V100").torch("2.11.0").variant("cu128"),
                 "envpin: error: envpin.yaml:9:5: torch 2.11.0+cu128 (python.extra_index at line 9) wheels are built "
                 "with CUDA 12.8 and carry no kernels for 'V100' (sm_70)\n"
                 "envpin: hint: use torch 2.11.0+cu126 (its variant with kernels for the fleet)\n"},
        // The real cause: each GPU has a variant, none has both (cu126 stops at Hopper, cu128 and
        // cu130 start at Turing); the fix is decided as the refusal is (torch 2.10 cu128 fits both).
        Scenario{"v100_rtx5090_torch211", Req().gpu("V100").gpu("RTX 5090").torch("2.11.0"),
                 "envpin: error: --torch: torch 2.11.0 (--torch) has no variant with kernels for every fleet GPU: "
                 "cu126 has none for 'RTX 5090' (sm_120); cu128 has none for 'V100' (sm_70); cu130 has none for "
                 "'V100' (sm_70)\n"
                 "envpin: hint: use torch 2.10 (cu128), or an older release down to 2.8\n"},
        Scenario{"v100_rtx5090_range_to_211", Req().gpu("V100").gpu("RTX 5090").torch_range(">=2.10,<2.12"),
                 "12.8.1 12.8.1-runtime-ubuntu22.04 [70-real;120] torch=cu128 driver>=570.124.06 unknown warnings=0"},
        Scenario{"v100_rtx5090_range_from_211", Req().gpu("V100").gpu("RTX 5090").torch_range(">=2.11"),
                 "envpin: error: envpin.yaml:8:7: no torch release 'torch>=2.11' allows fits: 2.14: has no variant "
                 "with kernels for every fleet GPU; 2.13: has no variant with kernels for every fleet GPU; 2.12: has "
                 "no variant with kernels for every fleet GPU; and 1 older\n"
                 "envpin: hint: torch 2.10 fits (the nearest release that does): widen the specifier to allow it, or "
                 "change the fleet, driver or cuda.version\n"},
        // Issue 50: on arm64 the cause is what the aarch64 wheels lack. Jetson Thor (sm_110) on 2.8: its
        // only aarch64 wheels (cu129) have no sm_110 -- not the nvcc-major rule, and the fix is a release
        // with sm_110 (2.9 cu130), never "set cuda.version to 12.9", which cannot build for sm_110.
        Scenario{"thor_arm64_torch28", Req().gpu("Jetson T5000").arm64().torch("2.8.0"),
                 "envpin: error: --torch: torch 2.8.0 (--torch) has no wheels with kernels for 'Jetson T5000' "
                 "(sm_110): none of its variants with linux/arm64 wheels (cu129) has them there, so it would fail "
                 "with \"no kernel image is available for execution on the device\"\n"
                 "envpin: hint: use torch 2.9 or newer (cu130)\n"},
        // GH200 on 2.7.0+cu126: cu126's x86 wheels have sm_90; 2.7 has no aarch64 cu126 wheel.
        Scenario{"gh200_torch27_cu126", Req().gpu("GH200").arm64().torch("2.7.0").variant("cu126"),
                 "envpin: error: envpin.yaml:9:5: torch 2.7.0+cu126 (python.extra_index at line 9) has no linux/arm64 "
                 "wheels: torch 2.7.0's aarch64 CUDA wheels are cu128, and pip would install PyPI's CPU-only aarch64 "
                 "wheel\n"
                 "envpin: hint: use torch 2.7.0+cu128 (its variant with linux/arm64 wheels for the fleet)\n"},
        // 2.9's cu129 wheels exist outside its release matrix (astral-sh/uv#17380): a pin is taken
        // (it was "torch 2.9.1 has no cu129 wheels"; pollen-robotics/microduck_rl#38 runs it on a
        // GB10), but auto and the hints keep to the matrix's measured variants (cu128 above).
        Scenario{"gb10_torch291_cu129_pinned", Req().gpu("GB10").arm64().torch("2.9.1").variant("cu129"),
                 "12.9.1 12.9.1-runtime-ubuntu22.04 [121] torch=cu129 driver>=575.57.08 unknown warnings=0"},
        Scenario{"torch210_has_no_cu129", Req().gpu("H100").torch("2.10.0").variant("cu129"),
                 "envpin: error: envpin.yaml:9:5: torch 2.10.0 has no cu129 wheels (its CUDA variants: cu126, cu128, "
                 "cu130)\n"
                 "envpin: hint: use one of its variants, or remove the index and let envpin choose\n"},
        Scenario{"range_bare_torch_h100", Req().gpu("H100").torch_range(""),
                 "13.2.1 13.2.1-runtime-ubuntu22.04 [90] torch=cu132 driver>=595.58.03 unknown warnings=0"},
        Scenario{"range_upper_bound", Req().gpu("A100").torch_range(">=2.4,<2.5"),
                 "12.4.1 12.4.1-runtime-ubuntu22.04 [80] torch=cu124 driver>=550.54.15 unknown warnings=0"},
        Scenario{"range_nothing_known", Req().gpu("H100").torch_range(">=3"),
                 "envpin: error: envpin.yaml:8:7: 'torch>=3' allows no torch release envpin knows (1.7 to 2.14)\n"
                 "envpin: hint: widen the specifier, or pin the release you need with torch==X.Y.Z\n"},
        Scenario{"range_rtx5090_before_27", Req().gpu("RTX 5090").torch_range("<2.7"),
                 "envpin: error: envpin.yaml:8:7: no torch release 'torch<2.7' allows fits: 2.6: has no wheels with "
                 "kernels for 'RTX 5090' (sm_120); 2.5: has no wheels with kernels for 'RTX 5090' (sm_120); 2.4: has "
                 "no wheels with kernels for 'RTX 5090' (sm_120); and 13 older\n"
                 "envpin: hint: torch 2.7 fits (the nearest release that does): widen the specifier to allow it, or "
                 "change the fleet, driver or cuda.version\n"},
        // Issue 14, class 2: torch without CUDA aarch64 wheels on arm64 let pip take PyPI's
        // CPU-only aarch64 wheel, so that is a refusal.
        // Public reports: pytorch/pytorch#168065 (GB200: `pip install torch` gave the CPU build),
        // pytorch/pytorch#160162 (PyPI has only CPU aarch64 wheels), pytorch/pytorch#134790.
        // Issue 33: aarch64 CUDA wheels per (release, variant) from the index itself: 2.4/2.5 cu124
        // (untagged, astral-sh/uv#10843), 2.6 cu126, 2.7 cu128 only, 2.8 cu129 only (OpenRAL/openral#88:
        // "torch==2.8.0+cu128 has no wheels with a matching platform tag"), 2.3 and older none.
        Scenario{"gh200_arm64_torch24_cu124", Req().gpu("GH200").arm64().torch("2.4.1"),
                 "12.4.1 12.4.1-runtime-ubuntu22.04 [90] torch=cu124 driver>=550.54.15 unknown warnings=0"},
        Scenario{"gh200_arm64_torch26_cu126", Req().gpu("GH200").arm64().torch("2.6.0"),
                 "12.6.3 12.6.3-runtime-ubuntu22.04 [90] torch=cu126 driver>=560.35.05 unknown warnings=0"},
        Scenario{"gh200_arm64_torch23_cpu_only", Req().gpu("GH200").arm64().torch("2.3.1"),
                 "envpin: error: --torch: torch 2.3.1 (--torch) has no CUDA wheels for linux/arm64 in any variant "
                 "envpin knows of (cu118, cu121): pip would install PyPI's CPU-only aarch64 wheel\n"
                 "envpin: hint: use torch 2.4 or newer (cu124) for linux/arm64\n"},
        Scenario{"gh200_arm64_torch28_cuda128_no_wheels", Req().gpu("GH200").arm64().torch("2.8.0").cuda("12.8"),
                 "envpin: error: --torch: torch 2.8.0 (--torch) has no CUDA wheels for linux/arm64 on its cu128 index: "
                 "pip would install PyPI's CPU-only aarch64 wheel\n"
                 "envpin: hint: set --cuda to 12.9 or newer (torch 2.8.0's cu129 wheels have linux/arm64 builds)\n"},
        Scenario{"gh200_arm64_torch27_auto", Req().gpu("GH200").arm64().torch("2.7.1"),
                 "12.8.1 12.8.1-runtime-ubuntu22.04 [90] torch=cu128 driver>=570.124.06 unknown warnings=0"},
        // Issue 14, class 5: the GPU is the real cause when the requested line has no image
        // and could not build for it either (10.2 predates sm_86); a hint that actually works.
        Scenario{"rtx3090_cuda102_names_the_gpu", Req().gpu("RTX 3090").cuda("10.2"),
                 "envpin: error: --gpu: CUDA 10.2 (--cuda) cannot build code for 'RTX 3090' (sm_86); CUDA 11.1 to "
                 "13.2 can (and nvidia/cuda publishes no 10.2 image)\n"
                 "envpin: hint: set --cuda to 11.1 or newer\n"},
        Scenario{"v100_cuda102_no_image_only", Req().gpu("V100").cuda("10.2"),
                 "envpin: error: --cuda: nvidia/cuda has no supported image for CUDA 10.2\n"
                 "envpin: hint: supported CUDA lines: 11.x, 12.x, 13.x\n"},
        Scenario{"v100_cuda14_names_the_gpu", Req().gpu("V100").cuda("14.0"),
                 "envpin: error: --gpu: CUDA 14.0 (--cuda) cannot build code for 'V100' (sm_70); CUDA 11.0 to 12.9 "
                 "can (and nvidia/cuda publishes no 14.0 image)\n"
                 "envpin: hint: set --cuda to 12.9 or older\n"},
        // A pinned variant: the GPU's SM, or the driver's major, is the cause, with a fix that works.
        // Public reports: pBFSLab/DeepPrep#233 (torch 2.0.1 cu118 on an RTX 5090), pytorch/pytorch#167244
        // (a cu124 build on RTX 5090: "no kernel image"), pytorch/pytorch#150733 (RTX 5090 D).
        Scenario{"rtx5090_cu118_names_sm120", Req().gpu("RTX 5090").torch("2.4.1").variant("cu118"),
                 "envpin: error: envpin.yaml:9:5: torch 2.4.1+cu118 (python.extra_index at line 9) wheels are built "
                 "with CUDA 11.8 and carry no kernels for 'RTX 5090' (sm_120); sm_120 needs CUDA 12.8 or newer\n"
                 "envpin: hint: use torch 2.7 or newer (cu128)\n"},
        Scenario{"cu130_on_driver575_names_r580", Req().gpu("H100").torch("2.9.0").variant("cu130").driver("575.57.08"),
                 "envpin: error: envpin.yaml:9:5: torch 2.9.0+cu130 (python.extra_index at line 9) needs a CUDA "
                 "13.x driver, R580 or newer even with minor-version compatibility, but --driver is "
                 "575.57.08\nenvpin: hint: use torch 2.9.0+cu128 (the newest variant it runs), or set "
                 "cuda.forward_compat: true (data-center GPUs run a newer CUDA on this driver through the "
                 "cuda-compat libraries of the image), or upgrade the fleet's driver to R580 or newer\n"},
        Scenario{"cu128_on_driver575_runs", Req().gpu("H100").torch("2.9.0").variant("cu128").driver("575.57.08"),
                 "12.8.1 12.8.1-runtime-ubuntu22.04 [90] torch=cu128 driver>=570.124.06 full warnings=0"},
        // Issue 14, class 10: forward compatibility, opt-in, data-center GPUs only. Issue 33: the
        // refusal offers it, decided first (13.0.3's start gate lists R535 for nvidia GPUs).
        Scenario{"cuda13_on_r535_without_forward_compat", Req().gpu("H100").cuda("13.0").driver("535.104.05"),
                 "envpin: error: --driver: CUDA 13.0.3 (--cuda) needs NVIDIA driver >= 580.95.05 (>= 580 with "
                 "minor-version compatibility), but --driver is 535.104.05\nenvpin: hint: set --cuda to 12.2 (the "
                 "newest this driver runs fully; up to 12.9 with minor-version compatibility), or set "
                 "cuda.forward_compat: true (data-center GPUs run a newer CUDA on this driver through the "
                 "cuda-compat libraries of the image), or upgrade the fleet's driver to 580.95.05 or newer\n"},
        // ... and not where the gate would refuse it: 13.0.3 does not list R560.
        Scenario{"cuda13_on_r560_forward_compat_not_offered", Req().gpu("H100").cuda("13.0").driver("560.35.03"),
                 "envpin: error: --driver: CUDA 13.0.3 (--cuda) needs NVIDIA driver >= 580.95.05 (>= 580 with "
                 "minor-version compatibility), but --driver is 560.35.03\n"
                 "envpin: hint: set --cuda to 12.5 (the newest this driver runs fully; up to 12.9 with minor-version "
                 "compatibility), or upgrade the fleet's driver to 580.95.05 or newer\n"},
        Scenario{"cuda13_on_r535_forward_compat_h100",
                 Req().gpu("H100").cuda("13.0").driver("535.104.05").forward_compat(),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [90] torch=- driver>=580.95.05 forward warnings=2"},
        Scenario{"forward_compat_consumer_gpu",
                 Req().gpu("RTX 4090").cuda("13.0").driver("535.104.05").forward_compat(),
                 "envpin: error: envpin.yaml:6:19: cuda.forward_compat at line 6 needs data-center GPUs, but "
                 "'RTX 4090' is not one: forward compatibility fails there with CUDA error 804\n"
                 "envpin: hint: upgrade the fleet's driver, or drop cuda.forward_compat\n"},
        Scenario{
            "forward_compat_bare_capability", Req().gpu("9.0").cuda("13.0").driver("535.104.05").forward_compat(),
            "envpin: error: envpin.yaml:6:19: cuda.forward_compat at line 6 needs data-center GPUs, but '9.0' is a "
            "bare capability, whose product envpin cannot tell: forward compatibility fails there with CUDA error "
            "804\n"
            "envpin: hint: name the GPU product (e.g. 'A100') in cuda.gpus\n"},
        // Opt-in does not outrank a driver that runs a toolkit by minor-version compatibility.
        Scenario{"forward_compat_auto_prefers_mvc", Req().gpu("H100").driver("535.104.05").forward_compat(),
                 "12.2.2 12.2.2-runtime-ubuntu22.04 [90] torch=- driver>=535.104.05 full warnings=0"},
        // --- Issue 14: scenarios from public reports. Each row is the report's fleet and request
        // as envpin's inputs; where a report does not state the GPU, the row says which it assumes.
        // pytorch/pytorch#149845: an RTX 5090 D failed until its driver was upgraded to R570.
        Scenario{"report_rtx5090_driver560", Req().gpu("RTX 5090").torch("2.7.0").driver("560.35.03"),
                 "envpin: error: --driver: driver 560.35.03 (--driver) cannot drive 'RTX 5090' (sm_120): its "
                 "architecture reached NVIDIA's driver with CUDA 12.8, in branch R570\n"
                 "envpin: hint: upgrade the fleet's driver to R570 or newer\n"},
        // HybridRobotics/berkeley-humanoid-lite#49: torch 2.5.1 from the cu121 index on an RTX 5090 (driver 590).
        Scenario{"report_rtx5090_torch251_cu121",
                 Req().gpu("RTX 5090").torch("2.5.1").variant("cu121").driver("590.48.01"),
                 "envpin: error: envpin.yaml:9:5: torch 2.5.1+cu121 (python.extra_index at line 9) wheels are built "
                 "with CUDA 12.1 and carry no kernels for 'RTX 5090' (sm_120); sm_120 needs CUDA 12.8 or newer\n"
                 "envpin: hint: use torch 2.7 or newer (cu128)\n"},
        // lllyasviel/FramePack#702: torch 2.6 cu126 on an RTX 5080.
        Scenario{"report_rtx5080_torch26", Req().gpu("RTX 5080").torch("2.6.0"),
                 "envpin: error: --torch: torch 2.6.0 (--torch) has no wheels with kernels for 'RTX 5080' (sm_120): "
                 "none of its variants (cu118, cu124, cu126) does, so it would fail with \"no kernel image is "
                 "available for execution on the device\"\n"
                 "envpin: hint: use torch 2.7 or newer (cu128)\n"},
        // Comfy-Org/ComfyUI#7380: an RTX 5070 before torch had cu128 wheels.
        Scenario{"report_rtx5070_torch26", Req().gpu("RTX 5070").torch("2.6.0"),
                 "envpin: error: --torch: torch 2.6.0 (--torch) has no wheels with kernels for 'RTX 5070' (sm_120): "
                 "none of its variants (cu118, cu124, cu126) does, so it would fail with \"no kernel image is "
                 "available for execution on the device\"\n"
                 "envpin: hint: use torch 2.7 or newer (cu128)\n"},
        // nerfstudio-project/gsplat#1053: an extension built without sm_120 on CUDA 12.8 / torch 2.7.1;
        // envpin's arch list for the image is sm_120.
        Scenario{"report_rtx5090_torch271_cuda128", Req().gpu("RTX 5090").torch("2.7.1").cuda("12.8"),
                 "12.8.1 12.8.1-runtime-ubuntu22.04 [120] torch=cu128 driver>=570.124.06 unknown warnings=0"},
        // InternLM/lmdeploy#3806: torch 2.7.1+cu128 with a CUDA 12.9 toolkit on an RTX 5090.
        Scenario{"report_rtx5090_torch271_cuda129", Req().gpu("RTX 5090").torch("2.7.1").cuda("12.9"),
                 "12.9.1 12.9.1-runtime-ubuntu22.04 [120] torch=cu128 driver>=575.57.08 unknown warnings=0"},
        // pytorch/pytorch#45028: an A100 on driver 450.119.03 (CUDA 11.0 driver).
        Scenario{"report_a100_driver450", Req().gpu("NVIDIA A100-SXM4-40GB").driver("450.119.03"),
                 "11.0.3 11.0.3-runtime-ubuntu20.04 [80] torch=- driver>=450.51.06 full warnings=0"},
        // andreimargeloiu/WPFS#3: torch 1.10.1 on an A100 (no sm_80 kernels in its default build, cu102:
        // "supports sm_37 sm_50 sm_60 sm_70"). Issue 33: 1.x is decided like 2.x, and its cu111 wheels run.
        Scenario{"report_a100_torch1101", Req().gpu("A100").torch("1.10.1"),
                 "11.1.1 11.1.1-runtime-ubuntu20.04 [80] torch=cu111 driver>=455.32 unknown warnings=0"},
        // Aaronontheweb/witticism#10: torch 2.8 cu128 has no sm_61 kernels for a GTX 1080; cu126 has.
        Scenario{"report_gtx1080_torch28_auto", Req().gpu("NVIDIA GeForce GTX 1080").torch("2.8.0"),
                 "12.6.3 12.6.3-runtime-ubuntu22.04 [61] torch=cu126 driver>=560.35.05 unknown warnings=0"},
        Scenario{"report_gtx1080_torch28_cu128", Req().gpu("GTX 1080").torch("2.8.0").variant("cu128"),
                 "envpin: error: envpin.yaml:9:5: torch 2.8.0+cu128 (python.extra_index at line 9) wheels are built "
                 "with CUDA 12.8 and carry no kernels for 'GTX 1080' (sm_61)\n"
                 "envpin: hint: use torch 2.8.0+cu126 (its variant with kernels for the fleet)\n"},
        // unslothai/unsloth#5876: a V100 on a CUDA 13 driver was sent to cu130 wheels (no sm_70).
        Scenario{"report_v100_torch29_driver580", Req().gpu("V100").torch("2.9.0").driver("580.95.05"),
                 "12.8.1 12.8.1-runtime-ubuntu22.04 [70] torch=cu128 driver>=570.124.06 full warnings=0"},
        Scenario{"report_v100_torch29_cu130", Req().gpu("V100").torch("2.9.0").variant("cu130").driver("580.95.05"),
                 "envpin: error: envpin.yaml:9:5: torch 2.9.0+cu130 (python.extra_index at line 9) wheels are built "
                 "with CUDA 13.0 and carry no kernels for 'V100' (sm_70)\n"
                 "envpin: hint: use torch 2.9.0+cu128 (its variant with kernels for the fleet)\n"},
        // mudler/LocalAI#9948: CUDA 13 images on a V100 with an R580 driver.
        Scenario{"report_v100_cuda13_driver580", Req().gpu("Tesla V100-SXM2-32GB").cuda("13.0").driver("580.95.05"),
                 "envpin: error: --gpu: CUDA 13.0.3 (--cuda) cannot build code for 'Tesla V100-SXM2-32GB' (sm_70); "
                 "CUDA 11.0 to 12.9 can\n"
                 "envpin: hint: set --cuda to 12.9 or older, or drop 'Tesla V100-SXM2-32GB'\n"},
        // NVlabs/tiny-cuda-nn#239: nvcc 11.3 "Unsupported gpu architecture 'compute_89'" on an RTX 4090.
        Scenario{"report_rtx4090_cuda113", Req().gpu("RTX 4090").cuda("11.3"),
                 "envpin: error: --gpu: CUDA 11.3 (--cuda) cannot build code for 'RTX 4090' (sm_89); CUDA 11.8 to "
                 "13.2 can (and nvidia/cuda publishes no 11.3 image)\n"
                 "envpin: hint: set --cuda to 11.8 or newer\n"},
        // erikwijmans/Pointnet2_PyTorch#91: GTX 1080 Ti + RTX 2080 Ti, driver 440.31, CUDA 10.2.
        Scenario{
            "report_pascal_turing_driver440_cuda102",
            Req().gpu("GTX 1080 Ti").gpu("RTX 2080 Ti").driver("440.31").cuda("10.2"),
            "envpin: error: --cuda: nvidia/cuda has no supported image for CUDA 10.2, and --driver 440.31 runs none "
            "that does: the oldest, CUDA 11.0.3, needs driver >= 450.51.06\n"
            "envpin: hint: upgrade the fleet's driver to 450.51.06 or newer, then set --cuda to 11.0 or newer\n"},
        // HawkAaron/warp-transducer#79: RTX 2070, driver 450.80.02, CUDA 11.0 (works once the arch list is right).
        Scenario{"report_rtx2070_driver450_cuda110", Req().gpu("RTX 2070").driver("450.80.02").cuda("11.0"),
                 "11.0.3 11.0.3-runtime-ubuntu20.04 [75] torch=- driver>=450.51.06 full warnings=0"},
        // PaddlePaddle/Paddle#8501: Tesla V100-SXM2 on driver 384.81.
        Scenario{"report_v100_driver384", Req().gpu("Tesla V100-SXM2-16GB").driver("384.81"),
                 "envpin: error: --driver: CUDA 11.0.3 (--cuda auto) needs NVIDIA driver >= 450.51.06 (>= 450.80.02 "
                 "with minor-version compatibility), but --driver is 384.81\n"
                 "envpin: hint: upgrade the fleet's driver to 450.51.06 or newer\n"},
        // NVIDIA/nvidia-docker#1066: GTX 1050 Ti on driver 384.111 ("driver version is insufficient").
        Scenario{"report_gtx1050ti_driver384", Req().gpu("GTX 1050 Ti").driver("384.111"),
                 "envpin: error: --driver: CUDA 11.0.3 (--cuda auto) needs NVIDIA driver >= 450.51.06 (>= 450.80.02 "
                 "with minor-version compatibility), but --driver is 384.111\n"
                 "envpin: hint: upgrade the fleet's driver to 450.51.06 or newer\n"},
        // NVIDIA/cudf#328: GTX 1070 on driver 410.
        Scenario{"report_gtx1070_driver410", Req().gpu("GTX 1070").driver("410.79"),
                 "envpin: error: --driver: CUDA 11.0.3 (--cuda auto) needs NVIDIA driver >= 450.51.06 (>= 450.80.02 "
                 "with minor-version compatibility), but --driver is 410.79\n"
                 "envpin: hint: upgrade the fleet's driver to 450.51.06 or newer\n"},
        // lllyasviel/Fooocus#1313: RTX 3050 Laptop GPU on driver 470.86 ("found version 11040"): torch 2.1's
        // cu118 wheels run there through minor-version compatibility, its cu121 wheels do not. In a
        // container they do not: 11.8.0's start gate admits GeForce on R470, but its cuda-compat
        // libraries then fail with error 804 on a GeForce (issue 33), so only 11.0-11.4 images run.
        Scenario{"report_rtx3050_laptop_torch21_driver470",
                 Req().gpu("NVIDIA GeForce RTX 3050 Laptop GPU").torch("2.1.0").driver("470.86"),
                 "envpin: error: --torch: no CUDA toolkit fits both --driver 470.86, which allows CUDA 11.0 to "
                 "11.4, and torch 2.1.0 (--torch), which allows 11.8, 12.1 to 12.9; nearest: 12.9.1: needs "
                 "NVIDIA driver >= 575.57.08 (>= 525.60.13 with minor-version compatibility), but --driver is "
                 "470.86; 11.8.0: CUDA in nvidia/cuda:11.8.0 fails on 'NVIDIA GeForce RTX 3050 Laptop GPU' with "
                 "driver 470.86 (it reports CUDA 11.4); 11.4.3: torch 2.1.0 (--torch) has no wheels that fit a "
                 "CUDA 11.4.3 image (--cuda auto)\nenvpin: hint: change one of the two; a fixed cuda.version "
                 "shows the exact conflict\n"},
        // IEIT-Yuan/Yuan-2.0#65: a CUDA 12.1 container on a CUDA 11.0 driver (GPU not stated: A100 assumed).
        Scenario{"report_cuda121_on_driver450", Req().gpu("A100").cuda("12.1").driver("450.80.02"),
                 "envpin: error: --driver: CUDA 12.1.1 (--cuda) needs NVIDIA driver >= 530.30.02 (>= 525.60.13 with "
                 "minor-version compatibility), but --driver is 450.80.02\n"
                 "envpin: hint: set --cuda to 11.0 (the newest this driver runs fully; up to 11.8 with minor-version "
                 "compatibility), or upgrade the fleet's driver to 530.30.02 or newer\n"},
        // zai-org/ChatGLM3#100: "found version 11060" (R510) under cu121 wheels (GPU not stated: A100 assumed).
        Scenario{"report_torch21_cu121_on_driver510",
                 Req().gpu("A100").torch("2.1.0").variant("cu121").driver("510.47.03"),
                 "envpin: error: envpin.yaml:9:5: torch 2.1.0+cu121 (python.extra_index at line 9) needs a CUDA "
                 "12.x driver, 525.60.13 or newer even with minor-version compatibility, but --driver is "
                 "510.47.03\nenvpin: hint: use torch 2.1.0+cu118 (the newest variant it runs), and set "
                 "cuda.require_check: off to start it anyway (NVIDIA_DISABLE_REQUIRE=1), or upgrade the fleet's "
                 "driver to 525.60.13 or newer\n"},
        // pytorch/pytorch#162531: cu130 torch under a CUDA 12.8 driver ("found version 12080"; GPU not
        // stated: A10G assumed).
        Scenario{"report_torch29_cu130_on_driver570",
                 Req().gpu("A10G").torch("2.9.0").variant("cu130").driver("570.124.06"),
                 "envpin: error: envpin.yaml:9:5: torch 2.9.0+cu130 (python.extra_index at line 9) needs a CUDA "
                 "13.x driver, R580 or newer even with minor-version compatibility, but --driver is "
                 "570.124.06\nenvpin: hint: use torch 2.9.0+cu128 (the newest variant it runs), or set "
                 "cuda.forward_compat: true (data-center GPUs run a newer CUDA on this driver through the "
                 "cuda-compat libraries of the image), or upgrade the fleet's driver to R580 or newer\n"},
        // pytorch/pytorch#130249: Python 3.13 wheels arrived with torch 2.5.
        Scenario{"report_torch24_python313", Req().gpu("A100").torch("2.4.1").python("3.13"),
                 "envpin: error: --torch: torch 2.4.1 (--torch) has no wheels for Python 3.13 (python.version at line "
                 "7): torch 2.4 supports Python 3.8 to 3.12\n"
                 "envpin: hint: use Python 3.12, or pin torch 2.5 or newer\n"},
        // vllm-project/vllm#39233, conda-forge/pytorch-cpu-feedstock#486: Jetson Thor is sm_110, CUDA 13 only.
        Scenario{"report_thor_cuda129", Req().gpu("Jetson T5000").arm64().cuda("12.9"),
                 "envpin: error: --gpu: CUDA 12.9.1 (--cuda) cannot build code for 'Jetson T5000' (sm_110); CUDA 13.0 "
                 "to 13.2 can\n"
                 "envpin: hint: set --cuda to 13.0 or newer, or drop 'Jetson T5000'\n"},
        // OpenRAL/openral#167: torch 2.9.1+cu128 on Jetson Thor has no sm_110 kernels; cu130 has.
        Scenario{"report_thor_torch291_cu128", Req().gpu("Jetson T5000").arm64().torch("2.9.1").variant("cu128"),
                 "envpin: error: envpin.yaml:9:5: torch 2.9.1+cu128 (python.extra_index at line 9) wheels are built "
                 "with CUDA 12.8 and carry no kernels for 'Jetson T5000' (sm_110); sm_110 needs CUDA 13.0 or newer\n"
                 "envpin: hint: use torch 2.9.1+cu130 (its variant with kernels for the fleet)\n"},
        Scenario{"report_thor_torch291_auto", Req().gpu("Jetson T5000").arm64().torch("2.9.1"),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [110] torch=cu130 driver>=580.95.05 unknown warnings=0"},
        // vllm-project/vllm#34470 (collect_env on Jetson AGX Thor): "Nvidia driver version: 580.00", CUDA
        // 13.0. Thor's driver numbering is its own: 580.00 reports 13.0, named or as capability 11.0.
        // Issue 50: whether 2.8.0's aarch64 cu129 wheel has sm_80 is not settled in the public record
        // (pytorch/pytorch#157843 after the branch cut, no measurement): said, not claimed.
        Scenario{"report_a100_arm64_torch280", Req().gpu("A100").arm64().torch("2.8.0"),
                 "envpin: error: --torch: torch 2.8.0 (--torch) has no wheels confirmed to carry kernels for 'A100' "
                 "(sm_80): its aarch64 cu129 wheel may lack them (pytorch/pytorch#157843 added sm_80 to 12.9's "
                 "aarch64 list on 2025-07-09, after 2.8's branch cut (2025-06-24, #156745), and no get_arch_list() "
                 "of 2.8.0+cu129 on aarch64 is published; torch.cuda.get_arch_list() on the machine settles it), "
                 "and then it fails with \"no kernel image is available for execution on the device\"\n"
                 "envpin: hint: use torch 2.9 or newer (cu130)\n"},
        Scenario{"report_thor_driver_58000", Req().gpu("Thor").arm64().torch("2.9.1").driver("580.00"),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [110] torch=cu130 driver>=580.95.05 minor-version warnings=2"},
        Scenario{"report_thor_driver_58000_capability", Req().gpu("11.0").arm64().torch("2.9.1").driver("580.00"),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [110] torch=cu130 driver>=580.95.05 minor-version warnings=2"},
        // The same number on another GPU is a desktop driver below 580.65.06: no CUDA 13.
        Scenario{"report_gb10_driver_58000", Req().gpu("GB10").arm64().torch("2.9.1").driver("580.00"),
                 "12.9.1 12.9.1-runtime-ubuntu22.04 [121] torch=cu128 driver>=575.57.08 full warnings=0"},
        // pytorch/pytorch#172629: GB10 (sm_121) under torch 2.9.1+cu130 runs the sm_120 cubins (same major).
        Scenario{"report_gb10_torch291", Req().gpu("NVIDIA GB10").arm64().torch("2.9.1"),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [121] torch=cu130 driver>=580.95.05 unknown warnings=0"},
        // devnen/Chatterbox-TTS-Server#134: GB10 works with torch 2.10 cu130.
        Scenario{"report_gb10_torch210", Req().gpu("GB10").arm64().torch("2.10.0"),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [121] torch=cu130 driver>=580.95.05 unknown warnings=0"},
        // allenai/open-instruct#1342 read 2.8 as having no aarch64 wheel for GB10; the index has
        // torch-2.8.0+cu129 manylinux_2_28_aarch64 wheels (pinned by direct URL in public scripts), built for
        // 8.0;9.0;10.0;12.0, and GB10's sm_121 runs sm_120 cubins (pollen-robotics/microduck_rl#2: GB10 runs
        // once torch comes from the cu129 index).
        Scenario{"report_gb10_torch28", Req().gpu("GB10").arm64().torch("2.8.0"),
                 "12.9.1 12.9.1-runtime-ubuntu22.04 [121] torch=cu129 driver>=575.57.08 unknown warnings=0"},
        // NVIDIA/cuDecomp#97: CUDA 13 dropped Volta, not Turing.
        Scenario{"report_t4_cuda13", Req().gpu("Tesla T4").cuda("13.0"),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [75] torch=- driver>=580.95.05 unknown warnings=0"},
        // NVIDIA/cutlass#3166, JuliaGPU/CUDA.jl#3132: CUDA 13 cannot target sm_70.
        Scenario{"report_v100_h100_cuda132", Req().gpu("V100").gpu("H100").cuda("13.2"),
                 "envpin: error: --gpu: CUDA 13.2.1 (--cuda) cannot build code for 'V100' (sm_70); CUDA 11.0 to 12.9 "
                 "can\n"
                 "envpin: hint: set --cuda to 12.9 or older, or drop 'V100'\n"},
        // pytorch/pytorch#157517: the cu128 builds of 2.8 keep sm_70.
        Scenario{"report_v100_torch28_cuda128", Req().gpu("V100").torch("2.8.0").cuda("12.8"),
                 "12.8.1 12.8.1-runtime-ubuntu22.04 [70] torch=cu128 driver>=570.124.06 unknown warnings=0"},
        // Dr-Noob/gpufetch#53: cudaErrorCompatNotSupportedOnDevice (804) on a GTX 970.
        Scenario{"report_gtx970_forward_compat",
                 Req().gpu("GTX 970").cuda("12.8").driver("470.223.02").forward_compat(),
                 "envpin: error: envpin.yaml:6:19: cuda.forward_compat at line 6 needs data-center GPUs, but 'GTX "
                 "970' is not one: forward compatibility fails there with CUDA error 804\n"
                 "envpin: hint: upgrade the fleet's driver, or drop cuda.forward_compat\n"},
        // NVlabs/PWC-Net#138: error 222 (PTX from a newer toolchain) with CUDA 11.8 on driver 470.223.02
        // (GPU not stated: A100 assumed): allowed through minor-version compatibility, and warned.
        Scenario{"report_cuda118_on_driver470", Req().gpu("A100").cuda("11.8").driver("470.223.02"),
                 "11.8.0 11.8.0-runtime-ubuntu22.04 [80] torch=- driver>=520.61.05 minor-version warnings=2"},
        // ComputationalRadiationPhysics/cuda_memtest#31: error 222 on an RTX 3070 Laptop GPU, driver 460.80,
        // code from a newer toolkit (11.3 there, which has no nvidia/cuda image; 11.8 here). Run on
        // the host, minor-version compatibility let it start; the 11.8.0 image's start gate lists
        // no R460, so the container never starts (and cuda.require_check: off is no fix on a GeForce:
        // error 804).
        Scenario{"report_rtx3070_laptop_cuda118_driver460",
                 Req().gpu("NVIDIA GeForce RTX 3070 Laptop GPU").cuda("11.8").driver("460.80"),
                 "envpin: error: --driver: the NVIDIA container runtime refuses to start nvidia/cuda:11.8.0 on "
                 "driver 460.80: the image requires cuda>=11.8, the driver reports CUDA 11.2, and its exceptions "
                 "do not list branch R460\nenvpin: hint: set --cuda to 11.2 (the newest CUDA the driver reports), "
                 "or upgrade the fleet's driver to 520.61.05 or newer\n"},
        Scenario{"unknown_gpu", Req().gpu("H1000"),
                 "envpin: error: --gpu: unknown GPU 'H1000'; names like it are other architectures: H100 (sm_90), "
                 "T1000 (sm_75)\n"
                 "envpin: hint: name a product such as 'H100' or give its compute capability, e.g. '9.0'\n"},
        Scenario{"no_gpus", Req().cuda("12.4"),
                 "envpin: error: --gpu: no GPUs given: the arch list and the toolkit depend on the fleet's GPUs\n"
                 "envpin: hint: name them with --gpu, e.g. '--gpu A100 --gpu H100'\n"},
        Scenario{"bad_driver", Req().gpu("A100").driver("latest"),
                 "envpin: error: --driver: invalid driver version 'latest'\n"
                 "envpin: hint: give the driver as nvidia-smi prints it, e.g. '535.104.05'\n"},
        Scenario{"bad_torch", Req().gpu("A100").torch("two"),
                 "envpin: error: --torch: invalid torch version 'two'\n"
                 "envpin: hint: give it as pip does, e.g. '2.4.1'\n"},
        Scenario{"torch_113", Req().gpu("A100").torch("1.13.1"),
                 "11.7.1 11.7.1-runtime-ubuntu22.04 [80] torch=cu117 driver>=515.48.07 unknown warnings=0"},
        Scenario{"torch_newer_than_table", Req().gpu("A100").torch("2.20.0").cuda("13.0"),
                 "13.0.3 13.0.3-runtime-ubuntu22.04 [80] torch=- driver>=580.95.05 unknown warnings=1"},
        Scenario{"t4_rtx5090_driver570_torch28", Req().gpu("T4").gpu("RTX 5090").driver("570.124.06").torch("2.8.0"),
                 "12.8.1 12.8.1-runtime-ubuntu22.04 [75-real;120] torch=cu128 driver>=570.124.06 full warnings=0"},
        Scenario{"l4_a10g_capabilities", Req().gpu("L4").gpu("A10G").gpu("8.6").cuda("12.6"),
                 "12.6.3 12.6.3-runtime-ubuntu22.04 [86-real;89] torch=- driver>=560.35.05 unknown warnings=0"},
        Scenario{"index_selects_cu121", Req().gpu("A100").cuda("12.4").torch("2.4.1").variant("cu121"),
                 "12.4.1 12.4.1-runtime-ubuntu22.04 [80] torch=cu121 driver>=550.54.15 unknown warnings=0"},
        Scenario{
            "index_selects_missing_variant", Req().gpu("A100").torch("2.4.1").variant("cu130"),
            "envpin: error: envpin.yaml:9:5: torch 2.4.1 has no cu130 wheels (its CUDA variants: cu118, cu121, cu124)\n"
            "envpin: hint: use one of its variants, or remove the index and let envpin choose\n"},
        Scenario{"os2404_cuda124", Req().gpu("A100").cuda("12.4").os("24.04"),
                 "envpin: error: --os: nvidia/cuda has no CUDA 12.4.1 image for ubuntu24.04\n"
                 "envpin: hint: set os to one of: ubuntu20.04, ubuntu22.04\n"},
        Scenario{"sm120_driver535_auto", Req().gpu("RTX 5090").driver("535.104.05"),
                 "envpin: error: --driver: driver 535.104.05 (--driver) cannot drive 'RTX 5090' (sm_120): its "
                 "architecture reached NVIDIA's driver with CUDA 12.8, in branch R570\n"
                 "envpin: hint: upgrade the fleet's driver to R570 or newer\n"},
        Scenario{"sm120_driver520_auto", Req().gpu("RTX 5090").driver("520.61.05"),
                 "envpin: error: --driver: driver 520.61.05 (--driver) cannot drive 'RTX 5090' (sm_120): its "
                 "architecture reached NVIDIA's driver with CUDA 12.8, in branch R570\n"
                 "envpin: hint: upgrade the fleet's driver to R570 or newer\n"},
        Scenario{"unpublished_patch", Req().gpu("A100").cuda("12.4.0"),
                 "envpin: error: --cuda: nvidia/cuda publishes no tag for CUDA 12.4.0 (kept: 12.4.1)\n"
                 "envpin: hint: use '--cuda 12.4' to get the newest published patch release\n"},
        Scenario{"no_tag_line", Req().gpu("A100").cuda("12.7"),
                 "envpin: error: --cuda: nvidia/cuda has no supported image for CUDA 12.7\n"
                 "envpin: hint: CUDA 12 images exist for 12.0, 12.1, 12.2, 12.3, 12.4, 12.5, 12.6, 12.8, 12.9\n"},
        Scenario{"torch20_on_python312", Req().gpu("A100").torch("2.0.1").python("3.12"),
                 "envpin: error: --torch: torch 2.0.1 (--torch) has no wheels for Python 3.12 (python.version at line "
                 "7): torch 2.0 supports Python 3.8 to 3.11\n"
                 "envpin: hint: use Python 3.11, or pin torch 2.2 or newer\n"},
        Scenario{"torch29_on_python39", Req().gpu("A100").torch("2.9.0").python("3.9"),
                 "envpin: error: --torch: torch 2.9.0 (--torch) has no wheels for Python 3.9 (python.version at line "
                 "7): torch 2.9 supports Python 3.10 to 3.14\n"
                 "envpin: hint: use Python 3.10, or pin torch 2.8 or older\n"},
        Scenario{"torch26_python313_auto", Req().gpu("H100").torch("2.6.0").python("3.13"),
                 "12.6.3 12.6.3-runtime-ubuntu22.04 [90] torch=cu126 driver>=560.35.05 unknown warnings=0"},
        Scenario{"k80_legacy_cuda11", Req().gpu("K80").cuda("11.8"),
                 "11.8.0 11.8.0-runtime-ubuntu22.04 [37] torch=- driver>=520.61.05 unknown warnings=0"},
        // No variant of the release runs the GPU: the GPU is the cause, and the hint is a closed
        // range when later releases dropped it (not "or newer").
        Scenario{"k80_torch28_names_the_gpu", Req().gpu("K80").torch("2.8.0"),
                 "envpin: error: --torch: torch 2.8.0 (--torch) has no wheels with kernels for 'K80' (sm_37): none "
                 "of its variants (cu126, cu128, cu129) does, so it would fail with \"no kernel image is available "
                 "for execution on the device\"\n"
                 "envpin: hint: use torch 2.7 (cu118), or an older release down to 1.7.0\n"},
        // Found by the fuzzer: numbers past INT_MAX in versions were std::out_of_range from std::stoi.
        Scenario{"huge_torch_version", Req().gpu("A100").torch("1111111111111111111111111.0.1"),
                 "13.2.1 13.2.1-runtime-ubuntu22.04 [80] torch=- driver>=595.58.03 unknown warnings=1"},
        Scenario{"huge_cuda_version", Req().gpu("A100").cuda("99999999999.0"),
                 "envpin: error: --cuda: CUDA 99999999999.0 (--cuda) is newer than envpin's table, whose newest line "
                 "is 13.2\n"
                 "envpin: hint: set --cuda to 13.2 or older, or update envpin\n"},
        Scenario{
            "k80_cuda12", Req().gpu("K80").cuda("12.0"),
            "envpin: error: --gpu: CUDA 12.0.1 (--cuda) cannot build code for 'K80' (sm_37); CUDA 11.0 to 11.8 can\n"
            "envpin: hint: set --cuda to 11.8 or older, or drop 'K80'\n"}),
    name_of);

TEST(CudaPolicy, PlatformIsNotTheHost) {
  // Same request with the platform left to its default and given explicitly: same decision.
  const CudaDecision implicit = decide_cuda(Req().gpu("H100").torch("2.9.0").get());
  const CudaDecision explicit_amd64 = decide_cuda(Req().gpu("H100").torch("2.9.0").amd64().get());
  EXPECT_EQ(decision_json(implicit), decision_json(explicit_amd64));
  EXPECT_EQ(implicit.platforms, std::vector<std::string>{"linux/amd64"});
}

TEST(CudaPolicy, ArchListHasSassForEveryGpuAndPtxForTheNewest) {
  const CudaDecision d = decide_cuda(Req().gpu("T4").gpu("A100").gpu("H100").gpu("L4").cuda("12.8").get());
  EXPECT_EQ(d.sms, (std::vector<int>{75, 80, 89, 90}));
  EXPECT_EQ(d.cmake_architectures, "75-real;80-real;89-real;90");
  EXPECT_EQ(d.torch_arch_list, "7.5;8.0;8.9;9.0+PTX");
  EXPECT_EQ(d.cmake_architectures.find("native"), std::string::npos);
}

TEST(CudaPolicy, MinorCompatWarningNamesTheDriverInput) {
  CudaRequest r = Req().gpu("H100").cuda("12.4").get();
  r.driver = Input<std::string>{"535.104.05", {"cuda.driver", diag::Location{"envpin.yaml", 7, 11}}};
  const CudaDecision d = decide_cuda(r);
  // Minor-version compatibility, and the branches between R535 and R550 that 12.4.1's start gate
  // does not list (R545 reports CUDA 12.3).
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_EQ(d.warnings[1].where->line, 7);
  EXPECT_NE(d.warnings[1].text.find("error 222"), std::string::npos);
  EXPECT_EQ(d.warnings[0].where->line, 7);
  EXPECT_EQ(d.warnings[0].text,
            "nodes on R545 (above the fleet's floor 535.104.05, below 550.54.14) would be refused at start: 12.4.1's "
            "NVIDIA_REQUIRE_CUDA does not list those branches");
}

TEST(CudaPolicy, ReasonsExplainEachChoice) {
  const CudaDecision d =
      decide_cuda(Req().gpu("A100").gpu("H100").cuda("12.4").torch("2.4.1").driver("550.54.15").get());
  ASSERT_EQ(d.reasons.size(), 7u);
  EXPECT_EQ(d.reasons[0], "toolkit: CUDA 12.4.1, the newest published 12.4 release");
  EXPECT_EQ(d.reasons[5], "start gate: the container starts: cuda>=12.4, and driver 550.54.15 reports CUDA 12.4");
  EXPECT_EQ(d.reasons[1], "GPUs: A100 (sm_80), H100 (sm_90)");
  EXPECT_EQ(d.reasons[4],
            "torch 2.4.1: cu124 wheels from https://download.pytorch.org/whl/cu124 (kernels for sm_50, sm_60, "
            "sm_70, sm_75, sm_80, sm_86, sm_90)");
}

TEST(CudaPolicy, ManifestOriginsAppearInErrors) {
  CudaRequest r;
  r.cuda = {"13.0", {"cuda.version", diag::Location{"envpin.yaml", 4, 12}}};
  r.gpus = {{"H100", {"cuda.gpus", diag::Location{"envpin.yaml", 5, 10}}}};
  r.torch = Input<std::string>{"2.4.1", {"python.packages", diag::Location{"envpin.yaml", 9, 7}}};
  try {
    decide_cuda(r);
    FAIL() << "expected a conflict";
  } catch (const diag::Error& e) {
    EXPECT_EQ(diag::format(e),
              "envpin: error: envpin.yaml:9:7: torch 2.4.1 (python.packages at line 9) has no wheels that fit a CUDA "
              "13.0.3 image (cuda.version at line 4): its variants are cu118, cu121, cu124, and one must be CUDA "
              "13.x at or below 13.0 (torch refuses to build extensions with an nvcc of another CUDA major, as "
              "DeepSpeed's and apex's builds do)\n"
              "envpin: hint: set cuda.version to 12.4, or pin a torch built for CUDA 13\n");
  }
}

}  // namespace
}  // namespace envpin::resolve

// SPDX-License-Identifier: Apache-2.0
// Issue 33: the CUDA verdict on situations public reports describe, 2025-2026 first. Each row is
// one report: the fleet, driver, platform and torch it names, the verdict envpin gives, and the
// fact of that verdict the report bears out (the image line and wheel variant that ran, or the
// cause of the failure it shows). Where a report does not state an input, the row says what it
// assumes. Reports were read as the public threads state them; none of their code is here.
#include <gtest/gtest.h>

#include <string>

#include "diag/error.hpp"
#include "resolve/cuda_policy.hpp"

namespace envpin::resolve {
namespace {

struct Report {
  const char* name;
  const char* source;  // the public report
  CudaRequest request;
  bool runs;          // the verdict: a decision (true) or a refusal (false)
  std::string shows;  // in the decision's summary or the refusal's text
};

class Row {
 public:
  Row& gpu(const std::string& g) {
    r_.gpus.push_back({g, {"--gpu", {}}});
    return *this;
  }
  Row& cuda(const std::string& v) {
    r_.cuda = {v, {"--cuda", {}}};
    return *this;
  }
  Row& driver(const std::string& v) {
    r_.driver = Input<std::string>{v, {"--driver", {}}};
    return *this;
  }
  Row& torch(const std::string& v) {
    r_.torch = Input<std::string>{v, {"--torch", {}}};
    return *this;
  }
  Row& variant(const std::string& v) {
    r_.torch_variant = Input<std::string>{v, {"--torch", {}}};
    return *this;
  }
  Row& arm64() {
    r_.platforms.push_back({manifest::Arch::arm64, {"--platform", {}}});
    return *this;
  }
  Row& forward_compat() {
    r_.forward_compat = Input<bool>{true, {"cuda.forward_compat", {}}};
    return *this;
  }
  operator CudaRequest() const { return r_; }  // NOLINT(google-explicit-constructor): rows read as data

 private:
  CudaRequest r_;
};

// "12.8.1 torch=cu128" for a decision; the error and hint for a refusal.
std::string verdict(const CudaRequest& r, bool& ran) {
  try {
    const CudaDecision d = decide_cuda(r);
    ran = true;
    return d.toolkit + " torch=" + (d.torch ? d.torch->variant : "-");
  } catch (const diag::Error& e) {
    ran = false;
    return diag::format(e);
  }
}

class CudaReport : public testing::TestWithParam<Report> {};

TEST_P(CudaReport, VerdictIsWhatTheReportShows) {
  const Report& row = GetParam();
  bool ran = false;
  const std::string v = verdict(row.request, ran);
  EXPECT_EQ(ran, row.runs) << row.source << "\n" << v;
  EXPECT_NE(v.find(row.shows), std::string::npos) << row.source << "\n" << v;
}

std::string report_name(const testing::TestParamInfo<Report>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(
    Reports, CudaReport,
    testing::Values(
        // --- the image's start gate ------------------------------------------------------------
        Report{"gate_rtx4050_r535_cuda128", "MauriceNino/dashdot#1226: RTX 4050 Laptop, 535.247.01, cuda>=12.8",
               Row().gpu("NVIDIA GeForce RTX 4050 Laptop GPU").driver("535.247.01").cuda("12.8"), false,
               "refuses to start nvidia/cuda:12.8.1"},
        Report{"gate_rtx3090ti_r570_cuda129", "TabbyML/tabby#4309: RTX 3090 Ti, 570.169 (CUDA 12.8), cuda>=12.9",
               Row().gpu("RTX 3090 Ti").driver("570.169").cuda("12.9"), false, "do not list geforce GPUs"},
        Report{"gate_v100_r530_cuda124",
               "vllm-project/vllm#5635: V100 on R530 (CUDA 12.1), vllm 0.5.0's CUDA 12.4 base",
               Row().gpu("V100").driver("530.30.02").cuda("12.4"), false, "do not list branch R530"},
        Report{"gate_v100_r550_cuda126_starts",
               "NVIDIA/cuda-quantum#3523: the maintainer's V100-PCIE-32GB on 550.163.01 runs the CUDA 12.6 image",
               Row().gpu("Tesla V100-PCIE-32GB").driver("550.163.01").cuda("12.6"), true, "12.6.3"},
        Report{"gate_datacenter_r535_cuda125_starts",
               "rapidsai/devcontainers#332: nvidia/cuda:12.5.0 runs on a lab machine with an R535 LTS driver (a "
               "data-center GPU assumed, as the brand exception it passes implies)",
               Row().gpu("A100").driver("535.104.05").cuda("12.5"), true, "12.5.1"},
        Report{"gate_r525_cuda125",
               "lightgbm-org/LightGBM#6539: CI hosts on 525.147.05 refused cuda>=12.5 (GPU not "
               "stated: R525 is in no exception of 12.5, for any brand)",
               Row().gpu("T4").driver("525.147.05").cuda("12.5"), false, "do not list branch R525"},
        Report{"gate_a100_r520_cuda121", "huggingface/text-generation-inference#1423: A100 80GB on 520.61.05",
               Row().gpu("NVIDIA A100 80GB PCIe").driver("520.61.05").cuda("12.1"), false,
               "set --cuda to 11.8 (the newest this driver runs fully)"},
        Report{"gate_r510_cuda117",
               "StatCan/aaw#1544: driver 510.47.03 refused cuda>=11.7 (GPU not stated: R510 is in "
               "no exception of 11.7)",
               Row().gpu("A100").driver("510.47.03").cuda("11.7"), false, "do not list branch R510"},
        Report{"gate_r440_cuda118", "NVIDIA/nvidia-docker#1762: 440.33.01 and nvidia/cuda:11.8.0",
               Row().gpu("V100").driver("440.33.01").cuda("11.8"), false, "but --driver is 440.33.01"},
        Report{
            "gate_gtx1080ti_r550_cuda126", "ggml-org/llama.cpp#9665: GTX 1080 Ti, 550.142, llama.cpp's CUDA 12.6 image",
            Row().gpu("NVIDIA GeForce GTX 1080 Ti").driver("550.142").cuda("12.6"), false, "do not list geforce GPUs"},
        // --- GeForce past a 12.1-12.4 gate: error 804 --------------------------------------------
        Report{"e804_gtx1050ti_r525_cuda121",
               "oobabooga/textgen#4407: GTX 1050 Ti on 525.125.06, CUDA 12.1 image: Error 804; fixed by 535.113.01",
               Row().gpu("GeForce GTX 1050 Ti").driver("525.125.06").cuda("12.1"), false, "error 804"},
        Report{"e804_gtx1050ti_r535_cuda121_runs",
               "oobabooga/textgen#4407, after the upgrade to 535.113.01 (CUDA 12.2)",
               Row().gpu("GeForce GTX 1050 Ti").driver("535.113.01").cuda("12.1"), true, "12.1.1"},
        Report{"e804_rtx3090_r525_cuda121",
               "AIR-DISCOVER/ICRA2024-Sim2Real-AXS#5: RTX 3090, driver 525, CUDA 12.1 image",
               Row().gpu("RTX 3090").driver("525.85.12").cuda("12.1").torch("2.1.0"), false, "error 804"},
        Report{"e804_rtx4090_r535_cuda124", "vllm-project/vllm#5283: RTX 4090 on 535.171.04, vllm's CUDA 12.4 image",
               Row().gpu("NVIDIA GeForce RTX 4090").driver("535.171.04").cuda("12.4"), false, "error 804"},
        Report{"e804_rtx3060_r525_cuda121",
               "mistralai/mistral-inference#144: a 12 GB GeForce on 525.147.05 (CUDA 12.0)",
               Row().gpu("RTX 3060").driver("525.147.05").cuda("12.1"), false, "error 804"},
        // --- Blackwell -------------------------------------------------------------------------
        Report{"bw_rtx_pro6000_torch26",
               "xorbitsai/inference#3866: RTX PRO 6000 Blackwell Workstation, 570.133.07, "
               "a torch with sm_50 to sm_90",
               Row().gpu("NVIDIA RTX PRO 6000 Blackwell Workstation Edition").driver("570.133.07").torch("2.6.0"),
               false, "no wheels with kernels for 'NVIDIA RTX PRO 6000 Blackwell Workstation Edition' (sm_120)"},
        Report{"bw_rtx_pro6000_torch27_runs", "xorbitsai/inference#3866: the fix is a cu128 build",
               Row().gpu("NVIDIA RTX PRO 6000 Blackwell Workstation Edition").driver("570.133.07").torch("2.7.1"), true,
               "12.8.1 torch=cu128"},
        Report{"bw_rtx5090_torch251_cu121", "pytorch/pytorch#160804: RTX 5090 on 590.48.01, torch 2.5.1 from cu121",
               Row().gpu("NVIDIA GeForce RTX 5090").driver("590.48.01").torch("2.5.1").variant("cu121"), false,
               "carry no kernels for 'NVIDIA GeForce RTX 5090' (sm_120)"},
        Report{"bw_rtx5090d_torch26_cu126",
               "HybridRobotics/berkeley-humanoid-lite#49: RTX 5090 D, 570.124.04, 2.6.0+cu126",
               Row().gpu("NVIDIA GeForce RTX 5090 D").driver("570.124.04").torch("2.6.0").variant("cu126"), false,
               "use torch 2.7 or newer (cu128)"},
        Report{"bw_rtx5070ti_framepack_cu126", "lllyasviel/FramePack#805: RTX 5070 Ti, torch 2.6 + cu126",
               Row().gpu("NVIDIA GeForce RTX 5070 Ti").torch("2.6.0").variant("cu126"), false, "(sm_120)"},
        Report{"bw_rtx5090_torch220_cu121", "pytorch/pytorch#150733: RTX 5090 on 570.181, torch 2.2.0+cu121",
               Row().gpu("RTX 5090").driver("570.181").torch("2.2.0").variant("cu121"), false,
               "use torch 2.7 or newer (cu128)"},
        Report{"bw_rtx5090_torch250_cuda121", "mir-aidj/all-in-one#35: RTX 5090, CUDA 12.1, torch 2.5.0+cu121",
               Row().gpu("RTX 5090").cuda("12.1").torch("2.5.0"), false,
               "use torch 2.7 or newer (cu128), and set --cuda to 12.8 or newer"},
        Report{"bw_rtx5080_cuda118", "xsuite/xsuite#716: RTX 5080 on R580 with cudatoolkit 11.8",
               Row().gpu("NVIDIA GeForce RTX 5080").driver("580.65.06").cuda("11.8"), false,
               "set --cuda to 12.8 or newer"},
        Report{"bw_b200_torch26", "ovg-project/kvcached#111: B200 with a torch built for sm_50 to sm_90",
               Row().gpu("NVIDIA B200").torch("2.6.0"), false, "(sm_100)"},
        Report{"bw_b200_r570_torch27_runs",
               "sgl-project/sglang#5071: B200 on driver 570 (CUDA 12.8) needs a cu128 torch",
               Row().gpu("NVIDIA B200").driver("570.124.06").torch("2.7.0"), true, "12.8.1 torch=cu128"},
        Report{"bw_rtx5070ti_invoke_torch270_cu126",
               "invoke-ai/InvokeAI#8047: RTX 5070 Ti, torch 2.7.0 built for cu126",
               Row().gpu("RTX 5070 Ti").torch("2.7.0").variant("cu126"), false, "use torch 2.7.0+cu128"},
        Report{"bw_rtx5090_r570_cuda124_image",
               "nvidia-cosmos/cosmos-reason1#21: RTX 5090 on 570.144 in "
               "nvidia/cuda:12.4.1-devel with torch 2.2.2",
               Row().gpu("NVIDIA GeForce RTX 5090").driver("570.144").cuda("12.4").torch("2.2.2"), false,
               "has no wheels with kernels for 'NVIDIA GeForce RTX 5090' (sm_120)"},
        Report{"bw_rtx5070_cuda122_image",
               "yamada-sexta/rvc-webgui-fork#21: RTX 5070 in nvidia/cuda:12.2.2; the fix is "
               "nvidia/cuda:12.8.1",
               Row().gpu("NVIDIA GeForce RTX 5070").cuda("12.2"), false, "set --cuda to 12.8 or newer"},
        Report{"bw_rtx5060ti_r580_cu128_runs",
               "lllyasviel/Fooocus#4102: RTX 5060 Ti on R580 (CUDA 13) with cu128 torch",
               Row().gpu("RTX 5060 Ti").driver("580.65.06").torch("2.7.1"), true, "torch=cu128"},
        // --- torch 1.x on Ampere, Ada, Hopper --------------------------------------------------
        Report{"t1_h100_torch201_cu117", "pytorch/pytorch#110153: H100 PCIe on 535.104.12, torch 2.0.1+cu117",
               Row().gpu("NVIDIA H100 PCIe").driver("535.104.12").torch("2.0.1").variant("cu117"), false,
               "sm_90 needs CUDA 11.8 or newer"},
        Report{"t1_h800_torch111", "ml4bio/Dense-Homolog-Retrieval#28: H800 with a 1.x torch (sm_37 to sm_86)",
               Row().gpu("NVIDIA H800").torch("1.11.0"), false, "use torch 2.0 or newer (cu118)"},
        Report{"t1_h100_torch1131_cu117", "PKU-YuanGroup/Open-Sora-Plan#39: H100 PCIe, torch 1.13.1+cu117",
               Row().gpu("NVIDIA H100 PCIe").torch("1.13.1").variant("cu117"), false, "(sm_90)"},
        Report{"t1_a100_r450_torch181_cu102", "pytorch/pytorch#57922: A100 (MIG) on 450.80.02, torch 1.8.1+cu102",
               Row().gpu("A100-SXM4-40GB").driver("450.80.02").torch("1.8.1").variant("cu102"), false,
               "use torch 1.8.1+cu111"},
        Report{"t1_a100_torch1121_cu116_runs",
               "AUTOMATIC1111/stable-diffusion-webui#702: A100 runs torch==1.12.1+cu116",
               Row().gpu("A100-SXM4-40GB").torch("1.12.1").variant("cu116"), true, "11.6.2 torch=cu116"},
        Report{"t1_a100_torch16", "PrateekMunjal/TorchAL#4: A100 with torch 1.6.0",
               Row().gpu("NVIDIA A100-PCIE-40GB").torch("1.6.0"), false, "predates"},
        Report{"t1_rtx3090_torch181_cu101", "mit-han-lab/bevfusion#283: RTX 3090 with CUDA 10.1 and torch 1.8.1+cu101",
               Row().gpu("RTX 3090").torch("1.8.1").variant("cu101"), false, "use torch 1.8.1+cu111"},
        Report{"t1_rtx3090_torch1110_cu113_runs", "niuchuangnn/SPICE#26: RTX 3090 runs torch 1.11.0 with CUDA 11.3",
               Row().gpu("RTX 3090").torch("1.11.0").variant("cu113"), true, "11.4.3 torch=cu113"},
        Report{"t1_rtx3090_torch1121_cu113_runs",
               "limhoyeon/ToothGroupNetwork#16: torch==1.12.1+cu113 on an RTX 3090 "
               "server with 550.54.15",
               Row().gpu("RTX 3090").driver("550.54.15").torch("1.12.1").variant("cu113"), true, "torch=cu113"},
        Report{"t1_rtx4090_torch181_cu102", "MIC-DKFZ/BodyPartRegression#7: RTX 4090 with torch 1.8.1 (cu102)",
               Row().gpu("NVIDIA GeForce RTX 4090").torch("1.8.1").variant("cu102"), false, "use torch 1.8.1+cu111"},
        Report{"t1_a40_torch_cu102", "georgia-tech-db/evadb#471: A40 with a cu102 torch (sm_37 to sm_70)",
               Row().gpu("NVIDIA A40").torch("1.10.2").variant("cu102"), false, "(sm_86)"},
        Report{"t1_rtx3090_torch171_cu110", "pytorch/pytorch#49161: RTX 3090 runs torch==1.7.1+cu110",
               Row().gpu("RTX 3090").torch("1.7.1"), true, "torch=cu110"},
        // --- arm64 servers ---------------------------------------------------------------------
        Report{"arm_gb200_r570_torch280_cu129_runs", "sgl-project/sglang#11208: GB200 on 570.172.08, torch 2.8.0+cu129",
               Row().gpu("NVIDIA GB200").arm64().driver("570.172.08").torch("2.8.0").variant("cu129"), true,
               "12.9.1 torch=cu129"},
        Report{"arm_gb200_r580_torch291_cu130_runs", "vllm-project/vllm#33543: GB200 on 580.95.05, torch 2.9.1+cu130",
               Row().gpu("NVIDIA GB200").arm64().driver("580.95.05").torch("2.9.1").variant("cu130"), true,
               "torch=cu130"},
        Report{"arm_hgx_gb200_r570_torch271_cu128_runs", "NVIDIA/nccl#1769: HGX GB200 on 570.124.06, torch 2.7.1+cu128",
               Row().gpu("HGX GB200").arm64().driver("570.124.06").torch("2.7.1").variant("cu128"), true,
               "12.8.1 torch=cu128"},
        Report{"arm_gb10_r580_torch210_cu130_runs",
               "Blizaine/Maestro#55: DGX Spark (GB10) on 580.159.03 with cu130 wheels",
               Row().gpu("DGX Spark").arm64().driver("580.159.03").torch("2.10.0").variant("cu130"), true,
               "torch=cu130"},
        Report{"arm_thor_torch2100_cu130_runs", "vllm-project/vllm#34470: NVIDIA Thor, torch 2.10.0+cu130",
               Row().gpu("NVIDIA Thor").arm64().torch("2.10.0").variant("cu130"), true, "torch=cu130"},
        Report{"arm_thor_torch291_cu128",
               "OpenRAL/openral#167's 2.9.1+cu128 arch list lacks sm_110: on a Thor it fails",
               Row().gpu("NVIDIA Thor").arm64().torch("2.9.1").variant("cu128"), false, "use torch 2.9.1+cu130"},
        Report{"arm_gb10_torch2100_runs",
               "hanyeol/model-compose#24: a DGX Spark needs torch==2.10.0+cu130, not PyPI's CPU "
               "build",
               Row().gpu("NVIDIA GB10").arm64().torch("2.10.0"), true, "torch=cu130"},
        // --- driver too old, forward compatibility --------------------------------------------
        Report{"fwd_a100_r575_cu130",
               "lucas-maes/le-wm#22: A100 on 575.51.03, a CUDA 13 torch: \"driver too old "
               "(found version 12090)\"",
               Row().gpu("NVIDIA A100-SXM4-40GB").driver("575.51.03").torch("2.9.0").variant("cu130"), false,
               "use torch 2.9.0+cu128"},
        Report{"fwd_h20_r535_torch26_cu124_runs", "vllm-project/vllm#19071: H20 on 535.161.08 runs torch 2.6.0+cu124",
               Row().gpu("NVIDIA H20").driver("535.161.08").torch("2.6.0").variant("cu124"), true,
               "12.4.1 torch=cu124"},
        Report{"fwd_h20_r535_torch230_cu121_runs", "vllm-project/vllm#5001: H20 on 535.161.08 runs torch 2.3.0+cu121",
               Row().gpu("NVIDIA H20").driver("535.161.08").torch("2.3.0").variant("cu121"), true, "torch=cu121"},
        Report{"fwd_h100_r535_cuda129_runs",
               "flagos-ai/FlagGems#4734: H100 on 535.183.06 runs CUDA 12.9 through the "
               "data-center exception",
               Row().gpu("NVIDIA H100 80GB HBM3").driver("535.183.06").cuda("12.9"), true, "12.9.1"},
        Report{"fwd_r535_cuda130_datacenter_runs",
               "dstackai/dstack#4007: nvidia/cuda:13.0.3 runs on R535 data-center "
               "hosts through cuda-compat-13 (an H100 assumed)",
               Row().gpu("H100").driver("535.104.05").cuda("13.0").forward_compat(), true, "13.0.3"},
        Report{"fwd_rtx5090_r580_cuda131",
               "EricLBuehler/mistral.rs#1858: RTX 5090 on 580.126.09 in "
               "nvidia/cuda:13.1.1: \"forward compatibility was attempted on non supported HW\"",
               Row().gpu("NVIDIA GeForce RTX 5090").driver("580.126.09").cuda("13.1"), false,
               "do not list geforce GPUs"},
        Report{"fwd_v100_r530_cuda121_runs", "TabbyML/tabby#1034: V100-PCIE-32GB on 530.30.02 (CUDA 12.1)",
               Row().gpu("Tesla V100-PCIE-32GB").driver("530.30.02").cuda("12.1"), true, "12.1.1"},
        Report{"fwd_gb200_cuda13_r570",
               "Frogging-Family/nvidia-all#346: CUDA 13 needs R580 without cuda-compat (a GB200 "
               "on R570 assumed for the data-center case)",
               Row().gpu("GB200").arm64().driver("570.124.06").cuda("13.0"), false, "set cuda.forward_compat: true"}),
    report_name);

}  // namespace
}  // namespace envpin::resolve

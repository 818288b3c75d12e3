// SPDX-License-Identifier: Apache-2.0
// `envpin cuda` through the real binary: flags, manifests, --json, --probe with fakes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.hpp"

namespace envpin {
namespace {

class CudaCli : public Cli {};

TEST_F(CudaCli, FlagsPrintTheDecisionAndWhy) {
  const Result r = run("cuda --gpu H100 --driver 535.104.05 --torch 2.4.1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "CUDA 12.1.1\n"
            "  image          nvidia/cuda:12.1.1-runtime-ubuntu22.04\n"
            "  smoke stage    nvidia/cuda:12.1.1-devel-ubuntu22.04 (nvcc)\n"
            "  platforms      linux/amd64\n"
            "  gpus           H100 (sm_90)\n"
            "  cmake archs    90\n"
            "  torch archs    9.0+PTX\n"
            "  driver         >= 530.30.02 (minor-version compatibility: >= 525.60.13)\n"
            "  fleet driver   535.104.05 (full compatibility)\n"
            "  torch          2.4.1 cu121 from https://download.pytorch.org/whl/cu121\n"
            "why:\n"
            "  - toolkit: CUDA 12.1.1, the newest that builds for every fleet GPU, has torch 2.4.1 wheels, runs on "
            "driver 535.104.05, matching the torch cu121 wheels\n"
            "  - GPUs: H100 (sm_90)\n"
            "  - arch list: SASS for sm_90, PTX compute_90 for GPUs newer than the fleet\n"
            "  - driver: needs driver >= 530.30.02 (packaged with CUDA 12.1.1), or >= 525.60.13 with minor-version "
            "compatibility; the fleet's 535.104.05 runs it fully\n"
            "  - torch 2.4.1: cu121 wheels from https://download.pytorch.org/whl/cu121 (kernels for sm_50, sm_60, "
            "sm_70, sm_75, sm_80, sm_86, sm_90)\n"
            "  - start gate: the container starts: cuda>=12.1, and driver 535.104.05 reports CUDA 12.2\n"
            "  - image: nvidia/cuda:12.1.1-runtime-ubuntu22.04\n");
}

TEST_F(CudaCli, ConflictExitsOneWithTheFlagNamed) {
  const Result r = run("cuda --gpu V100 --cuda 13.0");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "envpin: error: --gpu: CUDA 13.0.3 (--cuda) cannot build code for 'V100' (sm_70); CUDA 11.0 to 12.9 can\n"
            "envpin: hint: set --cuda to 12.9 or older, or drop 'V100'\n");
}

TEST_F(CudaCli, ReadsTheManifestWithItsLocations) {
  write("envpin.yaml",
        "envpin: 1\nname: x\ncuda:\n  version: '13.0'\n  gpus: [H100]\npython:\n  version: '3.11'\n"
        "  packages: [torch==2.4.1]\n");
  const Result r = run("cuda");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml:8:14: torch 2.4.1 (python.packages at line 8) has no wheels that fit a CUDA "
            "13.0.3 image (cuda.version at line 4): its variants are cu118, cu121, cu124, and one must be CUDA 13.x "
            "at or below 13.0 (torch refuses to build extensions with an nvcc of another CUDA major, as DeepSpeed's "
            "and apex's builds do)\n"
            "envpin: hint: set cuda.version to 12.4, or pin a torch built for CUDA 13\n");
  // The same error from `generate`, which writes nothing.
  EXPECT_EQ(run("generate").err, r.err);
  EXPECT_EQ(listing(), std::vector<std::string>{"envpin.yaml"});
  // Flags override the manifest: what would CUDA 12.4 give?
  const Result what_if = run("cuda -f envpin.yaml --cuda 12.4");
  EXPECT_EQ(what_if.code, 0) << what_if.err;
  EXPECT_EQ(what_if.out.substr(0, what_if.out.find('\n')), "CUDA 12.4.1");
}

TEST_F(CudaCli, EmptyGpuListIsAnError) {
  write("envpin.yaml", "envpin: 1\nname: x\ncuda: {version: '12.4', gpus: []}\n");
  const Result r = run("cuda");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml:3:31: no GPUs given: the arch list and the toolkit depend on the fleet's GPUs\n"
            "envpin: hint: list them under cuda.gpus, e.g. 'gpus: [A100, H100]'\n");
}

TEST_F(CudaCli, ManifestWithoutCuda) {
  write("envpin.yaml", "envpin: 1\nname: x\n");
  const Result r = run("cuda");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(
      r.err,
      "envpin: error: envpin.yaml: envpin.yaml has no cuda section\n"
      "envpin: hint: add one (see the cuda.* keys in docs/manifest-guide.md), or pass --gpu/--cuda to ask without a manifest\n");
}

// A refusal with --json: the same object on stdout, with the error where the decision would be.
TEST_F(CudaCli, JsonRefusalIsAnObjectToo) {
  const Result r = run("cuda --gpu 'A100,V100' --json");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::parse(R"({"decision": null, "machine": null, "error": {
      "message": "'A100,V100' names 2 GPUs in one entry", "file": "--gpu", "line": null, "column": null,
      "hint": "give each GPU its own entry: a YAML list (gpus: [A100, V100]) or one --gpu per GPU"}})"));
  EXPECT_EQ(r.err,
            "envpin: error: --gpu: 'A100,V100' names 2 GPUs in one entry\n"
            "envpin: hint: give each GPU its own entry: a YAML list (gpus: [A100, V100]) or one --gpu per GPU\n");
  // No PTX is null, not 0.
  const auto ok = nlohmann::json::parse(run("cuda --gpu A100 --torch 2.4.1 --json").out);
  EXPECT_TRUE(ok["decision"]["torch"]["ptx"].is_null()) << ok.dump();
  EXPECT_TRUE(ok["decision"]["torch"]["range"].is_null());
  EXPECT_EQ(nlohmann::json::parse(run("cuda --gpu V100 --torch '>=2.7' --json").out)["decision"]["torch"]["range"],
            ">=2.7");
}

TEST_F(CudaCli, JsonIsTheDecision) {
  const Result r = run("cuda --gpu A100 --gpu 'RTX 5090' --torch 2.7.0+cu128 --json");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"cmake_architectures\": \"80-real;120\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"torch_cuda_arch_list\": \"8.0;12.0+PTX\""), std::string::npos);
  EXPECT_NE(r.out.find("\"variant\": \"cu128\""), std::string::npos);
  EXPECT_NE(r.out.find("\"toolkit\": \"12.8.1\""), std::string::npos);
  // One shape whatever the flags: decision, machine (null without --probe), error (null).
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["machine"].is_null());
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_EQ(j.size(), 3u);
  EXPECT_EQ(j["decision"]["torch"]["ptx"], 120);
  // Same bytes every time.
  EXPECT_EQ(run("cuda --gpu A100 --gpu 'RTX 5090' --torch 2.7.0+cu128 --json").out, r.out);
}

TEST_F(CudaCli, BadFlagValues) {
  EXPECT_EQ(run("cuda --gpu H100 --platform linux/riscv64").err,
            "envpin: error: --platform: unsupported platform 'linux/riscv64'\n"
            "envpin: hint: use linux/amd64 or linux/arm64\n");
  EXPECT_EQ(run("cuda --gpu H100 --os debian12").err,
            "envpin: error: --os: nvidia/cuda images are built on Ubuntu, not 'debian12'\n"
            "envpin: hint: use --os ubuntu22.04 or --os ubuntu24.04\n");
  EXPECT_EQ(run("cuda --gpu H100 --driver latest").code, 1);
  EXPECT_EQ(run("cuda --gpu H100 --cuda twelve").err,
            "envpin: error: --cuda: invalid CUDA version 'twelve'\n"
            "envpin: hint: give the toolkit as x.y or x.y.z, e.g. '--cuda 12.4', or 'auto'\n");
  EXPECT_EQ(run("cuda --gpu").code, 2);
}

TEST_F(CudaCli, ProbeWithoutAGpu) {
  const Result r = run("cuda --probe",
                       "ENVPIN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 ENVPIN_NVIDIA_PROC_VERSION=/nonexistent "
                       "ENVPIN_CUDART_LIBRARY=/nonexistent/libcudart.so "
                       "PATH=/usr/bin:/bin CUDACXX=" +
                           std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes/nvcc");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("  note")),
            "this machine\n"
            "  driver         none: no NVIDIA driver or GPU found\n"
            "  cuda runtime   none\n"
            "  nvcc           13.0.88 (" +
                std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes/nvcc)\n");
  EXPECT_EQ(r.out.find("\nCUDA "), std::string::npos) << "no decision without GPUs";
}

TEST_F(CudaCli, ProbeDecidesForThisMachinesGpusAndDriver) {
  const std::string fakes = std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes";
  const Result r = run("cuda --probe", "ENVPIN_NVML_LIBRARY=" + std::string(ENVPIN_FAKE_NVML) +
                                           " PATH=/usr/bin:/bin CUDACXX=" + fakes + "/nvcc");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("  cuda runtime")),
            "this machine\n"
            "  driver         550.54.15 (runs CUDA <= 12.4) via nvml\n"
            "  gpu 0          NVIDIA H100 80GB HBM3, sm_90 (9.0), 81559 MiB\n"
            "  gpu 1          NVIDIA A100-SXM4-80GB, sm_80 (8.0), 81920 MiB\n");
  // Driver 550.54.15 runs CUDA 12.4.1 fully and nothing newer: that is the choice.
  EXPECT_NE(r.out.find("\nCUDA 12.4.1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  cmake archs    80-real;90\n"), std::string::npos);
  const Result smi = run("cuda --probe --json", "ENVPIN_NVML_LIBRARY=/nonexistent PATH=" + fakes + ":/usr/bin:/bin");
  EXPECT_EQ(smi.code, 0) << smi.err;
  EXPECT_NE(smi.out.find("\"source\": \"nvidia-smi\""), std::string::npos) << smi.out;
  EXPECT_NE(smi.out.find("\"cmake_architectures\": \"75-real;89\""), std::string::npos);
}

// cuda.require_check: off: check_env never says "ok" for the bypassed start gate; without
// --smoke the line is "not checked", with --smoke the smoke kernel's own line is the check.
TEST_F(CudaCli, RequireCheckOffIsCheckedBySmokeOnly) {
  write("envpin.yaml",
        "envpin: 1\nname: gate\ncuda:\n  version: \"12.4\"\n  gpus: [A100]\n  driver: 545.23.08\n"
        "  require_check: off\n");
  ASSERT_EQ(run("generate").code, 0);
  write("stub/nvidia-smi", "#!/bin/sh\nprintf '545.23.08, NVIDIA A100-SXM4-80GB\\n'\n");
  fs::permissions(dir_ / "stub/nvidia-smi", fs::perms::owner_all);
  const auto check_env = [&](const std::string& args) {
    const std::string cmd =
        "cd '" + dir_.string() + "' && PATH=\"$PWD/stub:$PATH\" sh .envpin/check_env.sh " + args + " > check.out 2>&1";
    EXPECT_NE(std::system(cmd.c_str()), -1);
    return io::read_file(dir_ / "check.out").value_or("");
  };
  const std::string plain = check_env("");
  EXPECT_NE(plain.find("skip     gpu.start_gate           NVIDIA_DISABLE_REQUIRE=1 (cuda.require_check: off) skipped "
                       "the image's start gate on driver 545.23.08: run check_env --smoke to show that CUDA runs; "
                       "not checked"),
            std::string::npos)
      << plain;
  const std::string smoke = check_env("--smoke");
  EXPECT_NE(smoke.find("gpu.start_gate           NVIDIA_DISABLE_REQUIRE=1 (cuda.require_check: off) skipped the "
                       "image's start gate on driver 545.23.08: smoke.kernel below is the check"),
            std::string::npos)
      << smoke;
  EXPECT_NE(smoke.find("smoke.kernel"), std::string::npos) << smoke;
  EXPECT_EQ((plain + smoke).find("ok       gpu.start_gate"), std::string::npos);
}

// Issue 33, item 5: the inputs as users type them. Each of these was refused, or read as
// something else, before.
TEST_F(CudaCli, InputsAsUsersTypeThem) {
  // nvidia-smi's header "CUDA Version: 12.9" given as the driver: the first driver reporting it.
  const Result header = run("cuda --gpu A100 --driver 12.9");
  EXPECT_EQ(header.code, 0) << header.err;
  EXPECT_NE(header.err.find("--driver 12.9 is the CUDA version nvidia-smi prints, not a driver: drivers report it "
                            "from 575.51.03 on"),
            std::string::npos)
      << header.err;
  EXPECT_NE(header.out.find("  fleet driver   575.51.03 "), std::string::npos) << header.out;
  const Result nonsense = run("cuda --gpu A100 --driver 12.7");
  EXPECT_EQ(nonsense.code, 1);
  EXPECT_NE(nonsense.err.find("is no NVIDIA driver version, nor a CUDA version a driver reports"), std::string::npos);
  // A branch, and spaces pasted around values.
  const Result branch = run("cuda --gpu ' A100 ' --driver 'R535 ' --torch ' 2.4.1'");
  EXPECT_EQ(branch.code, 0) << branch.err;
  EXPECT_NE(branch.out.find("  fleet driver   535 "), std::string::npos) << branch.out;
  // A requirement with the name in it, a range.
  const Result range = run("cuda --gpu A100 --torch 'torch>=2.6,<2.8'");
  EXPECT_EQ(range.code, 0) << range.err;
  EXPECT_NE(range.out.find("  torch          2.7 cu128"), std::string::npos) << range.out;
  // +cpu is the CPU build, not a CUDA variant that is missing.
  const Result cpu = run("cuda --gpu A100 --torch 2.4.1+cpu");
  EXPECT_EQ(cpu.code, 1);
  EXPECT_EQ(cpu.err,
            "envpin: error: --torch: torch 2.4.1+cpu (--torch) is the CPU-only build: no CUDA kernel runs in it\n"
            "envpin: hint: drop '+cpu' and let envpin choose the CUDA variant, or remove the cuda section for a "
            "CPU-only image\n");
  // A line past the table is named as that, not as a GPU it cannot build for.
  const Result newer = run("cuda --gpu A100 --cuda 13.5");
  EXPECT_EQ(newer.code, 1);
  EXPECT_NE(newer.err.find("CUDA 13.5 (--cuda) is newer than envpin's table, whose newest line is 13.2"),
            std::string::npos)
      << newer.err;
  // SKUs as nvidia-smi prints them.
  for (const char* gpu : {"'NVIDIA H800'", "'NVIDIA A800-SXM4-80GB'", "L20-2-PCIE-48GB-48GB-L-H-V", "'NVIDIA H20-3e'",
                          "'NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition'"}) {
    const Result sku = run(std::string("cuda --gpu ") + gpu);
    EXPECT_EQ(sku.code, 0) << gpu << "\n" << sku.err;
  }
  const Result spark = run("cuda --gpu 'DGX Spark' --platform linux/arm64 --json");
  EXPECT_NE(spark.out.find("\"sm\": 121"), std::string::npos) << spark.out;
  // A guess crosses no architecture: "L2O" is nearest L20 alone, a guess; "H1000" is as near H100
  // (Hopper) as T1000 (Turing), so no guess, both named with their SMs.
  EXPECT_NE(run("cuda --gpu L2O").err.find("(did you mean 'L20'?)"), std::string::npos);
  EXPECT_NE(run("cuda --gpu H1000").err.find("names like it are other architectures: H100 (sm_90), T1000 (sm_75)"),
            std::string::npos);
}

}  // namespace
}  // namespace envpin

// SPDX-License-Identifier: Apache-2.0
// The GPU probe on recorded tool output (tests/fakes/recorded) and on an NVML-shaped library.
#include <gtest/gtest.h>

#include <cstdlib>

#include "io/atomic_file.hpp"
#include "probe/gpu_probe.hpp"

namespace envpin::probe {
namespace {

std::string recorded(const std::string& name) {
  return *io::read_file(std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes/recorded/" + name);
}

TEST(Probe, ParsesNvidiaSmiQuery) {
  GpuProbe p;
  std::string error;
  ASSERT_TRUE(parse_smi_query(recorded("smi-query-l4-t4.csv"), p, error)) << error;
  EXPECT_EQ(p.driver, "535.104.05");
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_EQ(p.gpus[0].name, "NVIDIA L4");
  EXPECT_EQ(p.gpus[0].sm, 89);
  EXPECT_EQ(p.gpus[0].memory_mib, 23034u);
  EXPECT_EQ(p.gpus[1].name, "Tesla T4");
  EXPECT_EQ(p.gpus[1].sm, 75);
}

TEST(Probe, RejectsUnexpectedNvidiaSmiOutput) {
  GpuProbe p;
  std::string error;
  EXPECT_FALSE(parse_smi_query("Field \"compute_cap\" is not a valid field to query.\n", p, error));
  EXPECT_EQ(error,
            "unexpected line 'Field \"compute_cap\" is not a valid field to query.' (want name, compute_cap, "
            "memory.total, driver_version)");
}

TEST(Probe, ParsesVersions) {
  EXPECT_EQ(parse_smi_cuda_version(recorded("smi-banner-l4-t4.txt")), "12.2");
  EXPECT_EQ(parse_smi_cuda_version(recorded("smi-no-driver.txt")), "");
  EXPECT_EQ(parse_nvcc_version(recorded("nvcc-version-13.0.txt")), "13.0.88");
  EXPECT_EQ(parse_nvcc_version("nvcc: command not found"), "");
  EXPECT_EQ(parse_proc_version(recorded("proc-driver-version.txt")), "550.54.15");
  EXPECT_EQ(parse_proc_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build\n"),
            "570.124.06");
  EXPECT_EQ(cuda_version_text(12040), "12.4");
  EXPECT_EQ(cuda_version_text(13000), "13.0");
}

ProbeOptions nothing_there() {
  ProbeOptions o;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.proc_version = "/nonexistent/version";
  o.path = "/nonexistent";
  o.cudacxx = "/nonexistent/nvcc";
  o.cudart = {"/nonexistent/libcudart.so"};
  return o;
}

TEST(Probe, NoGpuSaysSoCleanly) {
  ProbeOptions o = nothing_there();
  const GpuProbe p = probe_machine(o);
  EXPECT_EQ(p.source, "");
  EXPECT_TRUE(p.gpus.empty());
  ASSERT_GE(p.notes.size(), 4u);
  EXPECT_EQ(p.notes[3], "CUDA runtime: no libcudart found by the dynamic loader");
  EXPECT_EQ(p.notes[0].rfind("NVML: /nonexistent/libnvidia-ml.so.1: cannot open shared object file", 0), 0u)
      << p.notes[0];
  EXPECT_EQ(p.notes[1], "nvidia-smi: not found on PATH");
  EXPECT_EQ(p.notes[2], "/nonexistent/version: not present (no NVIDIA kernel driver loaded)");
  EXPECT_NE(format_probe(p).find("driver         none: no NVIDIA driver or GPU found"), std::string::npos);
}

TEST(Probe, LoadsNvmlWithDlopen) {
  ProbeOptions o = nothing_there();
  o.nvml_library = ENVPIN_FAKE_NVML;
  const GpuProbe p = probe_machine(o);
  EXPECT_EQ(p.source, "nvml");
  EXPECT_EQ(p.driver, "550.54.15");
  EXPECT_EQ(p.cuda_driver, "12.4");
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_EQ(p.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(p.gpus[0].sm, 90);
  EXPECT_EQ(p.gpus[0].memory_mib, 81559u);
  EXPECT_EQ(p.gpus[1].sm, 80);
}

TEST(Probe, FallsBackToNvidiaSmiWhenNvmlFails) {
  ProbeOptions o = nothing_there();
  o.nvml_library = ENVPIN_FAKE_NVML;
  o.path = std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes";
  setenv("FAKE_NVML_MODE", "init_fails", 1);
  const GpuProbe p = probe_machine(o);
  unsetenv("FAKE_NVML_MODE");
  EXPECT_EQ(p.source, "nvidia-smi");
  EXPECT_EQ(p.driver, "535.104.05");
  EXPECT_EQ(p.cuda_driver, "12.2");
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_EQ(p.gpus[1].sm, 75);
  ASSERT_FALSE(p.notes.empty());
  EXPECT_EQ(p.notes[0], "NVML: nvmlInit failed: Driver Not Loaded");
}

TEST(Probe, NvidiaSmiFailureIsANote) {
  ProbeOptions o = nothing_there();
  o.path = std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes";
  setenv("FAKE_SMI_FAIL", "1", 1);
  const GpuProbe p = probe_machine(o);
  unsetenv("FAKE_SMI_FAIL");
  EXPECT_EQ(p.source, "");
  ASSERT_GE(p.notes.size(), 2u);
  EXPECT_EQ(p.notes[1],
            "nvidia-smi: exit 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.");
}

TEST(Probe, DriverFromProcWhenNoTools) {
  ProbeOptions o = nothing_there();
  o.proc_version = std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes/recorded/proc-driver-version.txt";
  const GpuProbe p = probe_machine(o);
  EXPECT_EQ(p.source, "proc");
  EXPECT_EQ(p.driver, "550.54.15");
  EXPECT_TRUE(p.gpus.empty());
}

TEST(Probe, ReadsTheCudaRuntimeVersionWithoutAGpu) {
  // The real libcudart of the preinstalled toolkit answers cudaRuntimeGetVersion without a driver.
  const std::string cudart = "/usr/local/cuda/lib64/libcudart.so";
  if (!io::read_file(cudart)) GTEST_SKIP() << "no " << cudart;
  ProbeOptions o = nothing_there();
  o.cudart = {"/nonexistent/libcudart.so.12", cudart};
  const GpuProbe p = probe_machine(o);
  EXPECT_EQ(p.cuda_runtime_path, cudart);
  EXPECT_TRUE(p.cuda_runtime.starts_with("1")) << p.cuda_runtime;
  EXPECT_NE(format_probe(p).find("  cuda runtime   " + p.cuda_runtime + " (" + cudart + ")\n"), std::string::npos);
}

TEST(Probe, FindsNvccFromCudacxx) {
  ProbeOptions o = nothing_there();
  o.cudacxx = std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes/nvcc";
  const GpuProbe p = probe_machine(o);
  EXPECT_EQ(p.nvcc, "13.0.88");
  EXPECT_EQ(p.nvcc_path, o.cudacxx);
}

}  // namespace
}  // namespace envpin::probe

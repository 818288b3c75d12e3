// SPDX-License-Identifier: Apache-2.0
// The smoke artifacts generate writes, and how `envpin diff` judges two smoke results.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "diag/error.hpp"
#include "manifest/load.hpp"
#include "render/render.hpp"
#include "report/diff.hpp"
#include "report/smoke.hpp"
#include "resolve/environment.hpp"

namespace envpin {
namespace {

using nlohmann::json;

std::string source_file(const std::string& rel) {
  std::ifstream in(std::string(ENVPIN_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<render::Artifact> smoke_of(const std::string& yaml) {
  const manifest::Manifest m = manifest::parse(yaml, "envpin.yaml", ".");
  return render::smoke(m, resolve::resolve(m));
}

TEST(SmokeArtifacts, TheImageCompilesTheBytesOfTheCMakeTarget) {
  const auto a = smoke_of("envpin: 1\nname: s\ncuda: {version: '12.4', gpus: [H100]}\n");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].path, ".envpin/smoke/envpin_smoke.cu");
  EXPECT_EQ(a[0].bytes, source_file("cmake/smoke/envpin_smoke.cu"));
  EXPECT_EQ(a[1].path, ".envpin/smoke/envpin_smoke_sha256.h");
  EXPECT_EQ(a[1].bytes, source_file("cmake/smoke/envpin_smoke_sha256.h"));
  EXPECT_FALSE(a[0].bytes.empty());
}

TEST(SmokeArtifacts, FrameworkSmokeWheneverTheManifestHasTorch) {
  EXPECT_TRUE(smoke_of("envpin: 1\nname: s\n").empty());
  EXPECT_TRUE(smoke_of("envpin: 1\nname: s\npython: {version: '3.11', packages: [numpy==1.26.4]}\n").empty());
  for (const char* yaml : {"envpin: 1\nname: s\npython: {version: '3.11', packages: [Torch==2.4.1]}\n",
                           "envpin: 1\nname: s\nbase: debian:bookworm\nos: debian12\n"
                           "apt: [python3-torch, python3-venv]\npython: {version: '3.11', source: system}\n"}) {
    const auto a = smoke_of(yaml);
    ASSERT_EQ(a.size(), 1u) << yaml;
    EXPECT_EQ(a[0].path, ".envpin/smoke.py");
    EXPECT_NE(a[0].bytes.find("torch.use_deterministic_algorithms(True)"), std::string::npos);
  }
  // CUDA and torch: both.
  EXPECT_EQ(smoke_of("envpin: 1\nname: s\ncuda: {version: '12.4', gpus: [H100]}\n"
                     "python: {version: '3.11', packages: [torch==2.4.1]}\n")
                .size(),
            3u);
}

TEST(SmokeArtifacts, DockerfileCompilesForTheFleetsArchListAndPinsTheDevelImage) {
  const manifest::Manifest m = manifest::parse(
      "envpin: 1\nname: s\ncuda: {version: '12.4', gpus: [T4, A100, H100], repository: registry.internal/mirror/cuda}\n",
      "envpin.yaml", ".");
  const std::string d = render::dockerfile(m, resolve::resolve(m)).bytes;
  EXPECT_NE(d.find("FROM --platform=linux/amd64 registry.internal/mirror/cuda:12.4.1-devel-ubuntu22.04 AS "
                   "envpin-smoke\n"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("\"-DENVPIN_SMOKE_ARCHS=\\\"75-real 80-real 90\\\"\", "
                   "\"--generate-code=arch=compute_75,code=sm_75\", "
                   "\"--generate-code=arch=compute_80,code=sm_80\", "
                   "\"--generate-code=arch=compute_90,code=[compute_90,sm_90]\""),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("FROM --platform=linux/amd64 registry.internal/mirror/cuda:12.4.1-runtime-ubuntu22.04\n"),
            std::string::npos);
  EXPECT_NE(d.find("COPY --from=envpin-smoke [\"/tmp/envpin-smoke/envpin-smoke\", \"/usr/local/bin/envpin-smoke\"]"),
            std::string::npos);
}

TEST(SmokeArtifacts, RepositoryIsARepositoryNotATag) {
  for (const char* repo : {"nvidia/cuda:12.4.1-runtime-ubuntu22.04", "mirror/cuda@sha256:ab", "bad repo"}) {
    try {
      manifest::parse(
          std::string("envpin: 1\nname: s\ncuda: {version: '12.4', gpus: [H100], repository: '") + repo + "'}\n",
          "envpin.yaml", ".");
      ADD_FAILURE() << repo;
    } catch (const diag::Error& e) {
      EXPECT_TRUE(e.where().has_value()) << repo;
    }
  }
  // A registry with a port is a repository.
  EXPECT_NO_THROW(manifest::parse(
      "envpin: 1\nname: s\ncuda: {version: '12.4', gpus: [H100], repository: '127.0.0.1:5000/nvidia/cuda'}\n",
      "envpin.yaml", "."));
}

// --- diff --------------------------------------------------------------------------------------

const std::string kCpuRef = std::string(64, 'c');

json kernel(const std::string& result, const std::string& gpu_sha, const std::string& cpu_sha = kCpuRef) {
  return {{"result", result}, {"gpu_sha256", gpu_sha}, {"cpu_sha256", cpu_sha}, {"summary", result + " here"}};
}

json framework(const std::string& digest, long seed = 0, const std::string& device_name = "NVIDIA H100 80GB HBM3") {
  return {{"schema", "envpin.smoke.framework/1"},
          {"result", "pass"},
          {"torch", "2.4.1+cu124"},
          {"cuda_variant", "12.4"},
          {"device", "cuda"},
          {"device_name", device_name},
          {"capability", "9.0"},
          {"seed", seed},
          {"threads", 8},
          {"deterministic", true},
          {"tf32", false},
          {"loss", "0.75"},
          {"digest", digest}};
}

json smoke(const json& k, const json& f) {
  json s = {{"schema", report::kSmokeSchema}};
  if (!k.is_null()) s["kernel"] = k;
  if (!f.is_null()) s["framework"] = f;
  return s;
}

std::vector<std::string> verdicts(const json& a, const json& b) {
  std::vector<std::string> out;
  for (const auto& d : report::diff(a, b, "laptop", "server")) out.push_back(d.verdict + " " + d.field);
  return out;
}

TEST(SmokeDiff, EqualDigestsAreNoDifference) {
  const json a = smoke(kernel("pass", kCpuRef), framework(std::string(64, 'a')));
  EXPECT_TRUE(verdicts(a, a).empty());
}

TEST(SmokeDiff, SameGpuModelTorchBuildAndSeedMustGiveTheSameDigest) {
  const json a = smoke(nullptr, framework(std::string(64, 'a')));
  const json b = smoke(nullptr, framework(std::string(64, 'b')));
  EXPECT_EQ(verdicts(a, b), std::vector<std::string>{"breaks smoke.framework.digest"});
  const auto d = report::diff(a, b, "a", "b");
  EXPECT_NE(d[0].why.find("the compute chain differs"), std::string::npos);
}

TEST(SmokeDiff, ADifferentSeedOrDeviceIsInfoWithItsReason) {
  const json a = smoke(nullptr, framework(std::string(64, 'a'), 0));
  const json seeded = smoke(nullptr, framework(std::string(64, 'b'), 1));
  auto d = report::diff(a, seeded, "a", "b");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].verdict, "info");
  EXPECT_EQ(d[0].field, "smoke.framework.digest");
  EXPECT_EQ(d[0].why, "digests differ, as they may: different seeds (0 vs 1)");
  const json a100 = smoke(nullptr, framework(std::string(64, 'b'), 0, "NVIDIA A100-SXM4-80GB"));
  d = report::diff(a, a100, "a", "b");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].verdict, "info");
  EXPECT_NE(d[0].why.find("different device models (NVIDIA H100 80GB HBM3 vs NVIDIA A100-SXM4-80GB)"),
            std::string::npos);
  json tf32 = framework(std::string(64, 'b'));
  tf32["tf32"] = true;
  d = report::diff(a, smoke(nullptr, tf32), "a", "b");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].why, "digests differ, as they may: TF32 enabled on one side");
}

TEST(SmokeDiff, TheIntegerKernelMustAgreeEverywhere) {
  // The CPU references of two machines differ: not the same program, or a broken host.
  EXPECT_EQ(verdicts(smoke(kernel("skip", ""), nullptr), smoke(kernel("skip", "", std::string(64, 'd')), nullptr)),
            std::vector<std::string>{"breaks smoke.kernel.cpu_sha256"});
  // A kernel that fails on one side breaks, whatever the other did.
  EXPECT_EQ(verdicts(smoke(kernel("skip", ""), nullptr), smoke(kernel("fail", std::string(64, 'e')), nullptr)),
            std::vector<std::string>{"breaks smoke.kernel"});
  // It ran on the GPU on one side only, and the CPU references agree: info.
  EXPECT_EQ(verdicts(smoke(kernel("skip", ""), nullptr), smoke(kernel("pass", kCpuRef), nullptr)),
            std::vector<std::string>{"info smoke.kernel"});
}

TEST(SmokeDiff, AFrameworkSmokeThatDoesNotRunBreaks) {
  json failed = framework("");
  failed["result"] = "fail";
  failed["summary"] = "cannot import torch: ModuleNotFoundError: No module named 'torch'";
  const auto d = report::diff(smoke(nullptr, framework(std::string(64, 'a'))), smoke(nullptr, failed), "a", "b");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].verdict, "breaks");
  EXPECT_EQ(d[0].b, "fail: cannot import torch: ModuleNotFoundError: No module named 'torch'");
  EXPECT_EQ(d[0].why, "the framework smoke does not run on b");
}

TEST(SmokeDiff, AReportWithSmokeAgainstSmokeResultsComparesTheSmoke) {
  const json report = {{"schema", "envpin.report/1"}, {"system", json::object()},
                       {"gpu", json::object()},       {"packages", json::object()},
                       {"config", json::object()},    {"smoke", smoke(nullptr, framework(std::string(64, 'a')))}};
  EXPECT_TRUE(verdicts(report, smoke(nullptr, framework(std::string(64, 'a')))).empty());
  EXPECT_EQ(verdicts(report, smoke(nullptr, framework(std::string(64, 'b')))),
            std::vector<std::string>{"breaks smoke.framework.digest"});
}

// A report from a server is hostile input: its values are printed as one printable line each.
TEST(SmokeDiff, ValuesFromAReportCannotDriveTheTerminal) {
  const json a = smoke(nullptr, framework(std::string(64, 'a')));
  json evil = framework(std::string(64, 'b'));
  evil["device_name"] = "H100\x1b]0;owned\x07\nBREAKS  nothing";
  const std::string text = report::format_diff(report::diff(a, smoke(nullptr, evil), "a", "b"));
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("H100\\x1b]0;owned\\x07\\nBREAKS  nothing"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nBREAKS"), std::string::npos) << text;
}

TEST(SmokeFormat, OneLinePerPartAndFailuresCount) {
  json s = smoke(kernel("skip", ""), framework(std::string(64, 'a')));
  s["framework"]["summary"] = "torch 2.4.1 on cuda";
  EXPECT_EQ(report::format_smoke(s),
            "kernel     SKIP  skip here; CPU reference sha256 cccccccccccc\n"
            "framework  PASS  torch 2.4.1 on cuda\n");
  EXPECT_FALSE(report::smoke_failed(s));
  s["kernel"]["result"] = "fail";
  EXPECT_TRUE(report::smoke_failed(s));
}

}  // namespace
}  // namespace envpin

// SPDX-License-Identifier: Apache-2.0
// `envpin smoke` and the lock's devel image. The smoke programs themselves run for real in the
// e2e tests (tests/e2e/cuda_smoke.sh: the CUDA program in an image; resume_torch.sh: the
// framework smoke with Debian's torch); here, what envpin makes of what they report.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.hpp"
#include "manifest/load.hpp"

namespace envpin {
namespace {

class SmokeCli : public Cli {};

constexpr const char* kCudaTorch =
    "envpin: 1\nname: s\ncuda: {version: '12.4', gpus: [H100]}\n"
    "python: {version: '3.11', packages: [torch==2.4.1]}\n";

TEST_F(SmokeCli, TheFrameworkSmokeMustHaveBeenGenerated) {
  write("envpin.yaml", kCudaTorch);
  const Result r = run("smoke");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml: .envpin/smoke.py is missing: the framework smoke is generated with the other "
            "artifacts\nenvpin: hint: run 'envpin generate --manifest envpin.yaml'\n");
}

TEST_F(SmokeCli, NothingToSmokeWithoutCudaOrTorch) {
  write("envpin.yaml", "envpin: 1\nname: s\n");
  const Result r = run("smoke");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("has neither a cuda section nor torch"), std::string::npos) << r.err;
}

// The generated smoke.py run by an interpreter whose torch cannot be imported: a failure, named.
TEST_F(SmokeCli, ATorchThatDoesNotImportFailsTheFrameworkSmoke) {
  write("envpin.yaml", kCudaTorch);
  ASSERT_EQ(run("generate").code, 0);
  write("fake/torch.py", "raise ImportError('libcudnn.so.9: cannot open shared object file')\n");
  write("python", "#!/bin/sh\nPYTHONPATH=" + (dir_ / "fake").string() + " exec python3 \"$@\"\n");
  fs::permissions(dir_ / "python", fs::perms::owner_all);
  const Result r = run("smoke --device cpu --python ./python --json");
  EXPECT_EQ(r.code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "envpin.smoke/1");
  EXPECT_EQ(j["kernel"]["result"], "skip");  // --device cpu
  EXPECT_EQ(j["framework"]["result"], "fail");
  EXPECT_EQ(j["framework"]["exit"], 1);
  EXPECT_EQ(j["framework"]["message"],
            "cannot import torch: ImportError: libcudnn.so.9: cannot open shared object file");
  const Result text = run("smoke --device cpu --python ./python");
  EXPECT_EQ(text.out,
            "kernel     SKIP  --device cpu: the CUDA kernel runs only on a GPU\n"
            "framework  FAIL  cannot import torch: ImportError: libcudnn.so.9: cannot open shared object file\n");
  // check --smoke runs the generated check_env's smoke rows with the project's smoke.py.
  const Result check = run("check --smoke --allow-no-gpu", "ENVPIN_PYTHON=./python PATH=/nonexistent:/usr/bin:/bin");
  EXPECT_EQ(check.code & 1, 1) << check.out;
  EXPECT_NE(check.out.find("MISMATCH smoke.framework          expected a forward and backward pass on auto, found "
                           "cannot import torch: ImportError: libcudnn.so.9: cannot open shared object file; fix: "),
            std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("skip     smoke.kernel             /usr/local/bin/envpin-smoke not found"),
            std::string::npos)
      << check.out;
  EXPECT_EQ(run("check --allow-no-gpu", "ENVPIN_PYTHON=./python").out.find("smoke."), std::string::npos);
}

// The kernel ran on a GPU here, so torch must compute on it too: a torch that sees no GPU fails
// the framework smoke (torch here is a stand-in module; the e2e tests run Debian's).
TEST_F(SmokeCli, TorchMustUseTheGpuTheKernelRanOn) {
  write("envpin.yaml", kCudaTorch);
  ASSERT_EQ(run("generate").code, 0);
  write("fake/torch.py",
        "__version__ = '2.4.1+cu124'\nclass version:\n    cuda = '12.4'\n"
        "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n");
  write("python", "#!/bin/sh\nPYTHONPATH=" + (dir_ / "fake").string() + " exec python3 \"$@\"\n");
  fs::permissions(dir_ / "python", fs::perms::owner_all);
  write("kernel",
        "#!/bin/sh\necho 'smoke: PASS: NVIDIA H100 80GB HBM3 (sm_90): integer sha256 matches the CPU'\n"
        "echo '{\"result\":\"pass\",\"sm\":90,\"gpu_sha256\":\"ab\",\"cpu_sha256\":\"ab\"}'\n");
  fs::permissions(dir_ / "kernel", fs::perms::owner_all);
  const Result r = run("smoke --kernel ./kernel --python ./python --json");
  EXPECT_EQ(r.code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel"]["result"], "pass");
  EXPECT_EQ(j["framework"]["device"], "cuda");
  EXPECT_EQ(j["framework"]["result"], "fail");
  EXPECT_EQ(j["framework"]["summary"], "no usable GPU (torch.cuda.is_available() is False; torch CUDA 12.4)");
}

// A smoke program that prints no result is a failure, not a pass; its exit code is kept.
TEST_F(SmokeCli, AKernelWithoutAResultLineFails) {
  write("envpin.yaml", "envpin: 1\nname: s\ncuda: {version: '12.4', gpus: [H100]}\n");
  write("kernel", "#!/bin/sh\necho 'Segmentation fault' >&2\nexit 139\n");
  fs::permissions(dir_ / "kernel", fs::perms::owner_all);
  const Result r = run("smoke --kernel ./kernel --json");
  EXPECT_EQ(r.code, 1);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel"]["result"], "fail");
  EXPECT_EQ(j["kernel"]["exit"], 139);
  EXPECT_EQ(j["kernel"]["message"], "./kernel exited 139 without a result: Segmentation fault");
  EXPECT_FALSE(j.contains("framework"));
  // What a program prints is shown as one printable line: no escape sequence reaches the terminal,
  // no invalid byte the JSON.
  write(
      "kernel",
      "#!/bin/sh\nprintf 'smoke: PASS: \\033[2J\\377 cleared\\n'\n"
      "printf '{\"result\":\"pass\",\"gpu_sha256\":\"ab\",\"cpu_sha256\":\"ab\",\"device\":\"\\\\u001b]0;owned\\\\u0007\"}\\n'\n");
  fs::permissions(dir_ / "kernel", fs::perms::owner_all);
  const Result hostile = run("smoke --kernel ./kernel");
  EXPECT_EQ(hostile.code, 0) << hostile.err;
  EXPECT_EQ(hostile.out, "kernel     PASS  \\x1b[2J\\xff cleared\n");
  const Result hostile_json = run("smoke --kernel ./kernel --json");
  EXPECT_EQ(nlohmann::json::parse(hostile_json.out)["kernel"]["device"], "\\x1b]0;owned\\x07");
  // A result line nested 70,000 levels deep is no result (it once overflowed the stack).
  write("kernel",
        "#!/bin/sh\necho 'smoke: PASS: deep'\nprintf '{\"result\":\"pass\",\"device\":'\n"
        "head -c 70000 /dev/zero | tr '\\0' '['\nhead -c 70000 /dev/zero | tr '\\0' ']'\necho '}'\n");
  fs::permissions(dir_ / "kernel", fs::perms::owner_all);
  const Result deep = run("smoke --kernel ./kernel --json");
  EXPECT_EQ(deep.code, 1) << deep.err;
  EXPECT_EQ(nlohmann::json::parse(deep.out)["kernel"]["result"], "fail") << deep.out.substr(0, 300);
  // A program that says "pass" without the GPU digest equal to the CPU's has not passed.
  write("kernel",
        "#!/bin/sh\necho 'smoke: PASS: trust me'\n"
        "echo '{\"result\":\"pass\",\"gpu_sha256\":\"\",\"cpu_sha256\":\"70382317f24e\"}'\n");
  fs::permissions(dir_ / "kernel", fs::perms::owner_all);
  const Result liar = run("smoke --kernel ./kernel");
  EXPECT_EQ(liar.code, 1);
  EXPECT_EQ(liar.out,
            "kernel     FAIL  the program reported a pass, but its GPU digest '' is not the CPU reference "
            "'70382317f24e'\n");
  // check_env's smoke row does not take its word either.
  const Result check = run("check --smoke --allow-no-gpu", "ENVPIN_SMOKE_KERNEL=./kernel");
  EXPECT_EQ(check.code & 1, 1) << check.out;
  EXPECT_NE(check.out.find("MISMATCH smoke.kernel             expected the GPU's integer digest equal to the CPU's, "
                           "found GPU '', CPU '70382317f24e'"),
            std::string::npos)
      << check.out;
  write("kernel",
        "#!/bin/sh\necho 'smoke: PASS: H100 (sm_90): integer sha256 abab matches the CPU'\n"
        "echo '{\"result\":\"pass\",\"gpu_sha256\":\"abab\",\"cpu_sha256\":\"abab\"}'\n");
  fs::permissions(dir_ / "kernel", fs::perms::owner_all);
  EXPECT_NE(run("check --smoke --allow-no-gpu", "ENVPIN_SMOKE_KERNEL=./kernel")
                .out.find("ok       smoke.kernel             H100 (sm_90): integer sha256 abab matches the CPU\n"),
            std::string::npos);
  // What the program says reaches the terminal escaped through check and the script itself: a
  // window title, clear-screen, colour, a C1 control and a right-to-left override.
  write("kernel",
        "#!/bin/sh\nprintf 'smoke: PASS: \\033]0;owned\\007\\033[2J\\033[31mH100 \\302\\233 \\342\\200\\256ok\\n'\n"
        "echo '{\"result\":\"pass\",\"gpu_sha256\":\"abab\",\"cpu_sha256\":\"abab\"}'\n");
  fs::permissions(dir_ / "kernel", fs::perms::owner_all);
  const std::string escaped = "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mH100 \\x9b \\u202eok";
  const Result escapes = run("check --smoke --allow-no-gpu", "ENVPIN_SMOKE_KERNEL=./kernel");
  EXPECT_NE(escapes.out.find("ok       smoke.kernel             " + escaped + "\n"), std::string::npos) << escapes.out;
  EXPECT_EQ(escapes.out.find('\x1b'), std::string::npos);
  ASSERT_EQ(run("generate").code, 0);
  const std::string script =
      shell("cd " + sh_quote(dir_.string()) +
            " && ENVPIN_SMOKE_KERNEL=./kernel sh .envpin/check_env.sh --smoke --allow-no-gpu 2>&1");
  EXPECT_NE(script.find("ok       smoke.kernel             " + escaped + "\n"), std::string::npos) << script;
  EXPECT_EQ(script.find('\x1b'), std::string::npos);
  EXPECT_EQ(script.find("\xe2\x80\xae"), std::string::npos);
  // Not found on PATH: unavailable, which is not a failure.
  const Result none = run("smoke", "PATH=/nonexistent:/usr/bin:/bin");
  EXPECT_EQ(none.code, 0) << none.err;
  EXPECT_NE(none.out.find("kernel     n/a   no envpin-smoke on PATH"), std::string::npos) << none.out;
}

// A lock written before the smoke stage existed pins no devel image: generate says so, and the
// stage names the tag; a lock with it pins the stage by digest.
TEST_F(SmokeCli, DevelImageUnpinnedByAnOldLockIsAWarning) {
  write("envpin.yaml", "envpin: 1\nname: s\ncuda: {version: '12.4', gpus: [H100], repository: 127.0.0.1:5000/cuda}\n");
  lock::Lock l = image_only_lock(manifest::load((dir_ / "envpin.yaml").string()));
  lock::seal(l);
  write("envpin.lock", lock::to_toml(l));
  Result r = run("generate");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err,
            "envpin: warning: envpin.lock does not pin the devel image 127.0.0.1:5000/cuda:12.4.1-devel-ubuntu22.04 "
            "(an older envpin wrote it): the Dockerfile's smoke stage names it by tag; run 'envpin lock' to pin it by "
            "digest\n");
  EXPECT_NE(io::read_file(dir_ / "Dockerfile")
                ->find("FROM --platform=linux/amd64 127.0.0.1:5000/cuda:12.4.1-devel-ubuntu22.04 AS envpin-smoke\n"),
            std::string::npos);
  const std::string d = "sha256:" + std::string(64, 'a');
  l.devel_image = lock::Image{"127.0.0.1:5000/cuda:12.4.1-devel-ubuntu22.04",
                              "127.0.0.1:5000/cuda:12.4.1-devel-ubuntu22.04@" + d,
                              d,
                              "application/vnd.docker.distribution.manifest.v2+json",
                              {{"linux/amd64", d, "sha256:" + std::string(64, 'c')}}};
  lock::seal(l);
  write("envpin.lock", lock::to_toml(l));
  r = run("generate");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_NE(io::read_file(dir_ / "Dockerfile")
                ->find("FROM --platform=linux/amd64 127.0.0.1:5000/cuda:12.4.1-devel-ubuntu22.04@" + d +
                       " AS envpin-smoke\n"),
            std::string::npos);
  EXPECT_NE(io::read_file(dir_ / "envpin.lock")->find("\n[devel-image]\nrequested = "), std::string::npos);
}

}  // namespace
}  // namespace envpin

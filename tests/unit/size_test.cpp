// SPDX-License-Identifier: Apache-2.0
// envpin size: the bytes a node pulls from the lock's sizes, and the CUDA libraries carried
// twice, on a lock shaped as envpin writes it for a torch project on a cudnn-runtime image. The
// wheel sizes are those of torch 2.4.1's cu124 set (pip logs quoted in NVIDIA/TensorRT#4398 and
// pytorch/pytorch#193491, rounded); the image's layer size is made up.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lock/size.hpp"
#include "manifest/load.hpp"
#include "resolve/environment.hpp"

namespace envpin::lock {
namespace {

PythonPackage wheel(const std::string& name, const std::string& version, std::int64_t size) {
  return {name,
          version,
          "",
          {{name + "-" + version + "-py3-none-manylinux2014_x86_64.whl", "https://x/" + name + ".whl",
            std::string(64, 'a'), size}}};
}

Lock torch_lock(const std::string& image) {
  Lock l;
  l.platforms = {"linux/amd64"};
  l.image = Image{image,
                  image + "@sha256:" + std::string(64, 'b'),
                  "sha256:" + std::string(64, 'b'),
                  "",
                  {{"linux/amd64", "sha256:" + std::string(64, 'c'), "sha256:" + std::string(64, 'd'), 1500000000}}};
  l.apt = {{"git", "1:2.34.1", "amd64", "x", "git", "pool/git.deb", 3166146, std::string(64, 'e')}};
  l.python = {wheel("torch", "2.4.1+cu124", 797300000),
              wheel("nvidia-cudnn-cu12", "9.1.0.70", 664800000),
              wheel("nvidia-cublas-cu12", "12.4.5.8", 363400000),
              wheel("nvidia-cusparselt-cu12", "0.6.2", 150000000),
              wheel("nvidia-nvtx-cu12", "12.4.127", 99000),
              wheel("nvidia-cuda-runtime-cu12", "12.4.127", 883000),
              wheel("numpy", "1.26.4", 18000000),
              wheel("tqdm", "4.66.4", 0)};
  return l;
}

TEST(Size, PartsAndTotalFromTheLock) {
  const SizeReport r = size_report(torch_lock("nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"));
  EXPECT_EQ(r.base.bytes, 1500000000);
  EXPECT_EQ(r.apt.count, 1);
  EXPECT_EQ(r.apt.bytes, 3166146);
  EXPECT_EQ(r.heavy.count, 6);
  EXPECT_EQ(r.heavy.bytes, 797300000 + 664800000 + 363400000 + 150000000 + 99000 + 883000);
  EXPECT_EQ(r.light.count, 2);
  EXPECT_EQ(r.light.bytes, 18000000);
  EXPECT_EQ(r.light.unknown, 1);  // tqdm's index said no size
  EXPECT_EQ(r.total(), std::int64_t{1500000000} + 3166146 + 797300000 + 664800000 + 363400000 + 150000000 + 99000 +
                           883000 + 18000000);
  const std::string text = size_text(r);
  EXPECT_NE(text.find("other wheels"), std::string::npos) << text;
  EXPECT_NE(text.find("18.0 MB + 1 unknown"), std::string::npos) << text;
  EXPECT_NE(text.find("1 without a size"), std::string::npos) << text;
}

TEST(Size, CudaLibrariesTheFlavorAndTheWheelsBothCarry) {
  const SizeReport r = size_report(torch_lock("nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"));
  EXPECT_EQ(r.flavor, "cudnn-runtime");
  ASSERT_EQ(r.duplicates.size(), 3u);  // not cuSPARSELt (in no flavor), not cudart (in every one)
  EXPECT_EQ(r.duplicates[0].library, "cuDNN");
  EXPECT_EQ(r.duplicates[0].soname, "libcudnn.so.9");
  EXPECT_EQ(r.duplicates[0].bytes, 664800000);
  EXPECT_EQ(r.duplicates[1].soname, "libcublas.so.12");
  EXPECT_EQ(r.duplicates[2].soname, "libnvToolsExt.so.1");  // NVTX's soname is not its wheel's major
  const std::string text = size_text(r);
  EXPECT_NE(text.find("hint: set cuda.flavor: base and remove cuda.cudnn"), std::string::npos) << text;
  // A locked wheel that loads the system's libraries explains the image's copies: no hint.
  Lock with_ort = torch_lock("nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04");
  with_ort.python.push_back(wheel("onnxruntime-gpu", "1.20.1", 280000000));
  const std::string kept = size_text(size_report(with_ort));
  EXPECT_EQ(kept.find("hint: set cuda.flavor: base"), std::string::npos) << kept;
  EXPECT_NE(kept.find("  kept: onnxruntime-gpu: its CUDA provider loads cuBLAS and cuDNN from the system"),
            std::string::npos)
      << kept;
  // The runtime flavor: the same but cuDNN; base and a non-CUDA image: nothing twice.
  EXPECT_EQ(size_report(torch_lock("nvidia/cuda:12.4.1-runtime-ubuntu22.04")).duplicates.size(), 2u);
  const SizeReport devel = size_report(torch_lock("mirror.example/nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04"));
  EXPECT_EQ(devel.duplicates.size(), 3u);
  EXPECT_EQ(size_text(devel).find("hint: set cuda.flavor: base"), std::string::npos) << "devel is for nvcc";
  for (const char* image : {"nvidia/cuda:12.4.1-base-ubuntu22.04", "python:3.11-slim", "example/cuda:12.4.1-runtime"}) {
    const SizeReport none = size_report(torch_lock(image));
    EXPECT_TRUE(none.duplicates.empty()) << image;
    EXPECT_EQ(size_text(none).find("twice"), std::string::npos) << image;
  }
}

TEST(Size, FlavorFromTheTagAlone) {
  EXPECT_EQ(cuda_flavor("nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04@sha256:00"), "cudnn-runtime");
  EXPECT_EQ(cuda_flavor("nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04"), "cudnn-devel");
  EXPECT_EQ(cuda_flavor("nvidia/cuda:12.6.3-base-ubuntu24.04"), "base");
  EXPECT_EQ(cuda_flavor("nvidia/cuda"), "");
  EXPECT_EQ(cuda_flavor("127.0.0.1:5000/nvidia/cuda:12.4.1-runtime-ubuntu22.04"), "runtime");
  EXPECT_EQ(cuda_flavor("nvidiacuda/x:12.4.1-runtime-ubuntu22.04"), "");
}

TEST(Size, JsonCarriesTheSameNumbers) {
  const SizeReport r = size_report(torch_lock("nvidia/cuda:12.4.1-runtime-ubuntu22.04"));
  const auto j = nlohmann::json::parse(size_json(r));
  EXPECT_EQ(j["total_bytes"].get<std::int64_t>(), r.total());
  EXPECT_EQ(j["heavy_wheels"]["count"], 6);
  EXPECT_EQ(j["duplicates"][0]["wheel"], "nvidia-cublas-cu12");
  EXPECT_EQ(bytes_text(999), "999 B");
  EXPECT_EQ(bytes_text(363400000), "363.4 MB");
  EXPECT_EQ(bytes_text(1500000000), "1.50 GB");
}

// The flavor decision: torch's wheels bring the CUDA libraries, so without cuda.flavor the image
// is the base flavor; a package that loads the system's keeps runtime; a flavor asked for that
// duplicates torch's libraries is kept, with a warning.
resolve::Environment decided(const std::string& python) {
  return resolve::resolve(
      manifest::parse("envpin: 1\nname: f\ncuda: {version: '12.4', gpus: [A100]}\n" + python, "envpin.yaml", "."));
}
std::string reasons(const resolve::Environment& e) {
  std::string out;
  for (const auto& r : e.cuda->reasons) out += r + "\n";
  return out;
}
std::string warnings(const resolve::Environment& e) {
  std::string out;
  for (const auto& w : e.warnings) out += w;
  return out;
}

TEST(Flavor, TorchWheelsGetTheBaseFlavor) {
  const auto torch = decided("python: {version: '3.11', packages: [torch==2.4.1, numpy]}\n");
  EXPECT_EQ(torch.cuda->base_image, "nvidia/cuda:12.4.1-base-ubuntu22.04");
  EXPECT_NE(reasons(torch).find("flavor: base (the CUDA runtime and cuda-compat): torch's wheels bring cuBLAS"),
            std::string::npos)
      << reasons(torch);
  EXPECT_EQ(warnings(torch).find("two copies"), std::string::npos) << warnings(torch);
  // A torch range too; the onnxruntime-gpu extras that bring cuBLAS and cuDNN as wheels too.
  EXPECT_EQ(decided("python: {version: '3.11', packages: ['torch>=2.4']}\n").cuda->base_image,
            "nvidia/cuda:12.4.1-base-ubuntu22.04");
  EXPECT_EQ(decided("python: {version: '3.11', packages: [torch==2.4.1, 'onnxruntime-gpu[cuda,cudnn]>=1.21']}\n")
                .cuda->base_image,
            "nvidia/cuda:12.4.1-base-ubuntu22.04");
  // No torch: nothing brings the libraries, the runtime flavor as before.
  EXPECT_EQ(decided("python: {version: '3.11', packages: [numpy]}\n").cuda->base_image,
            "nvidia/cuda:12.4.1-runtime-ubuntu22.04");
}

TEST(Flavor, APackageThatLoadsTheSystemsKeepsRuntime) {
  for (const auto& [package, named] :
       std::vector<std::pair<std::string, std::string>>{{"onnxruntime-gpu==1.20.1", "onnxruntime-gpu"},
                                                        {"cupy-cuda12x", "cupy-cuda12x"},
                                                        {"tensorflow==2.16.1", "tensorflow"},
                                                        {"'jax[cuda12_local]'", "jax[cuda12_local]"},
                                                        {"paddlepaddle-gpu==2.5.2", "paddlepaddle-gpu"},
                                                        {"cuml-cu11", "cuml-cu11"}}) {
    const auto e = decided("python: {version: '3.11', packages: [torch==2.4.1, " + package + "]}\n");
    EXPECT_EQ(e.cuda->base_image, "nvidia/cuda:12.4.1-runtime-ubuntu22.04") << package;
    EXPECT_NE(reasons(e).find("flavor: runtime, as " + named + " needs: "), std::string::npos) << reasons(e);
  }
  EXPECT_EQ(
      decided("python: {version: '3.11', packages: [torch==2.4.1, 'tensorflow[and-cuda]', 'cupy-cuda12x[ctk]']}\n")
          .cuda->base_image,
      "nvidia/cuda:12.4.1-base-ubuntu22.04");
}

// WhisperX's pyproject lists torch and ctranslate2 (tests/init/corpus/whisperx): CTranslate2
// loads cuBLAS and cuDNN from the system, so runtime, and the missing cuDNN is said.
TEST(Flavor, ALibraryTheImageLacksIsSaid) {
  const auto whisperx = decided("python: {version: '3.11', packages: [torch==2.4.1, 'ctranslate2>=4.5.0']}\n");
  EXPECT_EQ(whisperx.cuda->base_image, "nvidia/cuda:12.4.1-runtime-ubuntu22.04");
  EXPECT_NE(warnings(whisperx).find("ctranslate2 loads cuDNN from the system, and the image has none"),
            std::string::npos)
      << warnings(whisperx);
  EXPECT_NE(warnings(whisperx).find("set cuda.cudnn: true"), std::string::npos) << warnings(whisperx);
  const auto cudnn =
      resolve::resolve(manifest::parse("envpin: 1\nname: f\ncuda: {version: '12.4', gpus: [A100], cudnn: true}\n"
                                       "python: {version: '3.11', packages: [torch==2.4.1, 'faster-whisper>=1.1']}\n",
                                       "envpin.yaml", "."));
  EXPECT_EQ(cudnn.cuda->base_image, "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04");
  EXPECT_EQ(warnings(cudnn), "") << "the cuDNN image is what faster-whisper needs: no second-copy warning";
  const auto base =
      resolve::resolve(manifest::parse("envpin: 1\nname: f\ncuda: {version: '12.4', gpus: [A100], flavor: base}\n"
                                       "python: {version: '3.11', packages: [torch==2.4.1, cupy-cuda12x]}\n",
                                       "envpin.yaml", "."));
  EXPECT_NE(warnings(base).find("cupy-cuda12x loads CUDA libraries from the system, and the image has none"),
            std::string::npos)
      << warnings(base);
  EXPECT_NE(warnings(base).find("set cuda.flavor: runtime"), std::string::npos) << warnings(base);
}

// What the requirements pull in: a project that asks only for whisperx gets the base image, and
// the lock then holds ctranslate2 (whisperx -> faster-whisper -> ctranslate2): envpin lock says so.
TEST(Flavor, TheLockedClosureIsJudgedToo) {
  Lock l = torch_lock("nvidia/cuda:12.4.1-base-ubuntu22.04");
  EXPECT_EQ(resolve::system_cuda_in_closure(l), "");
  l.python.push_back(wheel("ctranslate2", "4.5.0", 38000000));
  const std::string w = resolve::system_cuda_in_closure(l);
  EXPECT_EQ(w.rfind("envpin: warning: ctranslate2 4.5.0, in the lock, needs CUDA libraries that the base image "
                    "nvidia/cuda:12.4.1-base-ubuntu22.04 has none of: CTranslate2 loads cuBLAS and cuDNN",
                    0),
            0u)
      << w;
  EXPECT_NE(w.find("set cuda.flavor: runtime (and cuda.cudnn: true for cuDNN) and lock again"), std::string::npos) << w;
  l.image->requested = "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04";
  EXPECT_EQ(resolve::system_cuda_in_closure(l), "") << "the runtime image has them";
}

TEST(Flavor, AFlavorAskedForIsKeptWithTheCostNamed) {
  // devel is asked for nvcc (OpenFold and detectron2 build their CUDA extensions in the image):
  // no advice to drop it.
  EXPECT_EQ(warnings(resolve::resolve(manifest::parse("envpin: 1\nname: f\ncuda: {version: '12.4', gpus: [A100], "
                                                      "flavor: devel}\npython: {version: '3.11', packages: "
                                                      "[torch==2.4.1]}\n",
                                                      "envpin.yaml", "."))),
            "");
  const auto runtime =
      resolve::resolve(manifest::parse("envpin: 1\nname: f\ncuda: {version: '12.4', gpus: [A100], flavor: runtime}\n"
                                       "python: {version: '3.11', packages: [torch==2.4.1]}\n",
                                       "envpin.yaml", "."));
  EXPECT_EQ(runtime.cuda->base_image, "nvidia/cuda:12.4.1-runtime-ubuntu22.04");
  EXPECT_NE(warnings(runtime).find("cuda.flavor: runtime carries CUDA libraries (cuBLAS, NCCL, cuFFT, ...) that "
                                   "torch's wheels bring again: two copies in the image"),
            std::string::npos)
      << warnings(runtime);
  const auto cudnn =
      resolve::resolve(manifest::parse("envpin: 1\nname: f\ncuda: {version: '12.4', gpus: [A100], cudnn: true}\n"
                                       "python: {version: '3.11', packages: [torch==2.4.1]}\n",
                                       "envpin.yaml", "."));
  EXPECT_EQ(cudnn.cuda->base_image, "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04");
  EXPECT_NE(warnings(cudnn).find("with cuda.cudnn carries CUDA libraries (cuBLAS, NCCL, cuFFT, cuDNN, ...)"),
            std::string::npos)
      << warnings(cudnn);
}

}  // namespace
}  // namespace envpin::lock

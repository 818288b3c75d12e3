// SPDX-License-Identifier: Apache-2.0
// Issue 50, item 6: after the CUDA choice, every package built for another CUDA than the chosen
// torch's is a warning with its line and the fix (torch moved to cu124, a CUDA 11 runtime wheel
// stayed without a word).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "manifest/load.hpp"
#include "resolve/cuda_packages.hpp"
#include "resolve/environment.hpp"

namespace envpin {
namespace {

std::vector<std::string> warnings_for(const std::string& packages, const std::string& cuda = "auto") {
  const manifest::Manifest m =
      manifest::parse("envpin: 1\nname: cp\ncuda: {version: '" + cuda +
                          "', gpus: [H100]}\npython:\n  version: \"3.11\"\n  packages:\n" + packages,
                      "envpin.yaml", ".");
  const resolve::Environment env = resolve::resolve(m);
  return resolve::cuda_package_warnings(m, *env.cuda);
}

TEST(CudaPackages, EachPackageBuiltForAnotherCudaIsNamedWithItsFix) {
  const std::vector<std::string> w = warnings_for(
      "    - torch==2.4.1\n"                   // line 7: cu124 (CUDA 12)
      "    - nvidia-cublas-cu11==11.11.3.6\n"  // 8
      "    - cupy-cuda11x\n"                   // 9
      "    - \"jax[cuda11]\"\n"                // 10
      "    - torchvision==0.19.1+cu118\n"      // 11
      "    - nvidia-cudnn-cu12\n"              // 12: CUDA 12, fits
      "    - torchaudio==2.4.1+cu124\n"        // 13: the chosen variant
      "    - numpy\n"                          // 14
      "    - \"cupy-cuda12x\"\n");             // 15
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0],
            "envpin: warning: envpin.yaml:8:7: 'nvidia-cublas-cu11' is built for CUDA 11 (its name), but the "
            "environment runs torch's cu124 wheels, which bring CUDA 12: drop it: torch's wheels bring the CUDA "
            "libraries they need\n");
  EXPECT_NE(w[1].find("envpin.yaml:9:7: 'cupy-cuda11x' is built for CUDA 11 (its name)"), std::string::npos) << w[1];
  EXPECT_NE(w[1].find(": use cupy-cuda12x\n"), std::string::npos) << w[1];
  EXPECT_NE(w[2].find("envpin.yaml:10:7: 'jax' is built for CUDA 11 (its extra [cuda11])"), std::string::npos) << w[2];
  EXPECT_NE(w[3].find("envpin.yaml:11:7: 'torchvision' is built for CUDA cu118 (its version +cu118)"),
            std::string::npos)
      << w[3];
  EXPECT_NE(w[3].find(": pin +cu124 (the chosen torch's variant)\n"), std::string::npos) << w[3];
}

TEST(CudaPackages, WithoutTorchTheToolkitDecides) {
  const std::vector<std::string> w =
      warnings_for("    - cupy-cuda11x\n    - nvidia-nccl-cu12\n    - mxnet-cu92\n    - nvidia-cublas-cu11\n", "12.4");
  ASSERT_EQ(w.size(), 2u);
  // Two digits past 20 are a CUDA 9.x build (mxnet-cu92), not CUDA 92. Without torch, NVIDIA's
  // runtime wheels bring their own libraries (nvidia-cublas-cu11 is no warning: the old text said
  // "torch's wheels bring" them, with no torch).
  EXPECT_NE(w[1].find("'mxnet-cu92' is built for CUDA 9 (its name)"), std::string::npos) << w[1];
  EXPECT_NE(
      w[0].find("'cupy-cuda11x' is built for CUDA 11 (its name), but the environment runs the CUDA 12.4.1 image: use "
                "cupy-cuda12x\n"),
      std::string::npos)
      << w[0];
}

}  // namespace
}  // namespace envpin

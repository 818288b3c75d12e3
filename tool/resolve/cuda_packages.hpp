// SPDX-License-Identifier: Apache-2.0
// Packages tied to one CUDA build (nvidia-cublas-cu11, cupy-cuda11x, jax[cuda12], a
// torchvision==0.15.2+cu118): once the CUDA choice is made, each one built for another CUDA than
// the chosen torch's (or, without torch, the toolkit's) is a warning with its line and the fix.
#pragma once

#include <string>
#include <vector>

#include "manifest/model.hpp"
#include "resolve/cuda_policy.hpp"

namespace envpin::resolve {

// The warnings, formatted with diag::format_warning, for the manifest's packages (python.packages
// and a python.requirements file's lines) against `decision`.
std::vector<std::string> cuda_package_warnings(const manifest::Manifest& m, const CudaDecision& decision);

}  // namespace envpin::resolve

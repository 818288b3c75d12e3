// SPDX-License-Identifier: Apache-2.0
// Small pieces shared by the CUDA toolkit policy (cuda_policy.cpp) and the torch wheel fit
// (torch_fit.cpp): version arithmetic, the wording of SMs and variants, and the candidate and
// blocker types both reason about. Internal to tool/resolve.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diag/error.hpp"
#include "resolve/cuda_tables.hpp"

namespace envpin::resolve::detail {

// The digits at the start of `s` as an int, saturating at INT_MAX (versions come from hostile
// input: "torch==111...1.0" must not throw std::out_of_range); 0 without digits.
int bounded_int(std::string_view s);
// "12.4.1" -> {12, 4}
std::pair<int, int> version_pair(std::string_view v);
int major_of(std::string_view v);
std::string sm_name(int sm);  // "sm_90"
// NVIDIA gives some floors as a whole branch ("580" for 13.x minor-version compatibility) and
// others as a release ("525.60.13"): "R580", "525.60.13".
std::string branch_text(const std::string& floor);
// The CUDA lines (oldest first) that can build code for `sm`.
std::vector<std::string_view> lines_building(int sm);
std::string sm_list(const std::vector<int>& sms);  // "sm_80, sm_90"
std::string variant_cuda(const std::string& tag);  // "cu124" -> "12.4"
std::string variant_list(const TorchRelease& r);   // "cu118, cu121, cu124"

// A toolkit the policy considers: a published nvidia/cuda release line and patch.
struct Candidate {
  const CudaRelease* release;
  std::string toolkit;  // "12.4.1"
};

// Why a candidate cannot be used: the error it would be, with its fix and location.
struct Blocker {
  std::string message;
  std::string hint;
  diag::Location where;
};

}  // namespace envpin::resolve::detail

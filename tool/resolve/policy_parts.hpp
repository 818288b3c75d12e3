// SPDX-License-Identifier: Apache-2.0
// Small pieces shared by the CUDA toolkit policy (cuda_policy.cpp) and the torch wheel fit
// (torch_fit.cpp): version arithmetic, the wording of SMs and variants, and the candidate and
// blocker types both reason about. Internal to tool/resolve.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diag/error.hpp"
#include "resolve/cuda_policy.hpp"
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

// One change a hint proposes: its words, and the request with the change made, which
// decide_cuda decides before the words are printed.
struct Fix {
  std::string text;                              // "set --cuda to 12.2"
  std::function<void(CudaRequest&)> apply = {};  // makes the change in a request
  bool forward_compat = false;                   // turns on cuda.forward_compat
};

// Why a candidate cannot be used: the error it would be, with its fix and location. With
// `fixes`, the hint is those fixes joined with ", or " (each decided first), then `hint`.
struct Blocker {
  std::string message;
  std::string hint;
  diag::Location where;
  std::vector<Fix> fixes = {};
};

// One input changed, as a Fix with `text` (the request `r` gives the origins for messages).
Fix with_cuda(const std::string& version, std::string text);
Fix with_driver(const CudaRequest& r, const std::string& driver, std::string text);
// torch pinned to `version` (a release "2.7" or "2.4.1"), with `variant` ("cu128") or none.
Fix with_torch(const CudaRequest& r, const std::string& version, const std::string& variant, std::string text);
Fix with_require_off();
Fix with_forward_compat();

// A refusal whose hint proposes changes: decide_cuda keeps the ones that then decide, and
// completes the others with the one more change that makes them work, or drops them.
class Refusal : public diag::Error {
 public:
  explicit Refusal(const Blocker& b) : Error(b.message, b.where, b.hint), fixes_(b.fixes) {}
  const std::vector<Fix>& fixes() const { return fixes_; }

 private:
  std::vector<Fix> fixes_;
};

}  // namespace envpin::resolve::detail

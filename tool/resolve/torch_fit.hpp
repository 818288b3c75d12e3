// SPDX-License-Identifier: Apache-2.0
// Whether a torch release has wheels that fit the fleet: a CUDA variant whose kernels run on
// every fleet GPU on every platform of the image, for the Python and the driver, and which
// variant a candidate toolkit takes. The CUDA policy (cuda_policy.cpp) asks; a torch specifier
// that is a range is decided here too, one release at a time, through the policy.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "resolve/cuda_policy.hpp"
#include "resolve/policy_parts.hpp"

namespace envpin::resolve::detail {

class TorchFit {
 public:
  // The references are the policy's: the fleet and the SMs are filled before check_input.
  TorchFit(const CudaRequest& req, const std::vector<manifest::Arch>& platforms, const std::vector<GpuTarget>& fleet,
           const std::vector<int>& sms, const std::optional<DriverVersion>& floor)
      : req_(req), platforms_(platforms), fleet_(fleet), sms_(sms), floor_(floor) {}

  // Checks the torch input against the table, the Python, the fleet and the driver, before any
  // toolkit is tried; a torch newer than the table adds a note. Throws diag::Error.
  void check_input(std::vector<Note>& notes);
  // The torch release in the table, or null (no torch, or one newer than the table).
  const TorchRelease* release() const { return torch_; }
  // Why candidate `c` has no torch wheels that fit, or fills `d.torch`. `requested` names the
  // toolkit request for messages ("--cuda auto").
  std::optional<Blocker> check(const Candidate& c, CudaDecision& d, const std::string& requested) const;
  // The releases with a variant for the whole fleet: "torch 2.7 or newer (cu128)".
  std::string fix_for_fleet() const;
  // fix_for_fleet as a change to the request, or nothing when no release fits.
  std::optional<Fix> fleet_fix() const;

 private:
  void check_pinned_variant_kernels() const;
  // Throws `b` with, as its fix, the pinned release's newest variant that runs on the fleet ("use
  // torch V+TAG (its variant `why`)"), else the releases that do, else `otherwise` as the hint.
  [[noreturn]] void refuse_pinned(Blocker b, const std::string& why, const std::string& otherwise) const;
  void check_some_variant_runs() const;
  void check_python_wheels() const;
  bool runs_on_fleet(const TorchVariant& v) const;
  static const std::vector<int>& sass_for(const TorchVariant& v, manifest::Arch a);

  const CudaRequest& req_;
  const std::vector<manifest::Arch>& platforms_;
  const std::vector<GpuTarget>& fleet_;
  const std::vector<int>& sms_;
  const std::optional<DriverVersion>& floor_;
  const TorchRelease* torch_ = nullptr;
};

// Whether an image of CUDA line `image` serves torch wheels of variant `v` (see torch_fit.cpp).
bool image_serves(const TorchVariant& v, const CudaRelease& image);

// A refusal's message as one short clause in whole words, `subject` (a leading "torch 2.6 (")
// and its parenthesis dropped.
std::string short_cause(std::string message, const std::string& subject);

// A torch range: the newest release in the table that satisfies it and for which `decide`
// (the policy, with that release pinned) succeeds, or an error listing why the newest did not.
CudaDecision decide_for_range(const CudaRequest& request,
                              const std::function<CudaDecision(const CudaRequest&)>& decide);

}  // namespace envpin::resolve::detail

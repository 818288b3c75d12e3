// SPDX-License-Identifier: Apache-2.0
#include "resolve/policy_parts.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

namespace envpin::resolve::detail {

int bounded_int(std::string_view s) {
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  (void)end;
  return ec == std::errc::result_out_of_range ? std::numeric_limits<int>::max() : value;
}

std::pair<int, int> version_pair(std::string_view v) {
  const auto dot = v.find('.');
  const auto end = v.find('.', dot + 1);
  return {bounded_int(v.substr(0, dot)),
          dot == std::string_view::npos ? 0 : bounded_int(v.substr(dot + 1, end - dot - 1))};
}

int major_of(std::string_view v) { return version_pair(v).first; }

std::string sm_name(int sm) { return "sm_" + std::to_string(sm); }

std::string branch_text(const std::string& floor) { return floor.find('.') == std::string::npos ? "R" + floor : floor; }

std::vector<std::string_view> lines_building(int sm) {
  std::vector<std::string_view> out;
  for (const CudaRelease& r : cuda_releases()) {
    const auto sms = compilable_sms(r.minor);
    if (std::find(sms.begin(), sms.end(), sm) != sms.end()) out.push_back(r.minor);
  }
  return out;
}

std::string sm_list(const std::vector<int>& sms) {
  std::string out;
  for (int sm : sms) out += (out.empty() ? "" : ", ") + sm_name(sm);
  return out;
}

std::string variant_cuda(const std::string& tag) {
  return tag.substr(2, tag.size() - 3) + "." + tag.substr(tag.size() - 1);
}

std::string variant_list(const TorchRelease& r) {
  std::string out;
  for (const auto& v : r.variants)
    if (!v.pinned_only) out += (out.empty() ? "" : ", ") + std::string(v.tag);
  return out;
}

Fix with_cuda(const std::string& version, std::string text) {
  return {std::move(text), [version](CudaRequest& q) { q.cuda.value = version; }};
}

Fix with_driver(const CudaRequest& r, const std::string& driver, std::string text) {
  const Origin origin = r.driver ? r.driver->origin : Origin{"--driver", std::nullopt};
  return {std::move(text), [driver, origin](CudaRequest& q) { q.driver = Input<std::string>{driver, origin}; }};
}

Fix with_torch(const CudaRequest& r, const std::string& version, const std::string& variant, std::string text) {
  const Origin origin = r.torch ? r.torch->origin : r.torch_range ? r.torch_range->origin : Origin{"--torch", {}};
  return {std::move(text), [version, variant, origin](CudaRequest& q) {
            q.torch = Input<std::string>{version, origin};
            q.torch_range.reset();
            q.torch_variant.reset();
            if (!variant.empty()) q.torch_variant = Input<std::string>{variant, origin};
          }};
}

Fix with_require_off() {
  return {"set cuda.require_check: off to start it anyway (NVIDIA_DISABLE_REQUIRE=1)", [](CudaRequest& q) {
            q.require_off = Input<bool>{true, {"cuda.require_check", std::nullopt}};
          }};
}

Fix with_forward_compat() {
  return {
      "set cuda.forward_compat: true (data-center GPUs run a newer CUDA on this driver through the cuda-compat "
      "libraries of the image)",
      [](CudaRequest& q) {
        q.forward_compat = Input<bool>{true, {"cuda.forward_compat", std::nullopt}};
      },
      true};
}

}  // namespace envpin::resolve::detail

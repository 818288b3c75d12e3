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
  for (const auto& v : r.variants) out += (out.empty() ? "" : ", ") + std::string(v.tag);
  return out;
}

}  // namespace envpin::resolve::detail

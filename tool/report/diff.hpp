// SPDX-License-Identifier: Apache-2.0
// `envpin diff A.json B.json`: two reports compared layer by layer, each difference with a
// verdict — breaks (it will not run), risk (it may behave differently), info.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace envpin::report {

struct Difference {
  std::string verdict;  // "breaks", "risk", "info"
  std::string field;    // "system.arch", "python.pkg.numpy", ...
  std::string a, b;     // the two values as shown
  std::string why;
};

// Throws diag::Error when either is not an envpin report of a schema this envpin reads.
std::vector<Difference> diff(const nlohmann::json& a, const nlohmann::json& b, const std::string& a_name,
                             const std::string& b_name);

std::string format_diff(const std::vector<Difference>& d);
nlohmann::json diff_json(const std::vector<Difference>& d);

}  // namespace envpin::report

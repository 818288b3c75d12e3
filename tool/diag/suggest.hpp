// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::diag {

// Returns the candidate closest to `word` by edit distance when it is close
// enough to be a plausible typo (or `word` is a prefix of it), else "".
std::string closest(std::string_view word, std::span<const std::string_view> candidates);

// Every candidate at the smallest edit distance from `word`, in candidate order, when that
// distance is a plausible typo; empty otherwise.
std::vector<std::string> nearest(std::string_view word, std::span<const std::string_view> candidates);

// " (did you mean 'x'?)" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace envpin::diag

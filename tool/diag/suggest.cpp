// SPDX-License-Identifier: Apache-2.0
#include "diag/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

namespace envpin::diag {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance (Levenshtein plus adjacent swaps), case-insensitive.
std::size_t distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

bool starts_with_icase(std::string_view text, std::string_view prefix) {
  if (prefix.size() > text.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(text[i]) != lower(prefix[i])) return false;
  return true;
}

}  // namespace

std::vector<std::string> nearest(std::string_view word, std::span<const std::string_view> candidates) {
  // A suggestion is for a typo in a short word; the distance is quadratic in the length.
  if (word.size() > 64) return {};
  std::vector<std::string> best;
  std::size_t best_distance = SIZE_MAX;
  for (std::string_view c : candidates) {
    std::size_t dist = distance(word, c);
    // 'cuda_version' is a plausible slip for 'cuda' (a nested key written flat).
    if (starts_with_icase(word, c) && c.size() >= 3) dist = std::min(dist, std::size_t{2});
    if (dist < best_distance) {
      best_distance = dist;
      best.clear();
    }
    if (dist == best_distance && std::find(best.begin(), best.end(), c) == best.end()) best.emplace_back(c);
  }
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  if (best_distance > limit) return {};
  return best;
}

std::string closest(std::string_view word, std::span<const std::string_view> candidates) {
  const std::vector<std::string> all = nearest(word, candidates);
  return all.empty() ? std::string{} : all.front();
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  std::string best = closest(word, candidates);
  return best.empty() ? std::string{} : " (did you mean '" + best + "'?)";
}

}  // namespace envpin::diag

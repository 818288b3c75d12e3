// SPDX-License-Identifier: Apache-2.0
// A read position in a string for the few fixed formats envpin reads (tool output, version
// numbers, URLs): literal text, runs of digits, words. Linear, no backtracking and no std::regex
// (whose compile cost every start paid, and whose recursion overflowed the stack on long input).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace envpin::diag {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct Cursor {
  std::string_view s;
  std::size_t at = 0;

  bool done() const { return at >= s.size(); }
  std::string_view rest() const { return s.substr(at); }
  // Consumes `literal` when the text continues with it.
  bool eat(std::string_view literal) {
    if (!rest().starts_with(literal)) return false;
    at += literal.size();
    return true;
  }
  // Consumes a run of `min`..`max` ASCII digits (no more may follow), or nothing.
  std::optional<std::string_view> digits(std::size_t min = 1, std::size_t max = std::string_view::npos) {
    std::size_t n = 0;
    while (at + n < s.size() && is_digit(s[at + n])) ++n;
    if (n < min || n > max) return std::nullopt;
    const std::string_view out = s.substr(at, n);
    at += n;
    return out;
  }
  // Consumes the longest run of bytes for which `pred` holds (possibly empty).
  template <class Pred>
  std::string_view span(Pred pred) {
    const std::size_t start = at;
    while (at < s.size() && pred(s[at])) ++at;
    return s.substr(start, at - start);
  }
  // Consumes spaces (' ' only).
  std::size_t spaces() {
    return span([](char c) { return c == ' '; }).size();
  }
};

// An unsigned decimal that fits an int, or nothing.
inline std::optional<int> to_int(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : digits) {
    if (!is_digit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace envpin::diag

// SPDX-License-Identifier: Apache-2.0
// PEP 508 environment markers ("python_version < '3.10' and sys_platform == 'linux'"), read by the
// specification's grammar. The manifest loader and envpin init refuse what does not parse;
// envpin init evaluates the tree for the image (init/marker.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::manifest {

// A marker as a tree: `or` (any) and `and` (all) of comparisons.
struct Marker {
  enum class Kind { any, all, compare };
  Kind kind = Kind::compare;
  std::vector<Marker> children;  // any, all
  // compare: `left op right`, each side a variable (its PEP 508 name; the legacy dotted names
  // such as os.name are read as theirs) or the text of a quoted string.
  bool left_is_variable = false;
  bool right_is_variable = false;
  std::string left;
  std::string op;  // < <= == != >= > ~= === in, "not in"
  std::string right;
};

// Markers nest at most this many parentheses deep.
inline constexpr int kMaxMarkerDepth = 32;

// Parses `text` by PEP 508's grammar (marker_or, marker_and, marker_expr; the environment
// variables the specification lists, quoted strings of its python_str_c characters, the version
// comparison operators, `in` and `not in`, parentheses), with the keywords `and`, `or`, `not` and
// `in` as whole words. On failure returns nullopt, sets `error` to what is wrong and `column` to
// its 0-based offset in `text`.
// https://packaging.python.org/en/latest/specifications/dependency-specifiers/
std::optional<Marker> parse_marker(std::string_view text, std::string& error, std::size_t& column);

}  // namespace envpin::manifest

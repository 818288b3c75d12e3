// SPDX-License-Identifier: Apache-2.0
#include "init/marker.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <vector>

#include "manifest/marker.hpp"

namespace envpin::init {
namespace {

using manifest::Marker;

// A version's release numbers ("3.10.4" -> 3, 10, 4); what follows them is ignored. nullopt when
// a number does not fit 64 bits: such a comparison cannot be told, never wrapped or clamped.
std::optional<std::vector<std::uint64_t>> release_of(std::string_view v) {
  std::vector<std::uint64_t> out;
  std::size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data() + i, v.data() + v.size(), n);
    if (ec != std::errc()) return std::nullopt;
    out.push_back(n);
    i = static_cast<std::size_t>(end - v.data());
    if (i + 1 < v.size() && v[i] == '.' && std::isdigit(static_cast<unsigned char>(v[i + 1])))
      ++i;
    else
      break;
  }
  return out;
}

std::optional<int> compare_versions(std::string_view a, std::string_view b) {
  auto x = release_of(a), y = release_of(b);
  if (!x || !y) return std::nullopt;
  const std::size_t n = std::max(x->size(), y->size());
  x->resize(n, 0);
  y->resize(n, 0);
  return *x < *y ? -1 : *x > *y ? 1 : 0;
}

bool is_version_variable(std::string_view name) {
  return name == "python_version" || name == "python_full_version" || name == "implementation_version";
}

// The image's value of a marker variable; nullopt for the ones envpin cannot know.
std::optional<std::string> variable(std::string_view name, const std::string& python) {
  if (name == "python_version") return python.substr(0, python.find('.', python.find('.') + 1));
  if (name == "python_full_version" || name == "implementation_version") {
    if (std::count(python.begin(), python.end(), '.') >= 2) return python;
    return std::nullopt;  // the patch release is the base image's
  }
  if (name == "os_name") return "posix";
  if (name == "sys_platform") return "linux";
  if (name == "platform_system") return "Linux";
  if (name == "platform_machine") return "x86_64";
  if (name == "implementation_name") return "cpython";
  if (name == "platform_python_implementation") return "CPython";
  return std::nullopt;  // extra, extras, dependency_groups, platform_release, platform_version
}

std::optional<bool> compare(const std::string& a, const std::string& op, const std::string& b, bool versions) {
  if (op == "in") return b.find(a) != std::string::npos;
  if (op == "not in") return b.find(a) == std::string::npos;
  if (op == "===") return a == b;
  if (!versions) {
    if (op == "==") return a == b;
    if (op == "!=") return a != b;
    return std::nullopt;  // ordering strings: PEP 508 leaves it to the implementation
  }
  if (b.ends_with(".*") && (op == "==" || op == "!=")) {
    const auto have = release_of(a), prefix = release_of(b.substr(0, b.size() - 2));
    if (!have || !prefix) return std::nullopt;
    const bool match = have->size() >= prefix->size() && std::equal(prefix->begin(), prefix->end(), have->begin());
    return op == "==" ? match : !match;
  }
  const std::optional<int> c = compare_versions(a, b);
  if (!c) return std::nullopt;
  if (op == "==") return *c == 0;
  if (op == "!=") return *c != 0;
  if (op == "<") return *c < 0;
  if (op == "<=") return *c <= 0;
  if (op == ">") return *c > 0;
  if (op == ">=") return *c >= 0;
  if (op == "~=") {
    auto prefix = release_of(b);
    const auto have = release_of(a);
    if (!prefix || !have || prefix->size() < 2) return std::nullopt;
    prefix->pop_back();
    return *c >= 0 && have->size() >= prefix->size() && std::equal(prefix->begin(), prefix->end(), have->begin());
  }
  return std::nullopt;
}

// Three-valued: nullopt where the image's value cannot be known.
std::optional<bool> evaluate(const Marker& m, const std::string& python) {
  if (m.kind == Marker::Kind::compare) {
    const auto left = m.left_is_variable ? variable(m.left, python) : std::optional<std::string>(m.left);
    const auto right = m.right_is_variable ? variable(m.right, python) : std::optional<std::string>(m.right);
    if (!left || !right) return std::nullopt;
    const bool versions =
        (m.left_is_variable && is_version_variable(m.left)) || (m.right_is_variable && is_version_variable(m.right));
    return compare(*left, m.op, *right, versions);
  }
  // any: true when one holds, false when none can; all: false when one fails, true when all hold.
  const bool any = m.kind == Marker::Kind::any;
  bool unknown = false;
  for (const Marker& child : m.children) {
    const std::optional<bool> v = evaluate(child, python);
    if (!v)
      unknown = true;
    else if (*v == any)
      return any;
  }
  return unknown ? std::nullopt : std::optional<bool>(!any);
}

}  // namespace

std::optional<bool> marker_holds(std::string_view marker, const std::string& python) {
  if (marker.size() > 4096) return std::nullopt;
  std::string error;
  std::size_t column = 0;
  const std::optional<Marker> m = manifest::parse_marker(marker, error, column);
  if (!m) return std::nullopt;
  return evaluate(*m, python);
}

}  // namespace envpin::init

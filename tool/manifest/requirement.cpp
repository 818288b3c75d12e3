// SPDX-License-Identifier: Apache-2.0
#include "manifest/requirement.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace envpin::manifest {
namespace {

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

}  // namespace

std::string normalize_name(std::string_view name) {
  // PEP 503: re.sub(r"[-_.]+", "-", name).lower()
  std::string out;
  bool in_run = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_run) out += '-';
      in_run = true;
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      in_run = false;
    }
  }
  return out;
}

namespace {

// Version grammar from PEP 440 appendix B, written for std::regex (ECMAScript, icase).
const std::regex& pep440() {
  static const std::regex re(
      R"(^v?(\d+!)?\d+(\.\d+)*([-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?)"
      R"((-\d+|[-_.]?(post|rev|r)[-_.]?\d*)?([-_.]?dev[-_.]?\d*)?(\+[a-z0-9]+([-_.][a-z0-9]+)*)?$)",
      std::regex::icase | std::regex::optimize);
  return re;
}

}  // namespace

std::string Requirement::text() const {
  std::string out = normalized;
  if (!extras.empty()) {
    std::vector<std::string> sorted = extras;
    std::sort(sorted.begin(), sorted.end());
    out += '[';
    for (std::size_t i = 0; i < sorted.size(); ++i) out += (i ? "," : "") + sorted[i];
    out += ']';
  }
  for (std::size_t i = 0; i < specifiers.size(); ++i)
    out += (i ? "," : "") + specifiers[i].op + specifiers[i].version;
  if (!marker.empty()) out += "; " + marker;
  return out;
}

std::optional<std::string> Requirement::pinned() const {
  for (const Specifier& s : specifiers)
    if ((s.op == "==" || s.op == "===") && !s.version.ends_with(".*")) return s.version;
  return std::nullopt;
}

bool is_pep440_version(std::string_view v, bool allow_wildcard) {
  // Fast path for the common release form "N(.N)*": std::regex compilation of the full grammar
  // costs ~7M instructions, a third of a whole `envpin generate` (measured with callgrind).
  const auto release = [](std::string_view r) {
    if (r.empty() || r.front() == '.' || r.back() == '.' || r.find("..") != std::string_view::npos) return false;
    return std::all_of(r.begin(), r.end(), [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
  };
  if (release(v)) return true;
  if (allow_wildcard && v.size() > 2 && v.ends_with(".*") && release(v.substr(0, v.size() - 2))) return true;
  static const std::regex wildcard(R"(^v?(\d+!)?\d+(\.\d+)*\.\*$)", std::regex::icase);
  const std::string s(v);
  if (allow_wildcard && std::regex_match(s, wildcard)) return true;
  return std::regex_match(s, pep440());
}

bool is_python_version(std::string_view v) {
  static const std::regex re(R"(^3\.(0|[1-9]\d?)(\.(0|[1-9]\d?))?$)");
  return std::regex_match(std::string(v), re);
}

bool is_driver_version(std::string_view v) {
  static const std::regex re(R"(^[1-9]\d{2,3}(\.\d{1,3}(\.\d{1,3})?)?$)");
  return std::regex_match(std::string(v), re);
}

bool is_deb_name(std::string_view v) {
  static const std::regex re(R"(^[a-z0-9][a-z0-9+.-]+$)");
  return std::regex_match(std::string(v), re);
}

bool is_deb_version(std::string_view v) {
  static const std::regex re(R"(^(\d+:)?[0-9][A-Za-z0-9.+~:-]*$)");
  return std::regex_match(std::string(v), re);
}

std::optional<Requirement> parse_requirement(std::string_view text, std::string& error,
                                             std::size_t& column) {
  Requirement req;
  std::size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && is_space(text[i])) ++i;
  };
  auto fail = [&](std::string what, std::size_t at) -> std::optional<Requirement> {
    error = std::move(what);
    column = at;
    return std::nullopt;
  };

  skip_space();
  const std::size_t name_start = i;
  if (i < text.size() && text[i] == '-') return fail("an option, not a package requirement", name_start);
  while (i < text.size() && (is_alnum(text[i]) || text[i] == '-' || text[i] == '_' || text[i] == '.'))
    ++i;
  req.name = std::string(text.substr(name_start, i - name_start));
  if (req.name.empty()) return fail("expected a package name", name_start);
  if (!is_alnum(req.name.front()) || !is_alnum(req.name.back()))
    return fail("package name '" + req.name + "' must start and end with a letter or digit",
                name_start);
  req.normalized = normalize_name(req.name);

  skip_space();
  if (i < text.size() && text[i] == '[') {
    ++i;
    for (;;) {
      skip_space();
      const std::size_t start = i;
      while (i < text.size() && (is_alnum(text[i]) || text[i] == '-' || text[i] == '_' || text[i] == '.'))
        ++i;
      if (i == start) return fail("expected an extra name", start);
      req.extras.push_back(normalize_name(text.substr(start, i - start)));
      skip_space();
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size() && text[i] == ']') {
        ++i;
        break;
      }
      return fail("expected ',' or ']' in extras", i);
    }
  }

  skip_space();
  if (i < text.size() && text[i] == '@')
    return fail("direct URL requirements are not supported; pin a version with '=='", i);
  bool parenthesized = false;
  if (i < text.size() && text[i] == '(') {
    parenthesized = true;
    ++i;
  }
  for (;;) {
    skip_space();
    if (i >= text.size() || text[i] == ';' || (parenthesized && text[i] == ')')) break;
    const std::size_t op_start = i;
    static constexpr std::string_view ops[] = {"===", "==", "!=", "<=", ">=", "~=", "<", ">"};
    std::string op;
    for (std::string_view candidate : ops) {
      if (text.substr(i).starts_with(candidate)) {
        op = candidate;
        break;
      }
    }
    if (op.empty()) {
      if (i < text.size() && text[i] == '=')
        return fail("'=' is not a version operator; use '=='", op_start);
      return fail("expected a version operator (==, >=, <=, !=, ~=, <, >)", op_start);
    }
    i += op.size();
    skip_space();
    const std::size_t v_start = i;
    while (i < text.size() && !is_space(text[i]) && text[i] != ',' && text[i] != ';' &&
           text[i] != ')')
      ++i;
    std::string version(text.substr(v_start, i - v_start));
    const bool wildcard_ok = op == "==" || op == "!=";
    if (op != "===" && !is_pep440_version(version, wildcard_ok))
      return fail("invalid version '" + version + "' for '" + req.name + "'", v_start);
    if (op == "~=" && version.find('.') == std::string::npos)
      return fail("'~=" + version + "' needs at least two version parts, e.g. '~=" + version + ".0'",
                  v_start);
    req.specifiers.push_back({op, version});
    skip_space();
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    break;
  }
  if (parenthesized) {
    if (i >= text.size() || text[i] != ')') return fail("expected ')'", i);
    ++i;
  }
  skip_space();
  if (i < text.size() && text[i] == ';') {
    ++i;
    skip_space();
    std::string_view rest = text.substr(i);
    while (!rest.empty() && is_space(rest.back())) rest.remove_suffix(1);
    if (rest.empty()) return fail("expected an environment marker after ';'", i);
    req.marker = std::string(rest);
    i = text.size();
  }
  skip_space();
  if (i != text.size())
    return fail("unexpected '" + std::string(text.substr(i, 1)) + "' in requirement", i);
  return req;
}

}  // namespace envpin::manifest

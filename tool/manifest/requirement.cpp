// SPDX-License-Identifier: Apache-2.0
#include "manifest/requirement.hpp"

#include <algorithm>
#include <cctype>

#include "diag/cursor.hpp"
#include "diag/text.hpp"
#include "manifest/marker.hpp"

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

using diag::is_digit;
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// A cursor over a version string for the PEP 440 grammar (appendix B, case-insensitive),
// checked character by character: std::regex recursion crashed on long input.
struct Cursor {
  std::string_view s;
  std::size_t i = 0;
  bool end() const { return i >= s.size(); }
  bool digits() {
    const std::size_t start = i;
    while (!end() && is_digit(s[i])) ++i;
    return i > start;
  }
  bool sep() {
    if (!end() && (s[i] == '-' || s[i] == '_' || s[i] == '.')) return ++i, true;
    return false;
  }
  // One of `words` (longest first), case-insensitive.
  bool word(std::initializer_list<std::string_view> words) {
    for (std::string_view w : words) {
      if (s.size() - i < w.size()) continue;
      bool same = true;
      for (std::size_t k = 0; k < w.size() && same; ++k) same = lower(s[i + k]) == w[k];
      if (same) return i += w.size(), true;
    }
    return false;
  }
  // The optional number after a pre/post/dev word: [-_.]?N*, where a separator is taken only
  // when digits (or the end) follow it, so that it can start the next segment instead.
  void number() {
    if (!end() && (s[i] == '-' || s[i] == '_' || s[i] == '.') && (i + 1 == s.size() || is_digit(s[i + 1]))) ++i;
    digits();
  }
  // [-_.]? WORD [-_.]? N*, or nothing (the cursor is restored).
  bool segment(std::initializer_list<std::string_view> words) {
    const std::size_t start = i;
    sep();
    if (!word(words)) return i = start, false;
    number();
    return true;
  }
};

// v? (N!)? N(.N)*, the release part of a version.
bool release(Cursor& c) {
  if (!c.end() && lower(c.s[c.i]) == 'v') ++c.i;
  const std::size_t start = c.i;
  if (c.digits() && !c.end() && c.s[c.i] == '!')
    ++c.i;
  else
    c.i = start;
  if (!c.digits()) return false;
  while (c.i + 1 < c.s.size() && c.s[c.i] == '.' && is_digit(c.s[c.i + 1])) {
    ++c.i;
    c.digits();
  }
  return true;
}

bool pep440(std::string_view v) {
  Cursor c{v};
  if (!release(c)) return false;
  c.segment({"preview", "alpha", "beta", "pre", "rc", "a", "b", "c"});
  const std::size_t before_post = c.i;
  if (!c.end() && c.s[c.i] == '-' && c.i + 1 < c.s.size() && is_digit(c.s[c.i + 1])) {
    ++c.i;
    c.digits();
  } else {
    c.i = before_post;
    c.segment({"post", "rev", "r"});
  }
  c.segment({"dev"});
  if (!c.end() && c.s[c.i] == '+') {
    ++c.i;
    // [a-z0-9]+ ([-_.][a-z0-9]+)*
    for (;;) {
      const std::size_t start = c.i;
      while (!c.end() && std::isalnum(static_cast<unsigned char>(c.s[c.i]))) ++c.i;
      if (c.i == start) return false;
      if (c.end()) break;
      if (!c.sep()) return false;
    }
  }
  return c.end();
}

// v?(N!)?N(.N)*.*
bool pep440_wildcard(std::string_view v) {
  if (!v.ends_with(".*")) return false;
  Cursor c{v.substr(0, v.size() - 2)};
  return release(c) && c.end();
}

bool all_digits(std::string_view s, std::size_t min, std::size_t max) {
  return s.size() >= min && s.size() <= max && std::all_of(s.begin(), s.end(), is_digit);
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
  for (std::size_t i = 0; i < specifiers.size(); ++i) out += (i ? "," : "") + specifiers[i].op + specifiers[i].version;
  if (!marker.empty()) out += "; " + marker;
  return out;
}

std::optional<std::string> Requirement::pinned() const {
  for (const Specifier& s : specifiers)
    if ((s.op == "==" || s.op == "===") && !s.version.ends_with(".*")) return s.version;
  return std::nullopt;
}

bool is_pep440_version(std::string_view v, bool allow_wildcard) {
  return pep440(v) || (allow_wildcard && pep440_wildcard(v));
}

bool is_python_version(std::string_view v) {
  // 3.N or 3.N.N, without leading zeros, each part at most two digits.
  if (!v.starts_with("3.")) return false;
  v.remove_prefix(2);
  const auto part = [](std::string_view p) { return all_digits(p, 1, 2) && (p.size() == 1 || p.front() != '0'); };
  const std::size_t dot = v.find('.');
  if (dot == std::string_view::npos) return part(v);
  return part(v.substr(0, dot)) && part(v.substr(dot + 1));
}

bool is_driver_version(std::string_view v) {
  // NNN[N][.N{1,3}[.N{1,3}]], the first digit not 0.
  std::size_t part = 0;
  for (std::size_t start = 0;; ++part) {
    const std::size_t dot = v.find('.', start);
    const std::string_view p = v.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part == 0 ? !(all_digits(p, 3, 4) && p.front() != '0') : !all_digits(p, 1, 3)) return false;
    if (dot == std::string_view::npos) return part <= 2;
    if (part == 2) return false;
    start = dot + 1;
  }
}

bool is_index_url(std::string_view v) {
  return (v.starts_with("https://") || v.starts_with("http://")) && diag::only_ascii(v, ":/._-~%?&=+@!,;#[]");
}

std::string_view index_url_credentials(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  const std::string_view rest = url.substr(scheme + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  const std::size_t at = authority.rfind('@');
  return at == std::string_view::npos ? std::string_view() : authority.substr(0, at + 1);
}

bool is_deb_name(std::string_view v) {
  // Policy §5.6.1: [a-z0-9][a-z0-9+.-]+
  const auto ok = [](char c) { return (c >= 'a' && c <= 'z') || is_digit(c) || c == '+' || c == '.' || c == '-'; };
  return v.size() >= 2 && ((v[0] >= 'a' && v[0] <= 'z') || is_digit(v[0])) && std::all_of(v.begin(), v.end(), ok);
}

bool is_deb_version(std::string_view v) {
  // Policy §5.6.12: [epoch:]upstream[-revision], here (N:)?[0-9][A-Za-z0-9.+~:-]*
  if (const std::size_t colon = v.find(':');
      colon != std::string_view::npos && colon > 0 && all_digits(v.substr(0, colon), 1, 10))
    v.remove_prefix(colon + 1);
  const auto ok = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '~' || c == ':' || c == '-';
  };
  return !v.empty() && is_digit(v[0]) && std::all_of(v.begin(), v.end(), ok);
}

std::optional<Requirement> parse_requirement(std::string_view text, std::string& error, std::size_t& column) {
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
  while (i < text.size() && (is_alnum(text[i]) || text[i] == '-' || text[i] == '_' || text[i] == '.')) ++i;
  req.name = std::string(text.substr(name_start, i - name_start));
  if (req.name.empty()) return fail("expected a package name", name_start);
  if (!is_alnum(req.name.front()) || !is_alnum(req.name.back()))
    return fail("package name '" + req.name + "' must start and end with a letter or digit", name_start);
  req.normalized = normalize_name(req.name);

  skip_space();
  if (i < text.size() && text[i] == '[') {
    ++i;
    for (;;) {
      skip_space();
      const std::size_t start = i;
      while (i < text.size() && (is_alnum(text[i]) || text[i] == '-' || text[i] == '_' || text[i] == '.')) ++i;
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
    static constexpr std::string_view kOps[] = {"===", "==", "!=", "<=", ">=", "~=", "<", ">"};
    std::string op;
    for (std::string_view candidate : kOps) {
      if (text.substr(i).starts_with(candidate)) {
        op = candidate;
        break;
      }
    }
    if (op.empty()) {
      if (i < text.size() && text[i] == '=') return fail("'=' is not a version operator; use '=='", op_start);
      return fail("expected a version operator (==, >=, <=, !=, ~=, <, >)", op_start);
    }
    i += op.size();
    skip_space();
    const std::size_t v_start = i;
    while (i < text.size() && !is_space(text[i]) && text[i] != ',' && text[i] != ';' && text[i] != ')') ++i;
    std::string version(text.substr(v_start, i - v_start));
    const bool wildcard_ok = op == "==" || op == "!=";
    if (op != "===" && !is_pep440_version(version, wildcard_ok))
      return fail("invalid version '" + version + "' for '" + req.name + "'", v_start);
    if (op == "~=" && version.find('.') == std::string::npos)
      return fail("'~=" + version + "' needs at least two version parts, e.g. '~=" + version + ".0'", v_start);
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
    std::string why;
    std::size_t at = 0;
    if (!parse_marker(rest, why, at)) return fail(why, i + at);
    req.marker = std::string(rest);
    i = text.size();
  }
  skip_space();
  if (i != text.size()) return fail("unexpected '" + std::string(text.substr(i, 1)) + "' in requirement", i);
  return req;
}

}  // namespace envpin::manifest

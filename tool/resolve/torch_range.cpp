// SPDX-License-Identifier: Apache-2.0
#include "resolve/torch_range.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace envpin::resolve {
namespace {

// "2.7.1" -> {2, 7, 1}; non-numeric parts stop the parse (torch releases are numeric). A part
// too large for a long is the largest long: it still sorts above every real one.
std::vector<long> numbers(std::string_view v) {
  constexpr long kMost = std::numeric_limits<long>::max();
  std::vector<long> out;
  long n = 0;
  bool any = false;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      n = n > (kMost - (c - '0')) / 10 ? kMost : n * 10 + (c - '0');
      any = true;
    } else if (c == '.') {
      out.push_back(n);
      n = 0;
      any = false;
    } else {
      break;
    }
  }
  if (any) out.push_back(n);
  return out;
}

int compare(const std::vector<long>& a, const std::vector<long>& b) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const long x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

bool prefix(const std::vector<long>& v, const std::vector<long>& p) {
  for (std::size_t i = 0; i < p.size(); ++i)
    if ((i < v.size() ? v[i] : 0) != p[i]) return false;
  return true;
}

// PEP 440 for release versions: one clause ("op" + "version") against `v`.
bool clause(const std::vector<long>& v, std::string_view op, std::string_view version) {
  const bool wildcard = version.ends_with(".*");
  const std::vector<long> w = numbers(wildcard ? version.substr(0, version.size() - 2) : version);
  if (op == "==" || op == "===") return wildcard ? prefix(v, w) : compare(v, w) == 0;
  if (op == "!=") return wildcard ? !prefix(v, w) : compare(v, w) != 0;
  if (op == ">=") return compare(v, w) >= 0;
  if (op == "<=") return compare(v, w) <= 0;
  if (op == ">") return compare(v, w) > 0;
  if (op == "<") return compare(v, w) < 0;
  if (op == "~=") {
    // ~=2.7.1: >=2.7.1 and ==2.7.*
    std::vector<long> base = w;
    if (base.size() > 1) base.pop_back();
    return compare(v, w) >= 0 && prefix(v, base);
  }
  return false;
}

// ">=1.20, <2" -> {(">=", "1.20"), ("<", "2")}
std::vector<std::pair<std::string, std::string>> clauses_of(std::string_view spec) {
  std::vector<std::pair<std::string, std::string>> clauses;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t end = std::min(spec.find(',', start), spec.size());
    std::string c(spec.substr(start, end - start));
    std::erase(c, ' ');
    if (!c.empty()) {
      const std::size_t at = c.find_first_not_of("=!<>~");
      clauses.emplace_back(c.substr(0, at), at == std::string::npos ? "" : c.substr(at));
    }
    start = end + 1;
  }
  return clauses;
}

}  // namespace

bool version_satisfies(std::string_view version, std::string_view spec) {
  const std::vector<long> v = numbers(version);
  const auto clauses = clauses_of(spec);
  return std::all_of(clauses.begin(), clauses.end(), [&](const auto& c) { return clause(v, c.first, c.second); });
}

bool minor_satisfies(std::string_view minor, std::string_view spec) {
  const auto clauses = clauses_of(spec);
  // The patches worth trying: 0, each patch a clause names in this minor and its neighbours,
  // and one past every patch ever released.
  const std::vector<long> m = numbers(minor);
  std::vector<long> patches = {0, 9999};
  for (const auto& [op, version] : clauses) {
    const std::vector<long> w = numbers(version);
    if (w.size() >= 3 && prefix(w, m))
      for (long p : {w[2] - 1, w[2], w[2] + 1})
        if (p >= 0) patches.push_back(p);
  }
  return std::any_of(patches.begin(), patches.end(), [&](long p) {
    std::vector<long> v = m;
    v.resize(2, 0);
    v.push_back(p);
    return std::all_of(clauses.begin(), clauses.end(), [&](const auto& c) { return clause(v, c.first, c.second); });
  });
}

manifest::Requirement pin_torch_range(const manifest::Requirement& r, const std::string& minor) {
  if (minor.empty() || r.normalized != "torch" || r.pinned()) return r;
  manifest::Requirement out = r;
  out.specifiers.push_back({"==", minor + ".*"});
  return out;
}

}  // namespace envpin::resolve

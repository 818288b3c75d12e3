// SPDX-License-Identifier: Apache-2.0
#include "scan/ignore.hpp"

#include <algorithm>
#include <sstream>

#include "io/atomic_file.hpp"

namespace envpin::scan {
Glob::Glob(std::string p) {
  while (p.starts_with("/")) p.erase(0, 1);
  while (p.starts_with("./")) p.erase(0, 2);
  while (p.size() > 1 && p.ends_with("/")) p.pop_back();
  bool literal = true;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    Token t{Kind::kLiteral, 0, {}, false};
    if (c == '*' && i + 1 < p.size() && p[i + 1] == '*') {
      const bool slash = i + 2 < p.size() && p[i + 2] == '/';
      t.kind = slash ? Kind::kDeepSlash : Kind::kDeep;
      i += slash ? 2 : 1;
    } else if (c == '*') {
      t.kind = Kind::kStar;
    } else if (c == '?') {
      t.kind = Kind::kOne;
    } else if (c == '[' && p.find(']', i + 1) != std::string::npos) {
      const std::size_t close = p.find(']', i + 1);
      t.kind = Kind::kSet;
      t.set = p.substr(i + 1, close - i - 1);
      if (!t.set.empty() && (t.set[0] == '!' || t.set[0] == '^')) {
        t.negated = true;
        t.set.erase(0, 1);
      }
      i = close;
    } else if (c == '\\' && i + 1 < p.size()) {
      t.c = p[++i];
    } else {
      t.c = c;
    }
    if (t.kind != Kind::kLiteral) literal = false;
    if (literal) prefix_ += t.c;
    tokens_.push_back(std::move(t));
  }
}

bool Glob::in_set(const Token& t, char c) {
  bool hit = false;
  for (std::size_t i = 0; i < t.set.size() && !hit; ++i) {
    if (t.set[i] == '\\' && i + 1 < t.set.size()) {
      hit = t.set[++i] == c;
    } else if (i + 2 < t.set.size() && t.set[i + 1] == '-') {
      hit = t.set[i] <= c && c <= t.set[i + 2];
      i += 2;
    } else {
      hit = t.set[i] == c;
    }
  }
  return hit != t.negated;
}

bool Glob::matches(std::string_view path) const {
  const std::size_t n = tokens_.size();
  // live[k]: the first characters read so far can be matched by tokens_[0..k).
  std::vector<char> live(n + 1, 0), next(n + 1, 0);
  const auto close = [&](std::vector<char>& set) {  // tokens that may match nothing
    for (std::size_t k = 0; k < n; ++k)
      if (set[k] &&
          (tokens_[k].kind == Kind::kStar || tokens_[k].kind == Kind::kDeep || tokens_[k].kind == Kind::kDeepSlash))
        set[k + 1] = 1;
  };
  live[0] = 1;
  close(live);
  for (const char c : path) {
    std::fill(next.begin(), next.end(), 0);
    bool any = false;
    for (std::size_t k = 0; k < n; ++k) {
      if (!live[k]) continue;
      const Token& t = tokens_[k];
      switch (t.kind) {
        case Kind::kLiteral:
          if (c == t.c) next[k + 1] = 1;
          break;
        case Kind::kOne:
          if (c != '/') next[k + 1] = 1;
          break;
        case Kind::kSet:
          if (in_set(t, c)) next[k + 1] = 1;
          break;
        case Kind::kStar:
          if (c != '/') next[k] = 1;
          break;
        case Kind::kDeep:
          next[k] = 1;
          break;
        case Kind::kDeepSlash:  // "(.*/)?": anything, then past it at a '/'
          next[k] = 1;
          if (c == '/') next[k + 1] = 1;
          break;
      }
    }
    close(next);
    for (char v : next) any = any || v;
    if (!any) return false;
    live.swap(next);
  }
  return live[n] != 0;
}

namespace {

bool matches(const Glob& glob, const std::string& path) {
  // The path itself, then each parent directory.
  for (std::size_t end = path.size(); end > 0; end = path.rfind('/', end - 1)) {
    if (glob.matches(std::string_view(path).substr(0, end))) return true;
    if (path.rfind('/', end - 1) == std::string::npos) break;
  }
  return false;
}

}  // namespace

IgnoreRules IgnoreRules::from_file(const std::filesystem::path& file) {
  IgnoreRules rules;
  const auto text = io::read_file(file);
  if (!text) return rules;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line.starts_with("#")) continue;
    rules.add(line);
  }
  return rules;
}

void IgnoreRules::add(const std::string& pattern) {
  const bool negate = pattern.starts_with("!");
  rules_.push_back({Glob(negate ? pattern.substr(1) : pattern), negate});
}

bool IgnoreRules::excluded(const std::string& path) const {
  bool out = false;
  for (const Rule& r : rules_)
    if (matches(r.glob, path)) out = !r.negate;
  return out;
}

bool IgnoreRules::may_reinclude_below(const std::string& dir) const {
  const std::string below = dir + "/";
  for (const Rule& r : rules_) {
    if (!r.negate) continue;
    const std::string& prefix = r.glob.literal_prefix();
    // A pattern that starts with a wildcard, or whose literal start and the directory agree as
    // far as the shorter goes, may name something below it.
    if (prefix.starts_with(below) || below.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace envpin::scan

// SPDX-License-Identifier: Apache-2.0
#include "scan/ignore.hpp"

#include <algorithm>
#include <sstream>

#include "io/atomic_file.hpp"

namespace envpin::scan {
namespace {

bool matches(const std::regex& re, const std::string& path) {
  // The path itself, then each parent directory.
  for (std::size_t end = path.size(); end > 0; end = path.rfind('/', end - 1)) {
    if (std::regex_match(path.substr(0, end), re)) return true;
    if (path.rfind('/', end - 1) == std::string::npos) break;
  }
  return false;
}

}  // namespace

std::regex pattern_regex(std::string p) {
  while (p.starts_with("/")) p.erase(0, 1);
  while (p.starts_with("./")) p.erase(0, 2);
  while (p.size() > 1 && p.ends_with("/")) p.pop_back();
  std::string re;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '*' && i + 1 < p.size() && p[i + 1] == '*') {
      const bool slash = i + 2 < p.size() && p[i + 2] == '/';
      re += slash ? "(.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c == '*') {
      re += "[^/]*";
    } else if (c == '?') {
      re += "[^/]";
    } else if (c == '[') {
      const auto close = p.find(']', i);
      if (close == std::string::npos) {
        re += "\\[";
      } else {
        std::string set = p.substr(i + 1, close - i - 1);
        if (!set.empty() && set[0] == '!') set[0] = '^';
        re += "[" + set + "]";
        i = close;
      }
    } else if (c == '\\' && i + 1 < p.size()) {
      re += "\\";
      re += p[++i];
    } else if (std::string(".+()^$|{}").find(c) != std::string::npos) {
      re += "\\";
      re += c;
    } else {
      re += c;
    }
  }
  return std::regex(re);
}

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
  rules_.push_back({pattern_regex(negate ? pattern.substr(1) : pattern), negate});
}

bool IgnoreRules::excluded(const std::string& path) const {
  bool out = false;
  for (const Rule& r : rules_)
    if (matches(r.re, path)) out = !r.negate;
  return out;
}

}  // namespace envpin::scan

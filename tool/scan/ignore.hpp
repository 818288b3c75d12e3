// SPDX-License-Identifier: Apache-2.0
// .dockerignore / .gitignore patterns (Go filepath.Match plus "**", "!" re-includes, last match
// wins, a pattern matching a directory matches everything below), and the secret-file list.
#pragma once

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace envpin::scan {

class IgnoreRules {
 public:
  // Reads a .dockerignore-style file; a missing file gives no rules.
  static IgnoreRules from_file(const std::filesystem::path& file);
  void add(const std::string& pattern);
  // `path` is relative to the context root, '/' separated.
  bool excluded(const std::string& path) const;

 private:
  struct Rule {
    std::regex re;
    bool negate;
  };
  std::vector<Rule> rules_;
};

// The regex a single pattern compiles to (exposed for tests).
std::regex pattern_regex(std::string pattern);

}  // namespace envpin::scan

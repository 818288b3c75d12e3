// SPDX-License-Identifier: Apache-2.0
// .dockerignore / .gitignore patterns (Go filepath.Match plus "**", "!" re-includes, last match
// wins, a pattern matching a directory matches everything below), and the secret-file list.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::scan {

// One pattern, compiled: '*' and '?' stop at '/', "**/" is any number of directories (none
// included), "**" anything, [set] / [!set] / [^set] one character (ranges as a-z), '\\' quotes
// the next character. Matched by simulating all positions at once: linear in the path for a
// given pattern, whatever the pattern holds (no backtracking, no std::regex recursion).
class Glob {
 public:
  explicit Glob(std::string pattern);
  bool matches(std::string_view path) const;
  // The pattern's text up to its first wildcard (all of it when it has none).
  const std::string& literal_prefix() const { return prefix_; }

 private:
  enum class Kind { kLiteral, kOne, kSet, kStar, kDeep, kDeepSlash };
  struct Token {
    Kind kind;
    char c = 0;            // kLiteral
    std::string set;       // kSet: the characters and ranges between the brackets
    bool negated = false;  // kSet
  };
  static bool in_set(const Token& t, char c);
  std::vector<Token> tokens_;
  std::string prefix_;
};

class IgnoreRules {
 public:
  // Reads a .dockerignore-style file; a missing file gives no rules.
  static IgnoreRules from_file(const std::filesystem::path& file);
  void add(const std::string& pattern);
  // `path` is relative to the context root, '/' separated.
  bool excluded(const std::string& path) const;
  // Whether a "!" rule could re-include something below the directory `dir` (so a walk that
  // finds `dir` excluded must still look inside it).
  bool may_reinclude_below(const std::string& dir) const;

 private:
  struct Rule {
    Glob glob;
    bool negate;
  };
  std::vector<Rule> rules_;
};

}  // namespace envpin::scan

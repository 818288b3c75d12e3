// SPDX-License-Identifier: Apache-2.0
#include "manifest/gitignore.hpp"

#include <algorithm>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"

namespace envpin::manifest {

std::vector<std::string> dockerignore_patterns(const io::GitIgnoreFile& file, const std::string& shown) {
  std::vector<std::string> out;
  std::istringstream lines(file.text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (const std::size_t bad = std::min(diag::invalid_utf8_at(line), diag::control_at(line)); bad != std::string::npos)
      throw diag::Error("the .gitignore line holds " + diag::describe_char_at(line, bad),
                        diag::Location{shown, number, static_cast<int>(bad) + 1},
                        "fix that line, or set context.include_gitignored: true to not translate .gitignore");
    if (line.empty() || line.front() == '#') continue;
    const bool negate = line.front() == '!';
    if (negate) line.erase(0, 1);
    // Trailing spaces are dropped unless escaped with a backslash (gitignore(5)).
    while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\')) line.pop_back();
    // docker trims every pattern: a leading or (escaped) trailing space cannot be said in a
    // .dockerignore.
    if (line.empty() || line.front() == ' ' || line.back() == ' ') continue;
    bool directories_only = false;
    while (line.size() > 1 && line.back() == '/') {
      directories_only = true;
      line.pop_back();
    }
    if (line == "/") continue;
    const bool anchored = line.find('/') != std::string::npos;
    if (line.front() == '/') line.erase(0, 1);
    std::string pattern;
    if (!file.inside.empty()) {
      // A directory above the project: its patterns are relative to that directory.
      if (!anchored)
        pattern = "**/" + line;
      else if (line.starts_with("**/"))
        pattern = line;
      else if (line.starts_with(file.inside + "/"))
        pattern = line.substr(file.inside.size() + 1);
      else
        continue;  // a path outside the project, or a wildcard across its boundary
    } else {
      pattern = file.prefix + (anchored ? line : "**/" + line);
    }
    if (directories_only) pattern += "/**";
    out.push_back((negate ? "!" : "") + pattern);
  }
  return out;
}

}  // namespace envpin::manifest

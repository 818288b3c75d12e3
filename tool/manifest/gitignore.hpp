// SPDX-License-Identifier: Apache-2.0
// .gitignore patterns as .dockerignore patterns, so a build context leaves out what git ignores.
#pragma once

#include <string>
#include <vector>

#include "io/gitignore.hpp"

namespace envpin::manifest {

// The patterns of one .gitignore file, written for a .dockerignore at the project's root.
// git and docker anchor differently: a git pattern without a '/' matches at any depth below its
// file's directory (-> "<dir>/**/p"), one with a '/' is relative to that directory
// (-> "<dir>/p"), a trailing '/' means directories only (-> ".../p/**", their contents). An
// ancestor's anchored pattern is kept only when it names a path inside the project. Comments,
// blank lines and patterns docker cannot express (leading spaces) are dropped. `shown` names
// the file in errors. Throws diag::Error (file:line:col) for a control character or non-UTF-8.
std::vector<std::string> dockerignore_patterns(const io::GitIgnoreFile& file, const std::string& shown);

}  // namespace envpin::manifest

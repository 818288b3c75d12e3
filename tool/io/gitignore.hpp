// SPDX-License-Identifier: Apache-2.0
// The project's .gitignore files, read through libgit2 (the repository's index says which
// .gitignore files the project has), so .dockerignore can exclude what git ignores.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace envpin::io {

// One .gitignore file that applies to the project.
struct GitIgnoreFile {
  std::string path;    // as messages show it, relative to the project ("sub/.gitignore", "../.gitignore")
  std::string prefix;  // the file's directory relative to the project, "" or "sub/dir/"; empty for an ancestor
  std::string inside;  // for an ancestor's file: the project's path relative to that file's directory ("examples/x")
  std::string text;
};

// The .gitignore files that apply to `project_dir`: in a git work tree, every tracked .gitignore
// inside the project and those of the directories between the work tree's root and the project
// (as git reads them, outermost first); outside one, the project's own .gitignore if it has one.
// Sorted, so the result does not depend on the order of the index. Throws diag::Error when the
// repository cannot be read.
std::vector<GitIgnoreFile> gitignore_files(const std::filesystem::path& project_dir);

}  // namespace envpin::io

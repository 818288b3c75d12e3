// SPDX-License-Identifier: Apache-2.0
// `envpin scan`: what breaks a move to another machine or leaks a secret. Hard-coded host paths
// in text files, secret files a docker build would send, secret-looking values in the
// manifest's env.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "manifest/model.hpp"

namespace envpin::scan {

struct Finding {
  std::string kind;  // "host-path", "secret-file", "secret-env"
  std::string file;  // as shown to the user
  int line = 0;
  int column = 0;
  std::string what;
  std::string fix;
};

struct Report {
  std::vector<Finding> findings;
  std::vector<std::string> skipped;  // "path: why" for huge or unreadable files
  std::size_t files = 0;             // text files read
};

// Scans `root` (respecting its .gitignore; binary files skipped) and the build context: the
// manifest's directory through the .dockerignore it generates, or without a manifest `root`
// through its own .dockerignore. With a manifest, also the manifest's env. `shown` is how
// `root` is printed.
Report scan_tree(const std::filesystem::path& root, const std::string& shown, const manifest::Manifest* m);

// Secret files under `context` that `dockerignore` (its text) does not exclude, '/' separated:
// by name, hard links to them, and configuration files by what they hold (secrets::is_secret_content).
std::vector<std::string> secret_files_in_context(const std::filesystem::path& context, const std::string& dockerignore);

}  // namespace envpin::scan

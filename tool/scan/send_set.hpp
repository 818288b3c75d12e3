// SPDX-License-Identifier: Apache-2.0
// What a project sends off the machine — the docker build context (`envpin context`) and the
// copy on a server (`envpin sync`) — from one rule set: the generated .dockerignore (which holds
// the manifest's excludes and, unless the manifest says otherwise, .gitignore's), the secret-file
// rules, and files no credential is written in.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "scan/ignore.hpp"

namespace envpin::scan {

// An entry of the project that is not sent, and why ("a secret file", ".dockerignore", ...).
struct LeftOut {
  std::string path;  // relative, '/'-separated
  bool directory = false;
  std::string why;
};

struct SendSet {
  std::vector<std::string> paths;  // sent: files, directories, symlinks; sorted
  std::vector<LeftOut> left_out;   // everything else, sorted
};

struct SendRules {
  const IgnoreRules* rules = nullptr;      // the .dockerignore
  std::vector<std::string> allow_secrets;  // secret files that may be sent (context.allow_secrets)
  std::filesystem::path skip;              // an output file inside the project, never content
  std::string carrier;                     // for the credential error: "the build context would carry"
  std::string hint;                        // its fix
};

// Walks `root` (excluded directories too: a later '!' pattern may bring a file back, as docker
// does). Secret files never go (by name, or by content: secrets::is_secret_by_content), nor hard
// links to them, nor sockets, FIFOs and devices. Throws
// diag::Error, located, when a text file that would go holds a well-known credential.
SendSet send_set(const std::filesystem::path& root, const SendRules& r, const std::string& shown_root);

// The fewest rsync exclude patterns that leave out exactly `s.left_out`: anchored paths, a
// directory whole when nothing under it is sent. Wildcard characters in a name become '?', which
// can only leave out more.
std::vector<std::string> rsync_excludes(const SendSet& s);

}  // namespace envpin::scan

// SPDX-License-Identifier: Apache-2.0
// The docker build context as a deterministic tar (libarchive): entries sorted, mtime/uid/gid
// zero, .dockerignore applied, secrets never included (scan::send_set), hashed on the way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "diag/terminal.hpp"

namespace envpin::workflow {

struct ContextRequest {
  std::string manifest = "envpin.yaml";
  std::string output = "envpin-context.tar";  // "-": standard output
  // Paths of the project left out besides .dockerignore's (envpin push's record and the files
  // that name its digest), each as a last pattern: no '!' brings one back.
  std::vector<std::string> leave_out;
  // Files added after the project's, mode 0644 (envpin push's Dockerfile).
  std::vector<std::pair<std::string, std::string>> extra;
};

struct ContextWritten {
  std::string sha256;  // hex, of the tar's bytes
  std::size_t files = 0;
  std::uintmax_t bytes = 0;
};

// Written into a temporary file beside the output and renamed into place only when complete;
// never over anything but a regular file. Throws diag::Error, nothing written, on the first
// problem (a secret it would send included).
ContextWritten write_context(const ContextRequest& request, diag::Progress& progress);

}  // namespace envpin::workflow

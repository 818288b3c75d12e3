// SPDX-License-Identifier: Apache-2.0
// envpin's own state, outside every project tree: ${XDG_STATE_HOME:-$HOME/.local/state}/envpin, a
// directory of this user's only (mode 0700). The project is mounted read-write in every container
// and job, so nothing envpin runs or believes on the host is kept in it: the scripts envpin runs
// there are held here, as envpin rendered them (docs/security.md).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace envpin::io {

// The root of envpin's state for this user, without touching the disk: XDG_STATE_HOME when it is
// an absolute path (the XDG rule), else $HOME/.local/state, then "envpin".
std::filesystem::path state_root();

// The project's directory as envpin names it to its scripts and labels: absolute, normal, with no
// trailing '/' ("/work/p/." and "/work/p/" are "/work/p", as `cd /work/p && pwd` prints it).
std::string project_path(const std::filesystem::path& project_dir);

// The state directory of the project at `project_dir` (project_path): state_root()/projects/<the
// first 32 hex digits of the SHA-256 of that path>. Not created.
std::filesystem::path project_state(const std::filesystem::path& project_dir);

// Creates `dir` and the directories above it that are missing (mode 0700), then checks that it
// is private: a directory (not a link), owned by this user, no access for group or others. A
// directory of this user's with wider access is narrowed to 0700. Throws diag::Error otherwise.
void private_state_directory(const std::filesystem::path& dir);

// `bytes` as the file `name` in the private directory `dir` (created as private_state_directory
// does), mode 0500: left as it is when it already holds exactly these bytes, else written to a
// temporary beside it and renamed into place, so a shell still reading the older file keeps its
// bytes. Returns the file's path. Throws diag::Error.
std::filesystem::path hold_file(const std::filesystem::path& dir, const std::string& name, std::string_view bytes);

}  // namespace envpin::io

// SPDX-License-Identifier: Apache-2.0
// The data a project's jobs need on the server (manifest::data_paths: `paths:` in the project and
// jobs.data): which of it `envpin sync` leaves out (the .dockerignore, which carries .gitignore's
// rules), the warning that names it with its size and the fix, the rules that send it with
// `sync --data` (secret files and credentials still never go), and the POSIX sh check that
// `run --host` makes there before a job starts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "manifest/model.hpp"
#include "scan/ignore.hpp"

namespace envpin::sync {

struct LeftData {
  std::string path;  // project-relative
  manifest::Location where;
  bool directory = false;
  std::uintmax_t bytes = 0;  // of its regular files, links not followed
};

// The data paths that exist under `root` and that `rules` leave out, sorted.
std::vector<LeftData> data_left_out(const std::filesystem::path& root,
                                    const std::vector<manifest::Located<std::string>>& data,
                                    const scan::IgnoreRules& rules);

// The one warning line for `d` (diag::format_warning's form, at the manifest line naming it);
// `target` is the sync's [user@]host:path.
std::string data_warning(const LeftData& d, const std::string& target);

// `rules` with the left-out data taken back ('!' patterns): the rules of `sync --data`.
scan::IgnoreRules with_data(scan::IgnoreRules rules, const std::vector<LeftData>& data);

// A POSIX sh command, run in the synced directory, that prints "missing PATH" or "empty PATH"
// for each of `paths` (a directory with no entries, an empty file) and nothing for the others.
std::string data_check_script(const std::vector<std::string>& paths);

// The paths the check's output names, in its order: (path, "missing" or "empty"); other lines
// (a login banner) are ignored, and only the paths asked about count.
std::vector<std::pair<std::string, std::string>> data_check_result(const std::string& out,
                                                                   const std::vector<std::string>& paths);

}  // namespace envpin::sync

// SPDX-License-Identifier: Apache-2.0
// What a job's checkpoint directory holds, read the same way by `envpin jobs` (the last
// complete checkpoint) and `envpin resume-check` (which checkpoints two runs wrote). A
// checkpoint is a regular file that is not a temporary (a leading '.', or a .tmp, .partial or
// '~' ending) and not a sidecar. When `NAME.sha256` exists beside it (envpin_ckpt.py writes
// one: "<hex>  NAME"), the checkpoint is complete only if its sha256 matches: a write cut off
// midway is skipped, not taken for the latest.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace envpin::jobs {

struct CheckpointFile {
  std::string name;  // relative to the directory, '/'-separated
  std::uintmax_t size = 0;
  std::filesystem::file_time_type mtime{};
  bool has_sidecar = false;
  std::string sidecar_sha256;  // what the sidecar says (has_sidecar)
};

// The checkpoint files under `dir` (recursively), sorted by name; empty when it does not exist.
std::vector<CheckpointFile> list_checkpoints(const std::filesystem::path& dir);

// Whether `file` (under `dir`) matches its sidecar; `digest` receives its sha256 when it was
// computed. A file without a sidecar is not verified (true).
bool sidecar_matches(const std::filesystem::path& dir, const CheckpointFile& file, std::string* digest = nullptr);

// The newest complete checkpoint by modification time (name breaks ties): one whose sidecar
// matches, or when no file has a sidecar, the newest file. `skipped` receives the newer ones
// whose sidecar did not match.
std::optional<CheckpointFile> last_complete(const std::filesystem::path& dir,
                                            std::vector<std::string>* skipped = nullptr);

}  // namespace envpin::jobs

// SPDX-License-Identifier: Apache-2.0
// What a job's checkpoint directory holds, read the same way by `envpin jobs` (the last
// complete checkpoint) and `envpin resume-check` (which checkpoints two runs wrote). A
// checkpoint is what a program resumes from: a regular file that is not a temporary (a leading
// '.', or a .tmp, .partial or '~' ending) and not a sidecar, and that matches
// jobs.checkpoints.pattern when the manifest has one; without one, any such file except those
// no program resumes from: images, videos, logs, text and table reports, TensorBoard event
// files (a sample image written beside the model is not a checkpoint). When `NAME.sha256`
// exists beside it (envpin_ckpt.py writes one: "<hex>  NAME"), the checkpoint is complete only
// if its sha256 matches: a write cut off midway is skipped, not taken for the latest; and once
// any file has a sidecar, only files with one count.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::jobs {

struct CheckpointFile {
  std::string name;  // relative to the directory, '/'-separated
  std::uintmax_t size = 0;
  std::filesystem::file_time_type mtime{};
  bool has_sidecar = false;
  std::string sidecar_sha256;  // what the sidecar says (has_sidecar)
};

// What no program resumes from, by name (lower case): images and videos (samples), sound, logs,
// text and table reports. run.sh renders the same list.
inline constexpr std::array<std::string_view, 24> kNotCheckpointSuffixes = {
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".svg", ".tif", ".tiff", ".mp4",  ".avi", ".webm",
    ".wav", ".mp3", ".log",  ".out", ".err", ".txt",  ".csv", ".tsv", ".md",   ".html", ".pdf", ".pid"};

// Globs (fnmatch(3), '*' not crossing '/') on names relative to the directory; empty: any name
// that is_checkpoint_name's default takes.
using Patterns = std::vector<std::string>;

// Whether `name` (relative to the checkpoint directory, '/'-separated) names a checkpoint.
bool is_checkpoint_name(const std::string& name, const Patterns& patterns = {});

// The checkpoint files under `dir` (recursively), sorted by name; empty when it does not exist.
// When any has a sidecar, only those with one.
std::vector<CheckpointFile> list_checkpoints(const std::filesystem::path& dir, const Patterns& patterns = {});

// Whether `file` (under `dir`) matches its sidecar; `digest` receives its sha256 when it was
// computed. A file without a sidecar is not verified (true).
bool sidecar_matches(const std::filesystem::path& dir, const CheckpointFile& file, std::string* digest = nullptr);

// The newest complete checkpoint by modification time (name breaks ties): one whose sidecar
// matches, or when no file has a sidecar, the newest file. `skipped` receives the newer ones
// whose sidecar did not match.
std::optional<CheckpointFile> last_complete(const std::filesystem::path& dir,
                                            std::vector<std::string>* skipped = nullptr, const Patterns& patterns = {});

}  // namespace envpin::jobs

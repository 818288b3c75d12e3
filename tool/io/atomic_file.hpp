// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace envpin::io {

// Replaces `path` with `bytes` atomically: a temporary file in the same directory is
// written, fsync'd and renamed over the target, so readers see the old or the new file,
// never a partial one. Creates missing parent directories, and removes those again when it
// fails. Throws diag::Error.
void write_atomic(const std::filesystem::path& path, const std::string& bytes, bool executable);

// Throws diag::Error (nothing written) when `path`, or a directory between `root` and it, is a
// symbolic link: what envpin writes in a project (.envpin/, an output's directory, the output
// itself) is its own, never reached through a link a job or a container planted. Directories
// above `root`, and a path outside it, are not judged; a part that does not exist yet passes.
void owned_path(const std::filesystem::path& root, const std::filesystem::path& path);

// One file of a set written together.
struct PendingFile {
  std::filesystem::path path;
  std::string bytes;
  bool executable = false;
};

// Replaces every file of `files` or none. Each is first written in full to a temporary
// beside it (.NAME.envpin-XXXXXX, fsync'd); only when all are complete does `journal` list
// them, then they are renamed into place and the journal removed. A crash before the journal
// leaves only temporaries (removed by the next call); a crash after it is finished by
// recover_commit(journal), which every writer calls first. The journal is ROOT/.envpin/NAME: ROOT
// is the project, and each file and the journal are owned_path's under it. Throws diag::Error (then nothing
// was replaced and the directories it created are gone again, unless the failure came during
// the renames, which the journal completes).
void write_all_atomic(const std::vector<PendingFile>& files, const std::filesystem::path& journal);

// Completes the renames a crashed write_all_atomic left in `journal`, then removes it;
// nothing when there is no journal. Throws diag::Error when a rename fails, or when the journal's
// directory is a link (owned_path).
void recover_commit(const std::filesystem::path& journal);

// True for the name of a temporary envpin writes (.NAME.envpin-XXXXXX): never content.
bool is_temporary(const std::filesystem::path& path);

// The mkstemp(3) template for a temporary beside `target` (.NAME.envpin-XXXXXX).
std::filesystem::path temporary_template(const std::filesystem::path& target);

// The file's bytes, or nullopt when it does not exist. Throws diag::Error when unreadable.
std::optional<std::string> read_file(const std::filesystem::path& path);

// What read_regular found.
enum class ReadStatus { ok, missing, not_regular, too_large, unreadable };

// The bytes of `path` into `out` when it is a regular file of at most `max` bytes. Opened without
// following a final symlink and without blocking, then checked on the open file: a FIFO or device
// put in its place after a caller's check is refused, never waited on or read from.
ReadStatus read_regular(const std::filesystem::path& path, std::size_t max, std::string& out);

// Creates the directory `dir` (its parent must exist), or accepts it when a directory is there.
// A symlink or any other file at `dir` is refused (diag::Error naming it): a directory envpin owns
// is created by envpin, never reached through a link that a job or another user planted.
void owned_directory(const std::filesystem::path& dir);

// Copies the regular file `from` to the new file `to`, following no link at either end: `from` is
// opened without following a final symlink and checked on the open file (a FIFO is never waited
// on); `to` is created exclusively (O_EXCL | O_NOFOLLOW), so nothing already there is written
// through. At most `max` bytes. False, with `to` absent, when any of that fails.
bool copy_regular(const std::filesystem::path& from, const std::filesystem::path& to, std::uintmax_t max);

// A new directory only this user can enter (mode 0700, mkdtemp(3)) under the temporary directory
// ($TMPDIR, else /tmp), named PREFIX-XXXXXX: work no job's mounted tree can reach. The caller
// removes it. Throws diag::Error.
std::filesystem::path private_directory(const std::string& prefix);

// True when the file exists and has any execute bit.
bool is_executable(const std::filesystem::path& path);

}  // namespace envpin::io

// SPDX-License-Identifier: Apache-2.0
// What several commands share beyond their arguments: the lock beside a manifest, the check that
// a project's generated files are current, and how a project path is shown.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "jobs/project.hpp"
#include "lock/lock.hpp"
#include "manifest/model.hpp"
#include "report/smoke.hpp"

namespace envpin::cli {

// envpin.lock next to the manifest (or `given`), when there is one. Throws when it is stale
// (the manifest changed after locking) or does not match its own lock-digest.
std::optional<lock::Lock> load_lock(const manifest::Manifest& m, const std::string& given);

// Throws unless requirements.lock beside `lock_path` is exactly what `l` gives (pip installs
// from it; lock-digest covers it through that derivation).
void check_requirements_lock(const lock::Lock& l, const std::filesystem::path& lock_path);

// The journal of a multi-file write in `dir` (generate's artifacts, the lock pair): see
// io::write_all_atomic.
std::filesystem::path commit_journal(const std::filesystem::path& dir);

// One envpin at a time writes a project: an exclusive flock(2) on the project directory itself
// (nothing is created in it), held until destroyed. Taken again by the same process, it is the
// same lock. Another envpin holding it is waited for up to ENVPIN_LOCK_WAIT seconds (default 30,
// 0 for no wait); then diag::Error names it: "another envpin (pid N) is writing ...". Used by
// generate, lock, init -o, the job commands' checks before a start, and by any reader that finds
// a journal to complete.
class ProjectLock {
 public:
  ProjectLock(const std::filesystem::path& dir, std::ostream* waiting_note = nullptr);
  ~ProjectLock();
  ProjectLock(const ProjectLock&) = delete;
  ProjectLock& operator=(const ProjectLock&) = delete;

 private:
  std::string key_;
};

// io::recover_commit of the journal in `dir`, under the ProjectLock when there is one to complete.
void recover_commit(const std::filesystem::path& dir);

// Jobs run the pinned image: a lock that is current, and generated files that match it.
void require_pinned(const jobs::Project& p);

// A project-relative artifact path as the user will type it.
std::filesystem::path shown_path(const std::filesystem::path& root, const std::string& rel);

// What `envpin smoke` and `envpin report --smoke` run for `m` (none: the kernel alone): the
// kernel with a cuda section, .envpin/smoke.py with torch (diag::Error when it is missing).
report::SmokeOptions smoke_options(const manifest::Manifest* m);

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
// What several commands share beyond their arguments: the lock beside a manifest, the check that
// a project's generated files are current, and how a project path is shown.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "diag/error.hpp"
#include "jobs/project.hpp"
#include "lock/lock.hpp"
#include "manifest/model.hpp"
#include "render/artifact.hpp"
#include "report/smoke.hpp"

namespace envpin::workflow {

// What a lock file is worth, by the one rule every command applies (generate, the jobs' pinned
// check, `verify`, `check`): it parses, its text is what envpin writes for it, its content has its
// lock-digest, requirements.lock beside it is its wheels, and the manifest has not changed since.
// The first that fails is the kind.
struct LockState {
  enum class Kind { absent, unreadable, edited, digest, requirements, stale, ok };
  Kind kind = Kind::absent;
  std::optional<lock::Lock> lock;         // every kind from `edited` on
  std::string problem;                    // what failed, in words ("" for ok and absent)
  int line = 0;                           // edited: the first line that differs
  std::optional<diag::Error> unreadable;  // unreadable: the reader's located error, to rethrow
};
// `shown` names the file in the reader's errors.
LockState lock_state(const manifest::Manifest& m, const std::filesystem::path& path, const std::string& shown);

// envpin.lock next to the manifest (or `given`), when there is one. Throws unless lock_state
// calls it ok.
std::optional<lock::Lock> load_lock(const manifest::Manifest& m, const std::string& given);

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

// Jobs run the pinned image: a lock that is current, and generated files that match it. Then the
// host-side scripts are held (hold_scripts) from the same plan: what envpin runs is what it checked.
void require_pinned(const jobs::Project& p);

// The host-side scripts of `planned` (run.sh; dev.sh with a dev section), as envpin rendered them,
// written to the project's private state (io::project_state): envpin runs these, never the tree's
// files, which every container and job can write. Returns the held dev.sh ("" without one).
// Throws diag::Error when the state directory is not private.
std::filesystem::path hold_scripts(const manifest::Manifest& m, const std::vector<render::Artifact>& planned);

// A project-relative artifact path as the user will type it.
std::filesystem::path shown_path(const std::filesystem::path& root, const std::string& rel);

// What `envpin smoke` and `envpin report --smoke` run for `m` (none: the kernel alone): the
// kernel with a cuda section, .envpin/smoke.py with torch (diag::Error when it is missing).
report::SmokeOptions smoke_options(const manifest::Manifest* m);

}  // namespace envpin::workflow

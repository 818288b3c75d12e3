// SPDX-License-Identifier: Apache-2.0
// A manifest to the files on disk, once: load -> resolve -> lock -> render (plan), then what
// changed, whose files they are, and the all-or-nothing write (generate).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "manifest/model.hpp"
#include "render/render.hpp"
#include "resolve/environment.hpp"

namespace envpin::workflow {

// What a manifest gives with the lock beside it (or `lock`): the resolved environment, pinned
// by that lock when there is one (workflow::load_lock's rule), and every artifact's bytes.
// Warnings (the resolver's, a lock an older envpin wrote) are in env.warnings.
struct Plan {
  resolve::Environment env;
  std::vector<render::Artifact> artifacts;
};
// With `mirror`, the Dockerfile builds from it alone (check_mirror's rules).
// With jobs.push and `judge_push` (generate), envpin push's record is read (env.pushed) and judged
// against the project as the pushed image would hold it (push_tree): a stale one says why. Without,
// the files that name the pushed image are rendered as refusals (the jobs' check passes over them).
Plan plan(const manifest::Manifest& m, const std::string& lock = "",
          const std::optional<resolve::Mirror>& mirror = std::nullopt, bool judge_push = false);

// Throws diag::Error unless `env` (its lock loaded) can build from `mirror`: a lock, one platform,
// no standalone Python (uv downloads CPython), a registry when the lock pins images.
void check_mirror(const resolve::Mirror& mirror, const resolve::Environment& env, const manifest::Manifest& m);

struct GenerateRequest {
  std::string manifest = "envpin.yaml";
  bool check = false;                     // write nothing (a killed generate's commit is still finished)
  bool dry_run = false;                   // write nothing
  std::string output_dir;                 // empty: the manifest's directory
  std::string lock;                       // empty: envpin.lock next to the manifest, if there is one
  bool force = false;                     // replace files envpin did not write (or that were edited)
  std::optional<resolve::Mirror> mirror;  // --mirror URL --mirror-registry HOST
};

struct GeneratedFile {
  std::filesystem::path shown;  // as the user types it
  bool changed = false;         // its bytes or mode differ from what is on disk
};

struct Generated {
  std::string manifest;  // the manifest as named in messages
  std::vector<GeneratedFile> files;
  std::vector<std::string> warnings;  // formatted diagnostics
  bool written = false;               // changed files were replaced (not check or dry_run)
  // Why the files that name the pushed image do not name it (envpin push's record is missing or
  // stale): they were written as refusals; "" when they name the pushed digest or there are none.
  std::string push_refused;
  bool push_stale = false;              // refused because the record no longer holds the project (not just missing)
  std::vector<std::string> push_files;  // the files that name the pushed image, as shown
};

// Under the project's lock: a killed generate is finished first, then the changed artifacts are
// replaced together (unless check or dry_run). Throws diag::Error, writing nothing, when a file
// to replace was not written by envpin (or was edited since) and not `force`.
// `waiting` gets the note that another envpin holds the project.
Generated generate(const GenerateRequest& request, std::ostream& waiting);

}  // namespace envpin::workflow

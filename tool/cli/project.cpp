// SPDX-License-Identifier: Apache-2.0
#include "cli/project.hpp"

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "lock/lock.hpp"
#include "render/render.hpp"
#include "report/smoke.hpp"
#include "resolve/environment.hpp"

namespace envpin::cli {

using diag::Error;
using diag::Location;
namespace fs = std::filesystem;

fs::path commit_journal(const fs::path& dir) { return dir / ".envpin" / ".commit.envpin-journal"; }

fs::path shown_path(const fs::path& root, const std::string& rel) {
  return (root == "." ? fs::path(rel) : root / rel).lexically_normal();
}

// envpin.lock next to the manifest, when there is one; it must belong to this manifest.
std::optional<lock::Lock> load_lock(const manifest::Manifest& m, const std::string& given) {
  const fs::path path = given.empty() ? m.project_dir / "envpin.lock" : fs::path(given);
  io::recover_commit(commit_journal(path.parent_path()));
  const auto text = io::read_file(path);
  const std::string shown = given.empty() ? shown_path(m.project_dir, "envpin.lock").generic_string() : given;
  if (!text && !given.empty())
    throw diag::Error("cannot read the lock " + given, diag::Location{given, 0, 0}, "run 'envpin lock' to create it");
  if (!text) return std::nullopt;
  lock::Lock l = lock::parse(*text, shown);
  if (l.inputs_digest != lock::inputs_digest(m))
    throw diag::Error(shown + " is stale: " + m.file + " changed after it was locked", diag::Location{shown, 0, 0},
                      "run 'envpin lock --manifest " + m.file + "' first");
  if (lock::compute_lock_digest(l) != l.lock_digest)
    throw diag::Error(shown + " does not match its lock-digest", diag::Location{shown, 0, 0},
                      "run 'envpin verify' to see what changed, or 'envpin lock' to rewrite it");
  check_requirements_lock(l, path);
  resolve::check_locked_python(m, l);
  return l;
}

void check_requirements_lock(const lock::Lock& l, const fs::path& lock_path) {
  // pip installs from requirements.lock: it must be exactly the lock's wheels.
  const fs::path req = lock_path.parent_path() / "requirements.lock";
  if (const std::string problem = lock::requirements_lock_problem(l, io::read_file(req)); !problem.empty())
    throw diag::Error(problem + " (pip installs from it)",
                      diag::Location{req.lexically_normal().generic_string(), 0, 0},
                      "run 'envpin lock' to write both again, or restore them from version control");
}

void require_pinned(const jobs::Project& p) {
  const manifest::Manifest& m = p.m;
  resolve::Environment env = resolve::resolve(m);
  env.lock = load_lock(m, "");
  if (!env.lock)
    throw Error("there is no envpin.lock beside " + m.file + ": jobs run the pinned image", Location{m.file, 0, 0},
                "run 'envpin lock', then 'envpin generate'");
  for (const render::Artifact& a : render::render_all(m, env)) {
    const auto current = io::read_file(m.project_dir / a.path);
    if (!current || *current != a.bytes)
      throw Error(shown_path(m.project_dir, a.path).generic_string() + " is " + (current ? "out of date" : "missing") +
                      " (it does not match " + m.file + " and envpin.lock)",
                  Location{m.file, 0, 0}, "run 'envpin generate --manifest " + m.file + "'");
  }
}

report::SmokeOptions smoke_options(const manifest::Manifest* m) {
  report::SmokeOptions o;
  o.run_kernel = !m || m->cuda.has_value();
  if (m && render::has_torch(*m)) {
    const fs::path script = m->project_dir / m->outputs.smoke_py.value;
    if (!fs::is_regular_file(script))
      throw diag::Error(shown_path(m->project_dir, m->outputs.smoke_py.value).generic_string() +
                            " is missing: the framework smoke is generated with the other artifacts",
                        diag::Location{m->file, 0, 0}, "run 'envpin generate --manifest " + m->file + "'");
    o.framework = script.string();
  }
  return o;
}

}  // namespace envpin::cli

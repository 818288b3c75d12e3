// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/project.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/ownership.hpp"
#include "lock/lock.hpp"
#include "manifest/load.hpp"
#include "render/render.hpp"
#include "resolve/environment.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

struct GenerateOptions {
  std::string manifest = "envpin.yaml";
  bool check = false;
  bool dry_run = false;
  std::string output_dir;  // empty: the manifest's directory
  std::string lock;        // empty: envpin.lock next to the manifest, if there is one
  bool force = false;      // replace files envpin did not write (or that were edited)
};

int generate(const GenerateOptions& o, Streams& io) {
  const manifest::Manifest m = manifest::load(o.manifest);
  // Read and written by one envpin at a time: the lock beside the manifest and every artifact.
  const ProjectLock project_lock(m.project_dir, &io.err);
  const ProjectLock output_lock(o.output_dir.empty() ? m.project_dir : fs::path(o.output_dir), &io.err);
  resolve::Environment env = resolve::resolve(m);
  env.lock = load_lock(m, o.lock);
  if (env.lock && !env.uv_image.empty() && (!env.lock->uv_image || env.lock->uv_image->requested != env.uv_image))
    env.warnings.push_back(diag::format_warning(
        "envpin.lock does not pin the uv image " + env.uv_image +
            " (another envpin wrote it): the Dockerfile names it by tag; run 'envpin lock' to pin it by digest",
        std::nullopt));
  if (env.lock && env.cuda && (!env.lock->devel_image || env.lock->devel_image->requested != env.cuda->devel_image))
    env.warnings.push_back(diag::format_warning(
        "envpin.lock does not pin the devel image " + env.cuda->devel_image +
            " (an older envpin wrote it): the Dockerfile's smoke stage names it by tag; run 'envpin lock' to pin it "
            "by digest",
        std::nullopt));
  const std::vector<render::Artifact> artifacts = render::render_all(m, env);
  for (const auto& w : env.warnings) io.err << diag::paint_diagnostic(io.err_term, w);
  const fs::path root = o.output_dir.empty() ? m.project_dir : fs::path(o.output_dir);
  const fs::path journal = commit_journal(root);
  // A generate that was killed after its commit point is finished first (in every mode: the
  // set on disk is then entirely the new one, as that run decided).
  io::recover_commit(journal);

  std::vector<const render::Artifact*> changed;
  for (const auto& a : artifacts) {
    const fs::path path = root / a.path;
    const auto current = io::read_file(path);
    if (!current || *current != a.bytes || io::is_executable(path) != a.executable) changed.push_back(&a);
  }

  if (o.check) {
    for (const auto* a : changed) io.out << "stale " << shown_path(root, a->path).generic_string() << "\n";
    if (changed.empty()) return kOk;
    io.err << diag::paint_diagnostic(
        io.err_term, diag::format(diag::Error(
                         std::to_string(changed.size()) + " generated file(s) differ from what " + m.file + " gives",
                         std::nullopt, "run 'envpin generate --manifest " + m.file + "' and commit the result")));
    return kStale;
  }
  // envpin replaces only its own files (see io::foreign_files).
  std::vector<std::string> changed_paths;
  for (const auto* a : changed)
    if (a->path != m.outputs.record.value) changed_paths.push_back(a->path);
  const std::vector<std::string> foreign =
      io::foreign_files(root, changed_paths, root / m.outputs.record.value, o.force);
  if (!foreign.empty()) {
    const std::string first = shown_path(root, foreign.front()).generic_string();
    throw diag::Error(
        diag::quote(first) + " was not written by envpin, or was edited since" +
            (foreign.size() > 1 ? " (and " + std::to_string(foreign.size() - 1) + " more)" : std::string()) +
            "; nothing was written",
        diag::Location{first, 0, 0},
        // A project's own Dockerfile (the usual case after `envpin init` read it): the key that
        // moves envpin's.
        first == m.outputs.dockerfile.value
            ? "rename your " + first + ", or set outputs.dockerfile in " + m.file +
                  " to write envpin's elsewhere (e.g. 'outputs: {dockerfile: Dockerfile.envpin}'), or pass --force "
                  "to replace it"
            : "move your file away (or set outputs in " + m.file + "), or pass --force to replace it");
  }

  std::vector<io::PendingFile> writes;
  for (const auto& a : artifacts) {
    const bool differs = std::find(changed.begin(), changed.end(), &a) != changed.end();
    if (differs) writes.push_back({root / a.path, a.bytes, a.executable});
  }
  // All or nothing: every changed artifact is replaced, or none is.
  if (!o.dry_run && !writes.empty()) io::write_all_atomic(writes, journal);
  for (const auto& a : artifacts) {
    const bool differs = std::find(changed.begin(), changed.end(), &a) != changed.end();
    io.out << (differs ? (o.dry_run ? "would write " : "wrote ") : "unchanged ")
           << shown_path(root, a.path).generic_string() << "\n";
  }
  return kOk;
}

int validate(const std::string& file, Streams& io) {
  const manifest::Manifest m = manifest::load(file);
  const resolve::Environment env = resolve::resolve(m);
  for (const auto& w : env.warnings) io.err << diag::paint_diagnostic(io.err_term, w);
  io.out << m.file << ": ok (base image " << env.base_image << ")\n";
  return kOk;
}

}  // namespace

Command generate_command() {
  return {"generate", "write Dockerfile, devcontainer.json, check_env.sh and .dockerignore from the manifest",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<GenerateOptions>();
            app.add_option("-f,--manifest", o->manifest, "the manifest to read")->capture_default_str();
            app.add_flag("--check", o->check,
                         "write nothing; exit 3 and list the files that differ from what the manifest gives");
            app.add_flag("-n,--dry-run", o->dry_run, "write nothing; list what would be written");
            app.add_flag("--force", o->force,
                         "replace generated files even when envpin did not write them or they were edited");
            app.add_option("--lock", o->lock,
                           "the lock to pin from (default: envpin.lock next to the manifest, if any)");
            app.add_option("-o,--output-dir", o->output_dir,
                           "write (or --check) the artifacts under this directory instead of the manifest's");
            return [o](Streams& io) { return generate(*o, io); };
          }};
}

Command validate_command() {
  return {"validate", "check the manifest and report the first error, writing nothing",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto file = std::make_shared<std::string>("envpin.yaml");
            app.add_option("-f,--manifest", *file, "the manifest to read")->capture_default_str();
            return [file](Streams& io) { return validate(*file, io); };
          }};
}

}  // namespace envpin::cli

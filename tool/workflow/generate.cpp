// SPDX-License-Identifier: Apache-2.0
#include "workflow/generate.hpp"

#include <algorithm>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/ownership.hpp"
#include "manifest/load.hpp"
#include "manifest/requirement.hpp"
#include "net/registry.hpp"
#include "workflow/project.hpp"
#include "workflow/push.hpp"

namespace envpin::workflow {

namespace fs = std::filesystem;

void check_mirror(const resolve::Mirror& mirror, const resolve::Environment& env, const manifest::Manifest& m) {
  const std::string hint =
      "run 'envpin lock' and 'envpin mirror DIR' where the network is, then generate with --mirror";
  if (!manifest::is_index_url(mirror.files) || mirror.files.find_first_of("'\"\\ $`") != std::string::npos)
    throw diag::Error("--mirror must be the http:// or https:// URL that serves the mirror directory, found " +
                          diag::quote(mirror.files),
                      std::nullopt, "for example --mirror http://127.0.0.1:8000");
  if (!mirror.registry.empty() && (mirror.registry.find('/') != std::string::npos ||
                                   net::parse_image_reference(mirror.registry + "/envpin").registry != mirror.registry))
    throw diag::Error("--mirror-registry must be a registry host[:port], found " + diag::quote(mirror.registry),
                      std::nullopt, "for example --mirror-registry 127.0.0.1:5000");
  if (!env.lock)
    throw diag::Error("generate --mirror needs envpin.lock: the mirror holds what the lock names",
                      diag::Location{m.file, 0, 0}, hint);
  if (env.platforms.size() != 1)
    throw diag::Error(
        "generate --mirror builds one platform; the manifest asks for " + std::to_string(env.platforms.size()),
        diag::Location{m.file, 0, 0}, "lock and mirror one platform for the offline cluster");
  if (env.python_source == resolve::PythonSource::standalone)
    throw diag::Error(
        "a standalone Python is downloaded by 'uv python install' while the image builds: no mirror "
        "holds it",
        diag::Location{m.file, 0, 0},
        "use python.source: system (the image's python3) or a python image for offline builds");
  for (const auto* image : {&env.lock->image, &env.lock->devel_image})
    if (*image && (*image)->platforms.size() != 1)
      throw diag::Error("envpin.lock's " + (*image)->requested + " has " + std::to_string((*image)->platforms.size()) +
                            " platform manifests; a mirror holds one",
                        std::nullopt, "run 'envpin lock' for one platform, then 'envpin mirror' again");
  if ((env.lock->image || env.lock->devel_image) && mirror.registry.empty())
    throw diag::Error(
        "generate --mirror needs --mirror-registry: the lock pins images, which the build pulls by digest",
        std::nullopt, "push the mirror's images/ there (skopeo copy, as 'envpin mirror' prints) and name it");
}

Plan plan(const manifest::Manifest& m, const std::string& lock, const std::optional<resolve::Mirror>& mirror,
          bool judge_push) {
  Plan p;
  p.env = resolve::resolve(m);
  resolve::Environment& env = p.env;
  env.lock = load_lock(m, lock);
  if (mirror) {
    check_mirror(*mirror, env, m);
    env.mirror = mirror;
  }
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
  // Only generate reads the record: the jobs' pinned check passes over the files that name it.
  // Every job and container can write the tree, so its record counts only when envpin push's
  // private copy, kept outside it, agrees; otherwise it is stale, whatever else it says.
  std::optional<PushRecord> record;
  std::string unvouched;
  if (judge_push && m.jobs && m.jobs->push) record = read_push_record(m);
  if (record) unvouched = push_record_unvouched(m, *record);
  // Pushed from another machine (a clone, a cluster's login node): no copy here, so the registry's
  // word instead, as envpin push confirms its own push. A copy here that disagrees is not overruled.
  if (record && !unvouched.empty() && !has_private_record(m)) {
    if (const std::string why = registry_unvouched(*record); why.empty())
      unvouched.clear();
    else
      unvouched += ", and " + why;
  }
  if (record)
    env.pushed = resolve::PushedImage{record->reference, push_repository(record->reference), record->digest, ""};
  p.artifacts = render::render_all(m, env);
  if (judge_push && env.pushed) {
    const std::string wanted = m.jobs->push->value;
    if (!unvouched.empty())
      env.pushed->stale = unvouched;
    else if (env.pushed->repository != push_repository(wanted) ||
             (push_repository(wanted) != wanted && env.pushed->reference != wanted))
      env.pushed->stale = "it was pushed as " + env.pushed->reference + ", and jobs.push is now " + wanted;
    else if (record->tree != push_tree(m, p.artifacts))
      env.pushed->stale = "the project or the lock changed since it was pushed as " + env.pushed->reference;
    if (!env.pushed->stale.empty()) p.artifacts = render::render_all(m, env);
  }
  return p;
}

Generated generate(const GenerateRequest& o, std::ostream& waiting) {
  const manifest::Manifest m = manifest::load(o.manifest);
  const fs::path root = o.output_dir.empty() ? m.project_dir : fs::path(o.output_dir);
  // Read and written by one envpin at a time: the lock beside the manifest and every artifact.
  const ProjectLock project_lock(m.project_dir, &waiting);
  const ProjectLock output_lock(root, &waiting);
  const Plan p = plan(m, o.lock, o.mirror, true);
  Generated out;
  out.manifest = m.file;
  out.warnings = p.env.warnings;
  if (m.jobs && m.jobs->push)
    out.push_refused =
        !p.env.pushed ? "envpin push has not recorded an image for this project yet" : p.env.pushed->stale;
  out.push_stale = p.env.pushed && !p.env.pushed->stale.empty();
  for (const auto& a : p.artifacts)
    if (a.names_push) out.push_files.push_back(shown_path(root, a.path).generic_string());
  const fs::path journal = commit_journal(root);
  // A generate that was killed after its commit point is finished first (in every mode: the
  // set on disk is then entirely the new one, as that run decided).
  io::recover_commit(journal);

  std::vector<const render::Artifact*> changed;
  for (const auto& a : p.artifacts) {
    const fs::path path = root / a.path;
    const auto current = io::read_file(path);
    const bool differs = !current || *current != a.bytes || io::is_executable(path) != a.executable;
    if (differs) changed.push_back(&a);
    out.files.push_back({shown_path(root, a.path), differs});
  }
  if (o.check) {
    // The files that name the pushed image are judged by their record, not here: a change to the
    // project makes them refuse until the next push, which CI's check must not call an edit.
    // Without them, generate's own record differs only through them.
    std::size_t others = 0;
    for (std::size_t i = 0; i < p.artifacts.size(); ++i) {
      const render::Artifact& a = p.artifacts[i];
      if (a.names_push) out.files[i].changed = false;
      if (out.files[i].changed && a.path != m.outputs.record.value) ++others;
    }
    if (others == 0)
      for (std::size_t i = 0; i < p.artifacts.size(); ++i)
        if (p.artifacts[i].path == m.outputs.record.value) out.files[i].changed = false;
    return out;
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
  for (const auto* a : changed) writes.push_back({root / a->path, a->bytes, a->executable});
  // All or nothing: every changed artifact is replaced, or none is.
  if (!o.dry_run && !writes.empty()) {
    io::write_all_atomic(writes, journal);
    out.written = true;
  }
  return out;
}

}  // namespace envpin::workflow

// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/project.hpp"
#include "io/atomic_file.hpp"
#include "lock/lock.hpp"
#include "manifest/load.hpp"
#include "render/render.hpp"
#include "resolve/environment.hpp"
#include "scan/ignore.hpp"
#include "scan/scan.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

struct GenerateOptions {
  std::string manifest = "envpin.yaml";
  bool check = false;
  bool dry_run = false;
  std::string output_dir;  // empty: the manifest's directory
  std::string lock;        // empty: envpin.lock next to the manifest, if there is one
};


int generate(const GenerateOptions& o, Streams& io) {
  const manifest::Manifest m = manifest::load(o.manifest);
  resolve::Environment env = resolve::resolve(m);
  env.lock = load_lock(m, o.lock);
  const std::vector<render::Artifact> artifacts = render::render_all(m, env);
  for (const auto& w : env.warnings) io.err << w;
  // The Dockerfile's context must not carry a secret file past the generated .dockerignore. It
  // excludes every secret pattern at any depth, so only a '!' re-include can let one in: walk
  // the project (which can be large) only then.
  const bool reincludes = std::any_of(m.context_exclude.begin(), m.context_exclude.end(),
                                      [](const auto& p) { return p.value.starts_with("!"); }) ||
                          scan::is_secret_path(m.outputs.check_env.value);
  for (const auto& a : artifacts) {
    if (!reincludes || a.path != m.outputs.dockerignore.value) continue;
    for (const std::string& secret : scan::secret_files_in_context(m.project_dir, a.bytes)) {
      const bool allowed = std::any_of(m.context_allow_secrets.begin(), m.context_allow_secrets.end(),
                                       [&](const auto& s) { return s.value == secret; });
      if (!allowed)
        throw diag::Error("the build context would include the secret file '" + secret +
                              "' (a '!' pattern in context.exclude lets it in)",
                          m.context_exclude.empty() ? std::nullopt : std::optional(m.context_exclude.front().where),
                          "remove that '!' pattern, or list the file under context.allow_secrets");
    }
  }
  const fs::path root = o.output_dir.empty() ? m.project_dir : fs::path(o.output_dir);

  std::vector<const render::Artifact*> changed;
  for (const auto& a : artifacts) {
    const fs::path path = root / a.path;
    const auto current = io::read_file(path);
    if (!current || *current != a.bytes || io::is_executable(path) != a.executable)
      changed.push_back(&a);
  }

  if (o.check) {
    for (const auto* a : changed) io.out << "stale " << shown_path(root, a->path).generic_string() << "\n";
    if (changed.empty()) return kOk;
    io.err << diag::format(diag::Error(
        std::to_string(changed.size()) + " generated file(s) differ from what " + m.file + " gives",
        std::nullopt, "run 'envpin generate --manifest " + m.file + "' and commit the result"));
    return kStale;
  }
  for (const auto& a : artifacts) {
    const bool differs = std::find(changed.begin(), changed.end(), &a) != changed.end();
    if (differs && !o.dry_run) io::write_atomic(root / a.path, a.bytes, a.executable);
    io.out << (differs ? (o.dry_run ? "would write " : "wrote ") : "unchanged ")
           << shown_path(root, a.path).generic_string() << "\n";
  }
  return kOk;
}

int validate(const std::string& file, Streams& io) {
  const manifest::Manifest m = manifest::load(file);
  const resolve::Environment env = resolve::resolve(m);
  for (const auto& w : env.warnings) io.err << w;
  io.out << m.file << ": ok (base image " << env.base_image << ")\n";
  return kOk;
}

}  // namespace

fs::path shown_path(const fs::path& root, const std::string& rel) {
  return (root == "." ? fs::path(rel) : root / rel).lexically_normal();
}

// envpin.lock next to the manifest, when there is one; it must belong to this manifest.
std::optional<lock::Lock> load_lock(const manifest::Manifest& m, const std::string& given) {
  const fs::path path = given.empty() ? m.project_dir / "envpin.lock" : fs::path(given);
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
  return l;
}

Command generate_command() {
  return {"generate", "write Dockerfile, devcontainer.json, check_env.sh and .dockerignore from the manifest",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<GenerateOptions>();
            app.add_option("-f,--manifest", o->manifest, "the manifest to read")
                ->capture_default_str();
            app.add_flag("--check", o->check,
                         "write nothing; exit 3 and list the files that differ from what the manifest gives");
            app.add_flag("-n,--dry-run", o->dry_run, "write nothing; list what would be written");
            app.add_option("--lock", o->lock, "the lock to pin from (default: envpin.lock next to the manifest, if any)");
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

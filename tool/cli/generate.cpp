// SPDX-License-Identifier: Apache-2.0
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/text.hpp"
#include "manifest/load.hpp"
#include "resolve/environment.hpp"
#include "workflow/generate.hpp"

namespace envpin::cli {
namespace {

int generate(const workflow::GenerateRequest& o, Streams& io) {
  const workflow::Generated g = workflow::generate(o, io.err);
  for (const auto& w : g.warnings) io.err << diag::paint_diagnostic(io.err_term, w);
  if (o.check) {
    std::size_t stale = 0;
    for (const auto& f : g.files)
      if (f.changed) {
        io.out << "stale " << f.shown.generic_string() << "\n";
        ++stale;
      }
    if (stale == 0) return kOk;
    io.err << diag::paint_diagnostic(
        io.err_term, diag::format(diag::Error(
                         std::to_string(stale) + " generated file(s) differ from what " + g.manifest + " gives",
                         std::nullopt, "run 'envpin generate --manifest " + g.manifest + "' and commit the result")));
    return kStale;
  }
  for (const auto& f : g.files)
    io.out << (f.changed ? (o.dry_run ? "would write " : "wrote ") : "unchanged ") << f.shown.generic_string() << "\n";
  if (g.push_refused.empty() || g.push_files.empty()) return kOk;
  // The files that name the pushed image refuse to run rather than name a digest that is not
  // this project's; a stale push fails generate, a first one (nothing pushed yet) is a note.
  std::string files;
  for (const auto& f : g.push_files) files += (files.empty() ? "" : ", ") + f;
  const diag::Error refusal(g.push_refused + ": " + files + " refuse to run until it is pushed",
                            diag::Location{".envpin/push.json", 0, 0},
                            "run 'envpin push --manifest " + g.manifest + "', then 'envpin generate' again");
  if (!g.push_stale) {
    io.err << diag::paint_diagnostic(io.err_term, diag::format_warning(refusal.what(), std::nullopt));
    return kOk;
  }
  io.err << diag::paint_diagnostic(io.err_term, diag::format(refusal));
  return kError;
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
            auto o = std::make_shared<workflow::GenerateRequest>();
            manifest_option(app, o->manifest);
            app.add_flag("--check", o->check,
                         "write nothing; exit 3 and list the files that differ from what the manifest gives");
            app.add_flag("-n,--dry-run", o->dry_run, "write nothing; list what would be written");
            app.add_flag("--force", o->force,
                         "replace generated files even when envpin did not write them or they were edited");
            app.add_option("--lock", o->lock,
                           "the lock to pin from (default: envpin.lock next to the manifest, if any)");
            app.add_option("-o,--output-dir", o->output_dir,
                           "write (or --check) the artifacts under this directory instead of the manifest's");
            auto files = std::make_shared<std::string>();
            auto registry = std::make_shared<std::string>();
            app.add_option("--mirror", *files,
                           "build offline from an 'envpin mirror' directory served at this URL (apt, pip, and with "
                           "--mirror-registry the images): no other server");
            app.add_option("--mirror-registry", *registry,
                           "the registry host[:port] holding the mirror's images (FROM by digest)")
                ->needs(app.get_option("--mirror"));
            return [o, files, registry](Streams& io) {
              if (!files->empty()) o->mirror = resolve::Mirror{*files, *registry};
              return generate(*o, io);
            };
          }};
}

Command validate_command() {
  return {"validate", "check the manifest and report the first error, writing nothing",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto file = std::make_shared<std::string>("envpin.yaml");
            manifest_option(app, *file);
            return [file](Streams& io) { return validate(*file, io); };
          }};
}

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
// `envpin size`: the bytes a node pulls, from the sizes envpin.lock records, and the CUDA
// libraries the image would carry twice. Reads the lock only: no network.
#include <filesystem>
#include <memory>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "lock/size.hpp"
#include "manifest/load.hpp"
#include "workflow/project.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

struct SizeOptions {
  std::string manifest = "envpin.yaml";
  std::string lock;
  bool json = false;
};

int size(const SizeOptions& o, Streams& io) {
  const manifest::Manifest m = manifest::load(o.manifest);
  const fs::path path = o.lock.empty() ? m.project_dir / "envpin.lock" : fs::path(o.lock);
  workflow::recover_commit(path.parent_path());
  const std::string shown = path.lexically_normal().generic_string();
  const workflow::LockState state = workflow::lock_state(m, path, shown);
  using Kind = workflow::LockState::Kind;
  switch (state.kind) {
    case Kind::absent:
      throw diag::Error("cannot read " + shown, diag::Location{shown, 0, 0},
                        "run 'envpin lock': the sizes come from the lock");
    case Kind::unreadable:
      throw *state.unreadable;
    case Kind::edited:
    case Kind::digest:
      throw diag::Error(state.problem, diag::Location{shown, state.line, state.line ? 1 : 0},
                        "restore it from version control, or run 'envpin lock' to rewrite it");
    case Kind::requirements:  // the sizes are the lock's alone
      io.err << diag::paint_diagnostic(io.err_term, diag::format_warning(state.problem, std::nullopt));
      break;
    case Kind::stale:
      io.err << diag::paint_diagnostic(
          io.err_term, diag::format_warning(shown + " is stale (" + state.problem +
                                                "): these are its sizes; 'envpin lock' gives the manifest's",
                                            std::nullopt));
      break;
    case Kind::ok:
      break;
  }
  const lock::SizeReport report = lock::size_report(*state.lock);
  io.out << (o.json ? lock::size_json(report) : shown + ": " + lock::size_text(report));
  return kOk;
}

}  // namespace

Command size_command() {
  return {"size", "print the bytes a node pulls (image layers, .debs, wheels) and any CUDA library carried twice",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<SizeOptions>();
            manifest_option(app, o->manifest);
            app.add_option("--lock", o->lock, "the lock to read (default: envpin.lock next to the manifest)");
            app.add_flag("--json", o->json, "print the report as JSON");
            return [o](Streams& io) { return size(*o, io); };
          }};
}

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
// `envpin lock` resolves every pin; `envpin verify` proves a lock is intact and current.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "io/atomic_file.hpp"
#include "lock/lock.hpp"
#include "manifest/load.hpp"
#include "net/http.hpp"
#include "resolve/environment.hpp"
#include "resolve/pins.hpp"
#include "workflow/project.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

struct LockOptions {
  std::string manifest = "envpin.yaml";
  std::string lock;  // default: envpin.lock next to the manifest
  std::vector<std::string> insecure;
  bool json = false;
  bool verbose = false;
  bool quiet = false;
};

fs::path lock_path(const manifest::Manifest& m, const std::string& given) {
  return given.empty() ? m.project_dir / "envpin.lock" : fs::path(given);
}

int lock(const LockOptions& o, Streams& io) {
  const manifest::Manifest m = manifest::load(o.manifest);
  // One writer of the lock pair at a time (held through resolution: what is written is what
  // this run read).
  const workflow::ProjectLock project_lock(lock_path(m, o.lock).parent_path(), &io.err);
  const resolve::Environment env = resolve::resolve(m);
  for (const auto& w : env.warnings) io.err << diag::paint_diagnostic(io.err_term, w);
  resolve::ResolveOptions ro;
  ro.insecure_registries = o.insecure;
  // One redrawn line on a terminal, plain lines in a log, nothing with --quiet (thread-safe: the
  // python phase runs on its own thread).
  diag::Progress progress(io.err, io.err_term, o.quiet);
  ro.progress = [&](const std::string& line) { progress.step(line); };
  std::vector<std::pair<std::string, double>> phases;
  if (o.verbose) ro.phases = &phases;
  {
    // The lock this replaces, when its digest holds (stale is fine: its entries are sealed).
    const fs::path path = lock_path(m, o.lock);
    const workflow::LockState old = workflow::lock_state(m, path, path.generic_string());
    using Kind = workflow::LockState::Kind;
    if (old.lock && (old.kind == Kind::ok || old.kind == Kind::stale || old.kind == Kind::requirements))
      ro.previous = old.lock;
  }
  const lock::Lock l = resolve::resolve_lock(m, env, ro);
  progress.done();
  if (o.verbose) {
    std::string line;
    for (const auto& [phase, seconds] : phases) {
      char text[64];
      std::snprintf(text, sizeof text, "%.2f s", seconds);
      line += (line.empty() ? "" : ", ") + phase + " " + text;
    }
    io.err << "envpin: lock phases: " << line << "\n";
  }
  resolve::check_locked_python(m, l);
  if (const std::string w = resolve::system_cuda_in_closure(l); !w.empty())
    io.err << diag::paint_diagnostic(io.err_term, w);
  // Written only now, complete: a failed resolution above leaves the old lock in place.
  const fs::path path = lock_path(m, o.lock);
  // The pair is one unit: both files are replaced, or neither (a kill between two renames
  // is finished by the next envpin command through the journal).
  std::vector<io::PendingFile> files = {{path, lock::to_toml(l), false}};
  if (!l.python.empty()) files.push_back({path.parent_path() / "requirements.lock", lock::requirements_lock(l), false});
  io::write_all_atomic(files, workflow::commit_journal(path.parent_path()));
  if (o.json) {
    io.out << lock::to_json(l) << "\n";
    return kOk;
  }
  io.out << "wrote " << path.lexically_normal().generic_string() << ": image " << (l.image ? l.image->digest : "-")
         << ", " << l.apt.size() << " apt, " << l.python.size() << " python, " << l.files.size() << " file(s); "
         << l.lock_digest << "\n";
  return kOk;
}

int verify(const LockOptions& o, Streams& io) {
  const manifest::Manifest m = manifest::load(o.manifest);
  const fs::path path = lock_path(m, o.lock);
  workflow::recover_commit(path.parent_path());
  const std::string shown = path.lexically_normal().generic_string();
  workflow::LockState state = workflow::lock_state(m, path, shown);
  using Kind = workflow::LockState::Kind;
  switch (state.kind) {
    case Kind::absent:
      throw diag::Error("cannot read " + shown, diag::Location{shown, 0, 0}, "run 'envpin lock' to create it");
    case Kind::unreadable:
      throw *state.unreadable;
    case Kind::edited:
    case Kind::digest:
      throw diag::Error(state.problem, diag::Location{shown, state.line, state.line ? 1 : 0},
                        "restore it from version control, or run 'envpin lock' to rewrite it");
    case Kind::requirements:
      throw diag::Error(
          state.problem,
          diag::Location{(path.parent_path() / "requirements.lock").lexically_normal().generic_string(), 0, 0},
          "run 'envpin lock' to write both again, or restore them from version control");
    case Kind::stale:
      io.err << diag::paint_diagnostic(io.err_term,
                                       diag::format(diag::Error(shown + " is stale: " + state.problem, std::nullopt,
                                                                "run 'envpin lock --manifest " + m.file + "'")));
      return 2;
    case Kind::ok:
      break;
  }
  const lock::Lock& l = *state.lock;
  io.out << shown << ": ok (" << (l.image ? 1 : 0) + l.apt.size() + l.python.size() + l.files.size() << " pins, "
         << l.lock_digest << ")\n";
  return kOk;
}

}  // namespace

Command lock_command() {
  return {"lock", "resolve every pin (image digest, apt closure, wheels, files) into envpin.lock",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<LockOptions>();
            manifest_option(app, o->manifest);
            app.add_option("--lock", o->lock, "the lock to write (default: envpin.lock next to the manifest)");
            insecure_registry_option(app, o->insecure);
            app.add_flag("--json", o->json, "also print the lock as JSON on stdout");
            quiet_flag(app, o->quiet);
            app.add_flag("--verbose", o->verbose,
                         "print the wall time of each phase (registry, apt, python) on stderr");
            app.add_option_function<long>("--timeout", net::set_network_timeout_s,
                                          "seconds a server may stay silent before the request fails (default "
                                          "$ENVPIN_NET_TIMEOUT, else 30)")
                ->check(CLI::Range(1L, 3600L));
            return [o](Streams& io) { return lock(*o, io); };
          }};
}

Command verify_command() {
  return {"verify", "check envpin.lock is intact (exit 1 when edited) and current (exit 2 when stale)",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<LockOptions>();
            manifest_option(app, o->manifest);
            app.add_option("--lock", o->lock, "the lock to check (default: envpin.lock next to the manifest)");
            return [o](Streams& io) { return verify(*o, io); };
          }};
}

}  // namespace envpin::cli

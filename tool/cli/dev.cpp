// SPDX-License-Identifier: Apache-2.0
// `envpin dev`: the development container of the project (.envpin/dev.sh): started from the pinned
// job image, or found running; its servers' URLs printed; a shell, or one command, in it.
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/error.hpp"
#include "io/process.hpp"
#include "jobs/project.hpp"
#include "manifest/load.hpp"
#include "workflow/project.hpp"

namespace envpin::cli {
namespace {

using diag::Error;
using diag::Location;

struct DevOptions {
  std::string manifest = "envpin.yaml";
  bool status = false;
  bool stop = false;
  bool url = false;
  bool no_shell = false;
  std::vector<std::string> command;
};

int dev_script(const jobs::Project& p, std::vector<std::string> args) {
  const std::string engine = jobs::container_engine();
  const std::string script = (p.m.project_dir / p.m.outputs.dev.value).string();
  args.insert(args.begin(), {"sh", script});
  const int rc = io::run_attached(args, {"ENVPIN_ENGINE=" + engine});
  if (rc < 0) throw Error("cannot run " + script, std::nullopt, "is 'sh' on PATH?");
  return rc;
}

int dev(const DevOptions& o, Streams& io) {
  jobs::Project p{manifest::load(o.manifest), {}, {}, {}};
  if (!p.m.dev)
    throw Error(p.m.file + " has no dev section", Location{p.m.file, 0, 0},
                "add one, e.g. 'dev: {servers: [{name: notebook, kind: jupyter}]}', then run 'envpin generate'");
  if (o.status + o.stop + o.url + !o.command.empty() > 1)
    throw Error("--status, --stop, --url and a command exclude each other", std::nullopt, "give one of them");
  if (o.stop) return dev_script(p, {"stop"});
  if (o.status) return dev_script(p, {"status"});
  if (o.url) return dev_script(p, {"url"});
  {
    const workflow::ProjectLock project_lock(p.m.project_dir, &io.err);  // no generate or lock midway through the check
    workflow::require_pinned(p);
  }
  io.out.flush();
  // With a command, its output is what stdout carries: the URLs go to stderr.
  if (const int rc = dev_script(p, {o.command.empty() ? "up" : "ensure"}); rc != 0) return rc;
  if (!o.command.empty()) {
    std::vector<std::string> args = {"exec"};
    args.insert(args.end(), o.command.begin(), o.command.end());
    return dev_script(p, args);
  }
  if (o.no_shell || !io.out_term.tty) {
    io.err << "envpin dev: a shell in it: envpin dev; one command: envpin dev -- CMD; stop it: envpin dev --stop\n";
    return kOk;
  }
  return dev_script(p, {"shell"});
}

}  // namespace

Command dev_command() {
  return {"dev",
          "start (or find running) the project's development container and open a shell in it; see .envpin/dev.sh",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<DevOptions>();
            manifest_option(app, o->manifest);
            app.add_flag("--status", o->status, "print the container's state and each server's address");
            app.add_flag("--stop", o->stop, "stop and remove the container and its state (token, server logs)");
            app.add_flag("--url", o->url, "print each server's URL again (with the token)");
            app.add_flag("--no-shell", o->no_shell, "start it and print the URLs, without a shell");
            app.add_option("command", o->command, "one command to run in it, after --");
            return [o](Streams& io) { return dev(*o, io); };
          }};
}

}  // namespace envpin::cli

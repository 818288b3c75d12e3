// SPDX-License-Identifier: Apache-2.0
// `envpin dev`: the project's development container (workflow/dev.hpp, .envpin/dev.sh).
#include <cstdlib>
#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "diag/error.hpp"
#include "workflow/dev.hpp"

namespace envpin::cli {

Command dev_command() {
  return {"dev",
          "start (or find running) the project's development container and open a shell in it; see .envpin/dev.sh",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            struct Options {
              workflow::DevRequest r;
              bool status = false, stop = false, url = false, no_shell = false;
              std::string ssh;
            };
            auto o = std::make_shared<Options>();
            manifest_option(app, o->r.manifest);
            app.add_flag("--status", o->status, "print the container's state and each server's address");
            app.add_flag("--stop", o->stop, "stop and remove the container and its state (token, server logs)");
            app.add_flag("--url", o->url, "print each server's URL again (with the token)");
            app.add_flag("--no-shell", o->no_shell, "start it and print the URLs, without a shell");
            app.add_flag("--dry-run", o->r.dry_run, "print the engine's and ssh's commands it would run; run none");
            app.add_option("--host", o->r.host,
                           "[user@]host:path: on that server (synced first), its servers forwarded to this "
                           "machine's 127.0.0.1 over ssh");
            ssh_option(app, o->ssh);
            app.add_option("command", o->r.command, "one command to run in it, after --");
            return [o](Streams& io) {
              if (o->status + o->stop + o->url + !o->r.command.empty() > 1)
                throw diag::Error("--status, --stop, --url and a command exclude each other", std::nullopt,
                                  "give one of them");
              using A = workflow::DevRequest::Action;
              o->r.action = o->stop ? A::stop : o->status ? A::status : o->url ? A::url : A::open;
              o->r.shell = !o->no_shell && io.out_term.tty;
              if (!o->ssh.empty()) ::setenv("ENVPIN_SSH", o->ssh.c_str(), 1);
              io.out.flush();
              return workflow::dev(o->r, io.out, io.err);
            };
          }};
}

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
#include "workflow/dev.hpp"

#include "diag/error.hpp"
#include "io/process.hpp"
#include "io/state_dir.hpp"
#include "jobs/project.hpp"
#include "manifest/load.hpp"
#include "workflow/generate.hpp"
#include "workflow/project.hpp"

namespace envpin::workflow {
namespace {

using diag::Error;

// The held dev.sh (hold_scripts), with the project's directory as ENVPIN_PROJECT: never the tree's
// .envpin/dev.sh, which the development container itself can write.
int dev_script(const jobs::Project& p, const std::filesystem::path& held, std::vector<std::string> args) {
  const std::string engine = jobs::container_engine();
  args.insert(args.begin(), {"env", "ENVPIN_PROJECT=" + io::project_path(p.m.project_dir), "sh", held.string()});
  const int rc = io::run_attached(args, {"ENVPIN_ENGINE=" + engine});
  if (rc < 0) throw Error("cannot run " + held.string(), std::nullopt, "is 'sh' on PATH?");
  return rc;
}

}  // namespace

int dev(const DevRequest& r, std::ostream& out, std::ostream& err) {
  if (!r.host.empty()) return dev_remote(r, out, err);
  jobs::Project p{manifest::load(r.manifest), {}, {}, {}, {}};
  if (!p.m.dev)
    throw Error(p.m.file + " has no dev section", diag::Location{p.m.file, 0, 0},
                "add one, e.g. 'dev: {servers: [{name: notebook, kind: jupyter}]}', then run 'envpin generate'");
  if (r.action != DevRequest::Action::open) {
    // Stop, status and the URLs need no current lock: the script as envpin renders it now.
    const std::filesystem::path held = hold_scripts(p.m, plan(p.m).artifacts);
    switch (r.action) {
      case DevRequest::Action::stop:
        return dev_script(p, held, {"stop"});
      case DevRequest::Action::status:
        return dev_script(p, held, {"status"});
      default:
        return dev_script(p, held, {"url"});
    }
  }
  {
    const ProjectLock project_lock(p.m.project_dir, &err);  // no generate or lock midway through the check
    require_pinned(p);
  }
  const std::filesystem::path held = io::project_state(p.m.project_dir) / "dev.sh";
  if (r.dry_run) return dev_script(p, held, {"plan"});
  // With a command, its output is what stdout carries: the URLs go to stderr.
  if (const int rc = dev_script(p, held, {r.command.empty() ? "up" : "ensure"}); rc != 0) return rc;
  if (!r.command.empty()) {
    std::vector<std::string> args = {"exec"};
    args.insert(args.end(), r.command.begin(), r.command.end());
    return dev_script(p, held, args);
  }
  if (!r.shell) {
    err << "envpin dev: a shell in it: envpin dev; one command: envpin dev -- CMD; stop it: envpin dev --stop\n";
    return 0;
  }
  return dev_script(p, held, {"shell"});
}

}  // namespace envpin::workflow

// SPDX-License-Identifier: Apache-2.0
#include "workflow/dev.hpp"

#include "diag/error.hpp"
#include "io/process.hpp"
#include "jobs/project.hpp"
#include "manifest/load.hpp"
#include "workflow/project.hpp"

namespace envpin::workflow {
namespace {

using diag::Error;

int dev_script(const jobs::Project& p, std::vector<std::string> args) {
  const std::string engine = jobs::container_engine();
  const std::string script = (p.m.project_dir / p.m.outputs.dev.value).string();
  args.insert(args.begin(), {"sh", script});
  const int rc = io::run_attached(args, {"ENVPIN_ENGINE=" + engine});
  if (rc < 0) throw Error("cannot run " + script, std::nullopt, "is 'sh' on PATH?");
  return rc;
}

}  // namespace

int dev(const DevRequest& r, std::ostream& out, std::ostream& err) {
  if (!r.host.empty()) return dev_remote(r, out, err);
  jobs::Project p{manifest::load(r.manifest), {}, {}, {}};
  if (!p.m.dev)
    throw Error(p.m.file + " has no dev section", diag::Location{p.m.file, 0, 0},
                "add one, e.g. 'dev: {servers: [{name: notebook, kind: jupyter}]}', then run 'envpin generate'");
  switch (r.action) {
    case DevRequest::Action::stop:
      return dev_script(p, {"stop"});
    case DevRequest::Action::status:
      return dev_script(p, {"status"});
    case DevRequest::Action::url:
      return dev_script(p, {"url"});
    case DevRequest::Action::open:
      break;
  }
  {
    const ProjectLock project_lock(p.m.project_dir, &err);  // no generate or lock midway through the check
    require_pinned(p);
  }
  if (r.dry_run) return dev_script(p, {"plan"});
  // With a command, its output is what stdout carries: the URLs go to stderr.
  if (const int rc = dev_script(p, {r.command.empty() ? "up" : "ensure"}); rc != 0) return rc;
  if (!r.command.empty()) {
    std::vector<std::string> args = {"exec"};
    args.insert(args.end(), r.command.begin(), r.command.end());
    return dev_script(p, args);
  }
  if (!r.shell) {
    err << "envpin dev: a shell in it: envpin dev; one command: envpin dev -- CMD; stop it: envpin dev --stop\n";
    return 0;
  }
  return dev_script(p, {"shell"});
}

}  // namespace envpin::workflow

// SPDX-License-Identifier: Apache-2.0
#include "workflow/jobs.hpp"

#include <filesystem>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "jobs/project.hpp"
#include "jobs/slurm_rest.hpp"
#include "workflow/project.hpp"
#include "workflow/push.hpp"

namespace envpin::workflow {

namespace fs = std::filesystem;
using diag::Error;

int run_job(const JobRequest& r, std::ostream& err) {
  const jobs::Project p = jobs::load_project(r.manifest);
  jobs::check_job_id(r.job_id);
  if (r.command.empty())
    throw Error("no command to run", std::nullopt, "put it after '--': envpin run -- python train.py --epochs 10");
  {
    const ProjectLock project_lock(p.m.project_dir, &err);  // no generate or lock midway through the check
    require_pinned(p);
  }
  std::vector<std::string> args;
  if (!r.job_id.empty()) args.insert(args.end(), {"--job-id", r.job_id});
  if (r.detach) args.push_back("--detach");
  args.push_back("--");
  args.insert(args.end(), r.command.begin(), r.command.end());
  return jobs::exec_run_script(p, args);
}

int resume_job(const JobRequest& r, std::ostream& err) {
  const jobs::Project p = jobs::load_project(r.manifest);
  const auto status = jobs::job_status(p, r.job_id);
  // As `envpin jobs` shows it: a job whose supervisor died is judged by its container.
  const jobs::Shown now = jobs::shown(p, status);
  if (jobs::active(now.state))
    throw Error("job '" + r.job_id + "' is still " + now.state +
                    (jobs::supervisor_alive(p, status) ? "" : " (its container, without its supervisor)"),
                std::nullopt, "stop it first: envpin stop " + r.job_id);
  // A job that finished is done: resuming it would run it again over its final checkpoint.
  if (now.state == "exited" && now.exit == "0" && !r.force)
    throw Error(
        "job '" + r.job_id + "' finished successfully (exit 0" +
            (jobs::field(status, "state") == "exited" ? "" : ", its container's, after its supervisor was lost") +
            "); resuming it would run it again over its final checkpoint",
        std::nullopt, "pass --force to run it again: envpin resume --force " + r.job_id);
  {
    const ProjectLock project_lock(p.m.project_dir, &err);
    require_pinned(p);
    if (r.pushed) require_pushed(p.m);
  }
  std::vector<std::string> args = {"--job-id", r.job_id, "--resume"};
  if (r.detach) args.push_back("--detach");
  return jobs::exec_run_script(p, args);
}

Submitted submit_job(const JobRequest& r, std::ostream& err) {
  const jobs::Project p = jobs::load_project(r.manifest);
  jobs::check_job_id(r.job_id);
  if (r.command.empty())
    throw Error("no command to submit", std::nullopt, "put it after '--': envpin submit -- python train.py");
  jobs::Project submitted = p;
  {
    const ProjectLock project_lock(p.m.project_dir, &err);
    require_pinned(p);
    if (r.pushed) {
      require_pushed(p.m);
      submitted.sbatch_script = p.m.project_dir / p.m.outputs.enroot.value;
    }
  }
  if (!r.job_id.empty() && !r.resume && fs::exists(p.logs / (r.job_id + ".status")))
    throw Error("job id '" + r.job_id + "' is already in use", std::nullopt,
                "choose another --job-id, or continue that job with: envpin submit --resume --job-id " + r.job_id);
  Submitted s;
  if (!r.rest.empty())
    s.slurm_id = jobs::rest_submit_job(submitted, r.rest, r.job_id, r.command, s.withheld);
  else
    s.slurm_id = jobs::sbatch_submit(submitted, jobs::find_sbatch(), r.job_id, r.command);
  s.job_id = r.job_id.empty() ? p.m.name.value + "-slurm-" + s.slurm_id : r.job_id;
  s.logs = shown_path(p.m.project_dir, p.m.jobs->logs.value).generic_string();
  return s;
}

Stopped stop_job(const std::string& manifest, const std::string& job_id, std::ostream& err) {
  const jobs::Project p = jobs::load_project(manifest);
  auto s = jobs::job_status(p, job_id);
  if (!jobs::on_this_host(s))
    throw Error("job '" + job_id + "' runs on " + diag::printable(s["host"]) + ", not here", std::nullopt,
                "stop it there, or with scancel when Slurm runs it");
  const int timeout = p.m.jobs->stop_timeout.value + 15;
  Stopped out;
  if (jobs::active(s["state"]) && jobs::supervisor_alive(p, s)) {
    out.supervised = true;
    out.exit = jobs::stop_supervisor(p, job_id, timeout)["exit"];
    return out;
  }
  if (jobs::active(s["state"]) && !s["pid"].empty())
    err << "envpin: note: the recorded supervisor of job " << job_id << " (pid " << s["pid"]
        << ") is gone or is not this project's run.sh; nothing was signalled\n";
  if (const auto stopped = jobs::stop_unsupervised(p, job_id)) {
    out.what = *stopped;
    return out;
  }
  throw Error("job '" + job_id + "' is not running (" + jobs::shown_state(p, s) +
                  (s["exit"].empty() ? "" : ", exit " + s["exit"]) + ")",
              std::nullopt, "continue it with: envpin resume " + job_id);
}

}  // namespace envpin::workflow

// SPDX-License-Identifier: Apache-2.0
// Long jobs: `envpin run`, `jobs`, `logs`, `stop`, `resume` and `submit`: their arguments and
// output; the domain is tool/jobs/. The running itself is
// the generated .envpin/run.sh (and .envpin/job.sbatch under Slurm), so a job started by envpin
// and one started by hand behave the same; these commands check the project first (a current
// lock, current generated files, an engine) and read the state run.sh keeps in the logs
// directory: <job>.status (key=value lines), <job>.log, <job>.args.
#include <ostream>

#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/job_command.hpp"
#include "diag/error.hpp"
#include "diag/text.hpp"
#include "jobs/cleanup.hpp"
#include "jobs/project.hpp"
#include "jobs/slurm_rest.hpp"
#include "workflow/jobs.hpp"

namespace envpin::cli {
namespace {

using diag::Error;

workflow::JobRequest request(const JobOptions& o) {
  return {o.manifest, o.job_id, o.command, o.detach, o.force, o.resume, o.pushed, o.rest};
}

int run_job(const JobOptions& o, Streams& io) { return workflow::run_job(request(o), io.err); }
int resume_job(const JobOptions& o, Streams& io) { return workflow::resume_job(request(o), io.err); }

// `envpin jobs --rest URL`: the project's Slurm jobs as slurmrestd reports them.
int list_rest_jobs(const jobs::Project& p, const JobOptions& o, Streams& io) {
  jobs::RestTarget t = jobs::rest_target(o.rest);
  jobs::discover_api(t);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& entry : jobs::rest_jobs(t)) {
    const auto j = jobs::rest_job(entry, p.m.name.value);
    if (!j) continue;
    out.push_back({{"slurm_job", j->slurm_job},
                   {"job", j->job},
                   {"state", j->state},
                   {"reason", j->reason},
                   {"exit", j->exit},
                   {"nodes", j->nodes},
                   {"restarts", j->restarts}});
  }
  if (o.json) {
    io.out << out.dump(2) << "\n";
    return kOk;
  }
  if (out.empty()) {
    io.out << "no Slurm jobs named " << p.m.name.value << " at " << t.base << "\n";
    return kOk;
  }
  auto cell = [](std::string s, std::size_t width) {
    return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
  };
  io.out << cell("SLURM JOB", 10) << cell("JOB", 32) << cell("STATE", 11) << cell("EXIT", 10) << cell("RESTARTS", 9)
         << cell("NODES", 16) << "REASON\n";
  for (const auto& j : out)
    io.out << cell(std::to_string(j["slurm_job"].get<long>()), 10) << cell(j["job"], 32) << cell(j["state"], 11)
           << cell(j["exit"], 10) << cell(std::to_string(j["restarts"].get<long>()), 9) << cell(j["nodes"], 16)
           << j["reason"].get<std::string>() << "\n";
  return kOk;
}

int list_jobs(const JobOptions& o, Streams& io) {
  if (o.action == "prune") return prune_finished_jobs(o, io);
  if (!o.older_than.empty() || o.checkpoints)
    throw Error(std::string(o.checkpoints ? "--checkpoints" : "--older-than") + " is for 'envpin jobs prune'",
                std::nullopt, "envpin jobs prune --older-than 7d");
  const jobs::Project p = jobs::load_project(o.manifest);
  if (!o.rest.empty()) return list_rest_jobs(p, o, io);
  nlohmann::json out = nlohmann::json::array();
  std::vector<jobs::Listed> listed;  // (--all, or the newest finished ones)
  for (const jobs::JobRow& r : jobs::job_rows(p)) {
    listed.push_back(r.listed);
    out.push_back({{"job", r.job},
                   {"state", r.state},
                   {"exit", r.exit},
                   {"restarts", r.restarts},
                   {"started", r.started},
                   {"last_checkpoint", r.last_checkpoint},
                   {"last_checkpoint_age_s", r.last_checkpoint.empty() || r.state == "unreadable"
                                                 ? nlohmann::json(nullptr)
                                                 : nlohmann::json(r.last_checkpoint_age_s)},
                   {"checkpoints", r.checkpoints},
                   {"log", r.log},
                   {"container", r.container},
                   {"reason", r.reason}});
  }
  if (o.json) {
    io.out << out.dump(2) << "\n";
    return kOk;
  }
  if (out.empty()) {
    io.out << "no jobs in " << p.logs.generic_string() << "\n";
    return kOk;
  }
  // Every value came from a file anyone may have edited: one printable line each.
  auto cell = [](const std::string& raw, std::size_t width) {
    const std::string s = diag::printable(raw);
    return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
  };
  io.out << cell("JOB", 32) << cell("STATE", 11) << cell("EXIT", 5) << cell("RESTARTS", 9) << cell("STARTED", 21)
         << "LAST CHECKPOINT\n";
  const std::vector<std::size_t> kept = jobs::shown_in_list(listed, o.all ? out.size() : jobs::kListedFinished);
  for (const std::size_t i : kept) {
    const auto& j = out[i];
    std::string ck = j["last_checkpoint"].get<std::string>();
    if (!ck.empty()) ck += " (" + std::to_string(j["last_checkpoint_age_s"].get<long>()) + " s ago)";
    io.out << cell(j["job"], 32) << cell(j["state"], 11) << cell(j["exit"], 5) << cell(j["restarts"], 9)
           << cell(j["started"], 21) << (ck.empty() ? "-" : ck) << "\n";
    if (!j["reason"].get<std::string>().empty())
      io.out << "  " << diag::printable(j["reason"].get<std::string>()) << "\n";
  }
  if (kept.size() < out.size())
    io.out << out.size() - kept.size() << " older finished job" << (out.size() - kept.size() == 1 ? "" : "s")
           << " left out (envpin jobs --all shows them; envpin jobs prune removes them)\n";
  return kOk;
}

int job_logs(const JobOptions& o, Streams& io) {
  const jobs::Project p = jobs::load_project(o.manifest);
  jobs::job_status(p, o.job_id);
  jobs::print_log(p, o.job_id, io.out, !o.no_follow);
  return kOk;
}

int stop_job(const JobOptions& o, Streams& io) {
  const workflow::Stopped s = workflow::stop_job(o.manifest, o.job_id, io.err);
  if (s.supervised)
    io.out << "stopped job " << o.job_id << " (exit " << s.exit << "); continue it with: envpin resume " << o.job_id
           << "\n";
  else
    io.out << "stopped " << s.what << " of job " << o.job_id << "\n";
  return kOk;
}

int submit_job(const JobOptions& o, Streams& io) {
  const workflow::Submitted s = workflow::submit_job(request(o), io.err);
  for (const auto& name : s.withheld)
    io.err << "envpin: note: the secret " << name << " is not sent to slurmrestd; the job gets it only where the "
           << "cluster's environment sets it\n";
  io.out << "submitted slurm job " << s.slurm_id << " as envpin job " << s.job_id << "; output in " << s.logs << "/\n";
  return kOk;
}

void job_argument(CLI::App& app, JobOptions& o) { app.add_option("job", o.job_id, "the job id")->required(); }

}  // namespace

Command run_command() {
  return job_command(
      "run", "run a command as a job in the pinned image (checkpoints, logs, restarts); see .envpin/run.sh", run_job,
      [](CLI::App& app, JobOptions& o) {
        app.add_option("--job-id", o.job_id, "the job's id (default: <name>-<UTC time>-<pid>); must be unused");
        app.add_flag("-d,--detach", o.detach, "run in its own session, immune to the terminal; print the id");
        app.add_option("command", o.command, "the command, after --")->required();
      });
}

Command jobs_command() {
  return job_command("jobs", "list the jobs with state, exit code, restarts, start time and last checkpoint", list_jobs,
                     [](CLI::App& app, JobOptions& o) {
                       app.add_flag("--json", o.json, "print JSON (every job)");
                       app.add_flag("--all", o.all, "list every job, not only the active and the newest 20 finished");
                       app.add_option("action", o.action, "prune: remove finished jobs' status and logs")
                           ->check(CLI::IsMember({"prune"}));
                       app.add_option("--older-than", o.older_than,
                                      "prune: only jobs finished longer ago (30m, 12h, 7d)");
                       app.add_flag("--checkpoints", o.checkpoints, "prune: remove their checkpoint directories too");
                       app.add_option("--rest", o.rest,
                                      "list the project's Slurm jobs from slurmrestd at this URL (token: SLURM_JWT)");
                     });
}

Command logs_command() {
  return job_command("logs", "print a job's log, following it while the job runs", job_logs,
                     [](CLI::App& app, JobOptions& o) {
                       app.add_flag("--no-follow", o.no_follow, "print what is there and return");
                       job_argument(app, o);
                     });
}

Command stop_command() {
  return job_command("stop", "stop a job: SIGTERM to its container, SIGKILL after jobs.stop_timeout; no restart",
                     stop_job, job_argument);
}

Command resume_command() {
  return job_command("resume", "start a stopped or failed job again: same command and volumes, plus jobs.resume",
                     resume_job, [](CLI::App& app, JobOptions& o) {
                       app.add_flag("-d,--detach", o.detach, "run in its own session, immune to the terminal");
                       app.add_flag("--force", o.force, "resume even a job that finished successfully (exit 0)");
                       job_argument(app, o);
                     });
}

Command submit_command() {
  return job_command(
      "submit", "submit a command as a Slurm job (.envpin/job.sbatch) with sbatch", submit_job,
      [](CLI::App& app, JobOptions& o) {
        app.add_option("--job-id", o.job_id, "the envpin job id (default: <name>-slurm-<slurm job id>)");
        app.add_flag("--resume", o.resume, "continue the job with this --job-id from its checkpoints");
        app.add_flag("--pushed", o.pushed,
                     "submit .envpin/enroot.sbatch (enroot/Pyxis, the image envpin push sent) once it is current");
        app.add_option(
            "--rest", o.rest,
            "submit through slurmrestd at this URL instead of sbatch (token: SLURM_JWT, else scontrol token)");
        app.add_option("command", o.command, "the command, after --")->required();
      });
}

}  // namespace envpin::cli

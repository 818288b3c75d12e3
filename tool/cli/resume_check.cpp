// SPDX-License-Identifier: Apache-2.0
// `envpin resume-check`: its options and errors; resume_check/run.hpp runs the check.
#include <ostream>

#include "cli/app.hpp"
#include "cli/job_command.hpp"
#include "diag/error.hpp"
#include "diag/text.hpp"
#include "resume_check/run.hpp"

namespace envpin::cli {
namespace {

int resume_check_job(const JobOptions& o, Streams& io) {
  try {
    return resume_check::run_check(
        {o.manifest, o.job_id, o.kill_at, o.kills, o.compare, o.tolerance, o.keep, o.slurm, o.command},
        {io.out, io.err});
  } catch (const diag::Error& e) {
    io.err << diag::paint_diagnostic(io.err_term, diag::format(e));
    return 2;
  }
}

}  // namespace

Command resume_check_command() {
  return job_command(
      "resume-check",
      "run a command as a job twice, once killed and resumed, and say whether the results are identical",
      resume_check_job, [](CLI::App& app, JobOptions& o) {
        app.add_option("--job-id", o.job_id, "the check's id: its jobs are ID-ref, ID-kill (and ID-ref2)");
        app.add_option("--kill-at", o.kill_at,
                       "auto (after each new checkpoint), SECONDS after each (re)start, or a text the "
                       "job prints")
            ->capture_default_str();
        app.add_option("--kills", o.kills, "how many times to kill and resume")->capture_default_str();
        app.add_flag("--slurm", o.slurm, "run the jobs under Slurm (job.sbatch); interrupt with scontrol requeue");
        // One value per --compare: with CLI11 2.1 a vector option that takes extra
        // arguments makes the '--' before the command end its values, and the
        // command's own options ("sh -c") are then parsed as envpin's.
        app.add_option("--compare", o.compare,
                       "what to compare after each run: a project path, or line:PREFIX (default: the "
                       "final checkpoints); repeatable")
            ->allow_extra_args(false);
        app.add_option("--tolerance", o.tolerance,
                       "RTOL[,ATOL]: floating-point values within ATOL + RTOL*|b| count as equal, reported as "
                       "tolerated (for programs that are not bitwise deterministic)");
        app.add_flag("--keep", o.keep, "keep the check's jobs (status, logs, checkpoints) afterwards");
        app.add_option("command", o.command, "the command, after --")->required();
      });
}

}  // namespace envpin::cli

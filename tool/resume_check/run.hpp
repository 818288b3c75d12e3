// SPDX-License-Identifier: Apache-2.0
// `envpin resume-check`'s runner: the command runs as a job twice (and a third time when the
// results differ) through the real restart and resume paths, run.sh on this machine or
// job.sbatch under Slurm, its checkpoints watched and snapshotted; verdict.hpp judges what the
// runs left. The room's one entry: only cli/resume_check.cpp includes it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace envpin::resume_check {

struct ResumeCheckRequest {
  std::string manifest = "envpin.yaml";
  std::string job_id;  // the check's id: its jobs are ID-ref, ID-kill (and ID-ref2)
  std::string kill_at = "auto";
  int kills = 1;
  std::vector<std::string> compare;  // project paths or line:PREFIX
  std::string tolerance;             // RTOL[,ATOL]
  bool keep = false;                 // keep the check's jobs (status, logs, checkpoints)
  bool slurm = false;
  std::vector<std::string> command;
};

// Where the runner writes: the verdict's lines and the foreground run's output to `out`,
// progress ("envpin resume-check: kill 1 ...") to `err`.
struct Console {
  std::ostream& out;
  std::ostream& err;
};

// The verdict's exit code: 0 identical, 1 differs or did not resume. Throws diag::Error when the
// check could not run (the command's exit 2).
int run_check(const ResumeCheckRequest& request, const Console& io);

}  // namespace envpin::resume_check

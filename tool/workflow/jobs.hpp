// SPDX-License-Identifier: Apache-2.0
// The job commands' work across rooms (cli/jobs.cpp parses and prints): a job started, resumed,
// submitted to Slurm or stopped, each after the checks its command makes.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace envpin::workflow {

struct JobRequest {
  std::string manifest = "envpin.yaml";
  std::string job_id;
  std::vector<std::string> command;
  bool detach = false;
  bool force = false;   // resume: even a job that finished with exit 0
  bool resume = false;  // submit: continue the job with this id
  bool pushed = false;  // resume, submit: .envpin/enroot.sbatch, the pushed image by digest
  std::string rest;     // submit: slurmrestd's URL instead of sbatch
};

// envpin run: the pinned check, then the held run.sh with the command; its exit status.
// Throws diag::Error for a bad id, no command, or a project that is not pinned.
int run_job(const JobRequest& r, std::ostream& err);

// envpin resume: a job that is not running (nor finished with exit 0, unless forced) started again
// by the held run.sh --resume; its exit status. Throws diag::Error saying why not.
int resume_job(const JobRequest& r, std::ostream& err);

struct Submitted {
  std::string slurm_id;
  std::string job_id;                 // the envpin job's id
  std::string logs;                   // where its output goes, as the user types it
  std::vector<std::string> withheld;  // secrets slurmrestd is not sent
};
// envpin submit: the pinned check, then sbatch or slurmrestd. Throws diag::Error.
Submitted submit_job(const JobRequest& r, std::ostream& err);

struct Stopped {
  bool supervised = false;  // its run.sh was signalled; exit is the job's
  std::string exit;
  std::string what;  // otherwise: what was stopped ("container envpin-...")
};
// envpin stop: the job's verified supervisor signalled, else its own container (by label) stopped;
// a recorded supervisor that is not this project's run.sh is noted on `err`. Throws diag::Error
// when it runs elsewhere or is not running.
Stopped stop_job(const std::string& manifest, const std::string& job_id, std::ostream& err);

}  // namespace envpin::workflow

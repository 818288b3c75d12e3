// SPDX-License-Identifier: Apache-2.0
// What the job commands share (cli/jobs.cpp: run, jobs, logs, stop, resume, submit;
// cli/resume_check.cpp): their options and how they are registered. The domain is tool/jobs/.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace CLI {
class App;
}

namespace envpin::cli {

struct JobOptions {
  std::string manifest = "envpin.yaml";
  std::string job_id;
  bool detach = false;
  bool resume = false;
  bool json = false;
  bool no_follow = false;
  bool force = false;
  std::vector<std::string> command;
  std::string rest;     // slurmrestd's URL (submit, jobs)
  bool pushed = false;  // submit .envpin/enroot.sbatch, the pushed image by digest
  // resume-check
  bool slurm = false;
  std::string kill_at = "auto";
  int kills = 1;
  std::vector<std::string> compare;
  std::string tolerance;  // RTOL[,ATOL]
  bool keep = false;      // keep the check's jobs (status, logs, checkpoints)
  // jobs --all, jobs prune, rm (cli/rm.cpp)
  bool all = false;
  std::string action;  // "prune" or empty
  bool checkpoints = false;
  std::string older_than;
  std::vector<std::string> jobs;
};

using Action = int (*)(const JobOptions&, Streams&);

// `envpin jobs prune` (cli/rm.cpp).
int prune_finished_jobs(const JobOptions& o, Streams& io);

// Every job command reads the manifest (-f) and its own options into one JobOptions.
Command job_command(const char* name, const char* summary, Action action,
                    std::function<void(CLI::App&, JobOptions&)> options);

}  // namespace envpin::cli

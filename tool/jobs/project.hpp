// SPDX-License-Identifier: Apache-2.0
// The jobs domain: the project a job runs in, the state run.sh keeps (<logs>/<job>.status,
// key=value lines), the supervision rules read from it, and starting run.sh or job.sbatch.
// The job commands (cli/jobs.cpp, cli/resume_check.cpp) are argument handling over this.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "manifest/model.hpp"

namespace envpin::jobs {

struct Project {
  manifest::Manifest m;
  std::filesystem::path run_script;
  std::filesystem::path sbatch_script;
  std::filesystem::path logs;
};

// The manifest (which must have a jobs section) and where its scripts and logs are.
Project load_project(const std::string& file);
// docker or podman (ENVPIN_ENGINE), or an error naming both.
std::string container_engine();
// Letters, digits, '.', '_' and '-', starting with a letter or digit (empty: none given).
void check_job_id(const std::string& id);

std::map<std::string, std::string> read_status(const std::filesystem::path& file);
std::map<std::string, std::string> job_status(const Project& p, const std::string& id);
std::string field(const std::map<std::string, std::string>& s, const std::string& key);
bool active(const std::string& state);
// Whether the job's supervisor ran on this machine (a Slurm job runs on a compute node).
bool on_this_host(const std::map<std::string, std::string>& s);
// Whether the supervisor (run.sh) recorded in the status still runs; unknown (true) for another host.
bool supervisor_alive(const std::map<std::string, std::string>& s);
// The state to show: a job whose supervisor vanished while running is "lost".
std::string shown_state(const std::map<std::string, std::string>& s);
// The newest complete checkpoint in `dir` (its sha256 sidecar verified when there is one: a file
// cut off mid-write is not the last checkpoint) and its age in seconds; empty when none.
std::pair<std::string, long> last_checkpoint(const std::string& dir);

// SIGTERM to the job's supervisor, then its status once it left the running states, waiting
// up to `timeout_s`; throws when it is still running then.
std::map<std::string, std::string> stop_supervisor(const Project& p, const std::string& id, int timeout_s);

// Runs .envpin/run.sh with `args` attached to this terminal; its exit status.
int exec_run_script(const Project& p, std::vector<std::string> args);
// sbatch on PATH, or an error naming the fix.
std::string find_sbatch();
// Submits .envpin/job.sbatch with the command as envpin job `job_id`; the Slurm job id.
std::string sbatch_submit(const Project& p, const std::string& sbatch, const std::string& job_id,
                          const std::vector<std::string>& command);

}  // namespace envpin::jobs

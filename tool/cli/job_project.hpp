// SPDX-License-Identifier: Apache-2.0
// What the job commands share (cli/jobs.cpp: run, jobs, logs, stop, resume, submit;
// cli/resume_check.cpp): their options, the project a job runs in, the state run.sh keeps
// (<logs>/<job>.status, key=value lines), and starting run.sh or job.sbatch.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "manifest/model.hpp"

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
  std::string rest;  // slurmrestd's URL (submit, jobs)
  // resume-check
  bool slurm = false;
  std::string kill_at = "auto";
  int kills = 1;
  std::vector<std::string> compare;
};

struct Project {
  manifest::Manifest m;
  std::filesystem::path run_script;
  std::filesystem::path sbatch_script;
  std::filesystem::path logs;
};

// The manifest (which must have a jobs section) and where its scripts and logs are.
Project load_job_project(const std::string& file);
// Jobs run the pinned image: a lock that is current, and generated files that match it.
void require_pinned(const Project& p);
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

// Runs .envpin/run.sh with `args` attached to this terminal; its exit status.
int exec_run_script(const Project& p, std::vector<std::string> args);
// sbatch on PATH, or an error naming the fix.
std::string find_sbatch();
// Submits .envpin/job.sbatch with the command as envpin job `job_id`; the Slurm job id.
std::string sbatch_submit(const Project& p, const std::string& sbatch, const std::string& job_id,
                          const std::vector<std::string>& command);

using Action = int (*)(const JobOptions&, Streams&);

// Every job command reads the manifest (-f) and its own options into one JobOptions.
Command job_command(const char* name, const char* summary, Action action,
                    std::function<void(CLI::App&, JobOptions&)> options);

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
// Submission and state over Slurm's own REST daemon (slurmrestd, JWT): the same
// .envpin/job.sbatch as sbatch gets, its #SBATCH directives given as the job's JSON properties
// (slurmrestd does not read them from the script). No envpin server: the scheduler's API is the
// interface. It speaks the REST API v0.0.38 (Slurm 22.05) to v0.0.44 (Slurm 25.11), the newest
// one the server serves.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/model.hpp"

namespace envpin::jobs {

struct RestTarget {
  std::string base;   // "http://127.0.0.1:6820" (no trailing '/')
  std::string user;   // X-SLURM-USER-NAME
  std::string token;  // X-SLURM-USER-TOKEN
  int api = 0;        // the REST API version's last number (38: v0.0.38), from discover_api
};

// The REST API versions envpin speaks: v0.0.38 to v0.0.44 (their last numbers).
inline constexpr int kOldestApi = 38;
inline constexpr int kNewestApi = 44;
std::string api_name(int api);  // "v0.0.44"

// The URL checked, the user (the caller's login name) and the token: SLURM_JWT, else what
// `scontrol token` prints. Throws diag::Error naming the fix.
RestTarget rest_target(const std::string& url);

// Everything the submission carries besides the token.
struct Submission {
  std::string project_dir;  // absolute, as the cluster sees it
  std::string script;       // .envpin/job.sbatch's text
  std::string job_id;       // the envpin job id, or empty (then <name>-slurm-<slurm id>)
  std::vector<std::string> command;
  std::map<std::string, std::string> environment;  // the job's environment (no secrets)
};

// The newest version both envpin and the server speak, from the server's OpenAPI document (the
// versions of its /slurm/vX/job/submit paths). Throws diag::Error naming what it serves when
// they share none; `where` names the server in it.
int choose_api(const nlohmann::json& openapi, const std::string& where);

// Sets t.api: ENVPIN_SLURM_REST_API (e.g. v0.0.40) when set, else what choose_api picks from
// the server's GET /openapi/v3.
void discover_api(RestTarget& t);

// The job submission body for the API version `api` (v0.0.38: the script at the top level and
// the environment a map; later: job.script, the environment a list of K=V, the node count a
// string, flags as arrays, the time limit a {set, infinite, number} object, GPUs as TRES): the
// script with `set -- COMMAND` after its `set -u`, and the properties job.sbatch's directives
// give (name, output, open mode, requeue, time limit, partition, nodes, tasks, GPUs, exclusive).
nlohmann::json submit_body(const manifest::Manifest& m, const Submission& s, int api);

// The environment a REST-submitted job gets: PATH and HOME, ENVPIN_PROJECT_DIR and
// ENVPIN_JOB_ID, and, when set here, SLURM_CONF, the engine's and envpin's variables, the distributed
// launch's NCCL/GLOO variables, jobs.env and jobs.notify.url_secret. Never the manifest's
// secrets: `withheld` gets the names of those that are set here.
std::map<std::string, std::string> job_environment(const manifest::Manifest& m, const std::string& project_dir,
                                                   const std::string& job_id, std::vector<std::string>& withheld);

// POSTs the body to /slurm/<t.api>/job/submit (once: a submission is not retried); the Slurm
// job id. Throws diag::Error with the cause (unreachable, token rejected, Slurm's own error);
// Slurm's warnings (a held job, a busy partition) are not errors.
std::string rest_submit(const RestTarget& t, const nlohmann::json& body);

// GET /slurm/<t.api>/jobs: the `jobs` array.
nlohmann::json rest_jobs(const RestTarget& t);

// One of the project's jobs in a /jobs answer of any version, read without trusting the answer's
// types (a field of another type reads as missing). job_state is a word (v0.0.38, v0.0.39) or a
// list of them (later; shown joined by ','); exit_code a raw wait status (v0.0.38), that status
// in a {set, infinite, number} object (v0.0.39), or {status, return_code, signal} (later, whose
// numbers a server started with +complex gives bare). nullopt for another project's job or a
// malformed entry.
struct RestJob {
  long slurm_job = 0;
  std::string job;  // the envpin job id, from the comment submit_body wrote ("" if not envpin's)
  std::string state, reason, exit, nodes;
  long restarts = 0;
};
std::optional<RestJob> rest_job(const nlohmann::json& entry, const std::string& project);

// A raw wait status (exit_code of v0.0.38 and v0.0.39): "3" for exit 3, "signal 9" for a kill.
std::string describe_exit_code(long raw);

// Slurm's --time ("[D-]HH:MM:SS" or minutes) in whole minutes, rounded up.
long time_limit_minutes(const std::string& t);

}  // namespace envpin::jobs

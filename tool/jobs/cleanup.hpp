// SPDX-License-Identifier: Apache-2.0
// Removing finished jobs (`envpin rm`, `envpin jobs prune`, and resume-check's own jobs): what
// run.sh keeps of a job in the logs directory (<job>.status, <job>.args, <job>.log, the same for
// each other node as <job>.nodeN.*, the idle guard's .<job>.idle-stop and the temporaries an
// interrupted write leaves), and with `checkpoints` its checkpoint directory <checkpoints>/<job>.
// A job still running is never touched. Every name comes from the user or from a directory
// listing and is checked as run.sh checks --job-id, so nothing outside the logs directory and the
// checkpoint directory is removed; a symlink is removed itself, never what it points to.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobs/project.hpp"

namespace envpin::jobs {

// The host directory of the jobs' checkpoints as run.sh computes it (ENVPIN_CHECKPOINTS, else
// jobs.checkpoints.host), absolute.
std::filesystem::path checkpoint_root(const Project& p);

// The files run.sh keeps for `job` in the logs directory, sorted; none when it has none. `job`
// must be a job id (check_job_id).
std::vector<std::filesystem::path> job_files(const Project& p, std::string_view job);

// Throws diag::Error unless `job` is a job id with files in the logs directory, and none of its
// nodes runs: its supervisor alive, or its container running (the engine is asked when the
// status cannot say, or says the job ended).
void check_removable(const Project& p, std::string_view job);

// Removes a finished job's files (job_files) and, with `checkpoints`, its checkpoint directory;
// the bytes freed. Checks check_removable first and removes nothing when it throws.
std::uintmax_t remove_job(const Project& p, std::string_view job, bool checkpoints);

// "30s", "30m", "12h", "7d" in seconds; throws diag::Error naming `option` for anything else.
long parse_age(std::string_view text, std::string_view option);

// When a file was last written (its own time: a symlink is not followed), in seconds since the
// epoch; 0 when it cannot be read.
std::int64_t written_at(const std::filesystem::path& file);

struct Pruned {
  std::string job;
  std::uintmax_t bytes = 0;
};
struct PruneResult {
  std::vector<Pruned> removed;          // sorted by job
  std::vector<std::string> unreadable;  // status files left alone: why, one line each
};
// Removes every finished job whose status was last written more than `older_than_s` seconds
// before `now` (every finished job when none); jobs still running stay.
PruneResult prune_jobs(const Project& p, std::optional<long> older_than_s, bool checkpoints, std::int64_t now);

// For `envpin jobs`: which of the listed jobs are shown without --all. Every active job, and the
// `keep` finished ones written last (ties: the later in the list); the indexes kept, ascending.
struct Listed {
  bool active = false;
  std::int64_t written = 0;
};
std::vector<std::size_t> shown_in_list(const std::vector<Listed>& jobs, std::size_t keep);
inline constexpr std::size_t kListedFinished = 20;

// One row of `envpin jobs`: a status file of the logs directory as envpin judges it now (a job
// whose supervisor is gone by the engine's or Slurm's word). A file that is not run.sh's is a row
// of its own, state "unreadable", its reason why. Nodes other than the first of a multi-node job
// are shown with the job, not as rows.
struct JobRow {
  std::string job, state, exit, restarts, started, checkpoints, log, container, reason;
  std::string last_checkpoint;  // empty: none
  long last_checkpoint_age_s = 0;
  Listed listed;
};
// Every row, in the order of the status files' names; the engine asked once for all of them.
std::vector<JobRow> job_rows(const Project& p);

}  // namespace envpin::jobs

// SPDX-License-Identifier: Apache-2.0
// `envpin rm JOB...` and `envpin jobs prune [--older-than D]`: finished jobs' status, arguments
// and logs removed (their checkpoints only with --checkpoints); the domain is jobs/cleanup.
#include <chrono>
#include <optional>
#include <ostream>
#include <set>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/job_command.hpp"
#include "diag/error.hpp"
#include "diag/text.hpp"
#include "jobs/cleanup.hpp"
#include "jobs/project.hpp"

namespace envpin::cli {
namespace {

using diag::Error;

std::string what_went(bool checkpoints) { return checkpoints ? "status, logs and checkpoints" : "status and logs"; }

int remove_jobs(const JobOptions& o, Streams& io) {
  const jobs::Project p = jobs::load_project(o.manifest);
  // Every name checked, and every job found finished, before anything is removed.
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const std::string& job : o.jobs)
    if (seen.insert(job).second) names.push_back(job);
  for (const std::string& job : names) jobs::check_removable(p, job);
  std::uintmax_t total = 0;
  for (const std::string& job : names) {
    const std::uintmax_t bytes = jobs::remove_job(p, job, o.checkpoints);
    total += bytes;
    io.out << "removed job " << job << " (" << what_went(o.checkpoints) << ", " << diag::human_bytes(bytes) << ")\n";
  }
  if (names.size() > 1) io.out << "removed " << names.size() << " jobs, " << diag::human_bytes(total) << " freed\n";
  return kOk;
}

}  // namespace

int prune_finished_jobs(const JobOptions& o, Streams& io) {
  const jobs::Project p = jobs::load_project(o.manifest);
  std::optional<long> older;
  if (!o.older_than.empty()) older = jobs::parse_age(o.older_than, "--older-than");
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const jobs::PruneResult r = jobs::prune_jobs(p, older, o.checkpoints, static_cast<std::int64_t>(now));
  std::uintmax_t total = 0;
  for (const jobs::Pruned& j : r.removed) {
    total += j.bytes;
    io.out << "removed job " << j.job << " (" << what_went(o.checkpoints) << ", " << diag::human_bytes(j.bytes)
           << ")\n";
  }
  for (const std::string& u : r.unreadable) io.err << "envpin: note: kept " << u << "\n";
  const std::string age = older ? " finished more than " + o.older_than + " ago" : " finished";
  if (r.removed.empty())
    io.out << "no jobs" << age << " to remove in " << p.logs.generic_string() << "\n";
  else
    io.out << "pruned " << r.removed.size() << " job" << (r.removed.size() == 1 ? "" : "s") << age << ", "
           << diag::human_bytes(total) << " freed\n";
  return kOk;
}

Command rm_command() {
  return job_command("rm", "remove finished jobs' status, arguments and logs (checkpoints only with --checkpoints)",
                     remove_jobs, [](CLI::App& app, JobOptions& o) {
                       app.add_flag("--checkpoints", o.checkpoints, "remove the jobs' checkpoint directories too");
                       app.add_option("job", o.jobs, "the job ids, as 'envpin jobs --all' lists them")->required();
                     });
}

}  // namespace envpin::cli

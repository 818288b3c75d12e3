// SPDX-License-Identifier: Apache-2.0
#include "jobs/cleanup.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <tuple>

#include "diag/error.hpp"
#include "diag/text.hpp"

namespace envpin::jobs {

using diag::Error;
namespace fs = std::filesystem;

namespace {

// "<job>.nodeN" -> N's text; empty when `tag` is not a node tag of `job`.
std::string_view node_of(std::string_view tag, std::string_view job) {
  if (tag.size() <= job.size() + 5 || !tag.starts_with(job) || tag.substr(job.size(), 5) != ".node") return {};
  const std::string_view n = tag.substr(job.size() + 5);
  return diag::all_digits(n) ? n : std::string_view{};
}

// What run.sh writes for the tag (the job, or one of its other nodes): <tag>.status, .args,
// .log, .<tag>.idle-stop, and mktemp's .<tag>.status.XXXXXX / .<tag>.args.XXXXXX.
bool file_of_tag(std::string_view name, std::string_view tag) {
  for (std::string_view ext : {".status", ".args", ".log"})
    if (name.size() == tag.size() + ext.size() && name.starts_with(tag) && name.ends_with(ext)) return true;
  if (name.size() < tag.size() + 2 || name[0] != '.' || name.substr(1, tag.size()) != tag) return false;
  const std::string_view rest = name.substr(1 + tag.size());
  if (rest == ".idle-stop") return true;
  for (std::string_view tmp : {".status.", ".args."})
    if (rest.size() == tmp.size() + 6 && rest.starts_with(tmp) && diag::only_ascii(rest.substr(tmp.size()), ""))
      return true;
  return false;
}

// A node tag <job>.nodeN whose status says it is a job of its own (one named "a.node1"), not a
// node of `job`.
bool own_job(const Project& p, const std::string& tag) {
  try {
    const Status s = read_status(p.logs / (tag + ".status"));
    return field(s, "job") == tag;
  } catch (const Error&) {
    return false;
  }
}

// The bytes of the regular files at `path` (a directory's, recursively), never following a link.
std::uintmax_t size_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  if (S_ISREG(st.st_mode)) return static_cast<std::uintmax_t>(st.st_size);
  if (!S_ISDIR(st.st_mode)) return 0;
  std::uintmax_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::none, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += static_cast<std::uintmax_t>(st.st_size);
  return total;
}

// Removes `path` itself: a link or file is unlinked, a real directory removed with what it holds.
std::uintmax_t remove_path(const fs::path& path) {
  const std::uintmax_t bytes = size_of(path);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec || !fs::exists(st)) return 0;
  if (fs::is_directory(st))
    fs::remove_all(path, ec);
  else
    fs::remove(path, ec);
  if (ec)
    throw Error("cannot remove " + path.generic_string() + ": " + ec.message(), std::nullopt,
                "check the permissions of its directory");
  return bytes;
}

void check_name(std::string_view job) {
  if (job.empty()) throw Error("no job id given", std::nullopt, "name the job as 'envpin jobs' lists it");
  check_job_id(std::string(job));
}

// The checkpoint directories a job may have: <root>/<job> for the host's root and, under Slurm,
// the shared jobs.slurm.checkpoints.
std::vector<fs::path> checkpoint_dirs(const Project& p, const std::string& job) {
  std::vector<fs::path> out = {checkpoint_root(p) / job};
  if (p.m.jobs->slurm_checkpoints) out.push_back(fs::path(p.m.jobs->slurm_checkpoints->value) / job);
  return out;
}

}  // namespace

fs::path checkpoint_root(const Project& p) {
  const char* env = std::getenv("ENVPIN_CHECKPOINTS");
  const fs::path dir = env && *env ? fs::path(env) : fs::path(p.m.jobs->checkpoints_host.value);
  return (dir.is_absolute() ? dir : p.m.project_dir / dir).lexically_normal();
}

std::vector<fs::path> job_files(const Project& p, std::string_view job) {
  check_name(job);
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(p.logs, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    bool ours = file_of_tag(name, job);
    if (!ours) {
      // <job>.nodeN.* (also .<job>.nodeN.*): another node's files of the same job.
      const std::string_view bare = name.starts_with('.') ? std::string_view(name).substr(1) : std::string_view(name);
      if (bare.size() > job.size() + 5 && bare.starts_with(job) && bare.substr(job.size(), 5) == ".node") {
        const std::size_t end = bare.find('.', job.size() + 5);
        const std::string tag(bare.substr(0, end));
        ours = !node_of(tag, job).empty() && file_of_tag(name, tag) && !own_job(p, tag);
      }
    }
    if (ours) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_removable(const Project& p, std::string_view job_view) {
  const std::string job(job_view);
  const std::vector<fs::path> files = job_files(p, job);
  if (files.empty())
    throw Error("there is no job '" + job + "' (nothing of it in " + p.logs.generic_string() + ")", std::nullopt,
                "list the jobs with: envpin jobs --all");
  for (const fs::path& f : files) {
    const std::string name = f.filename().string();
    if (name.starts_with('.') || !name.ends_with(".status")) continue;
    const std::string tag = f.stem().string();
    Status s;
    try {
      s = read_status(f);
    } catch (const Error&) {
      // Unreadable (edited, a link, not a file): the engine still says whether it runs.
    }
    if (!s.empty()) {
      const Shown now = shown(p, s);
      if (active(now.state))
        throw Error("job '" + job + "' is still " + now.state +
                        (on_this_host(s) ? "" : " on " + diag::printable(field(s, "host"))) +
                        (now.reason.empty() ? "" : " (" + diag::printable(now.reason) + ")") + "; nothing was removed",
                    std::nullopt, "stop it first: envpin stop " + job);
    }
    if (const auto c = container_state(p, tag);
        c && (c->status == "running" || c->status == "paused" || c->status == "restarting"))
      throw Error("job '" + job + "' still has a " + c->status + " container (" + container_name(p, tag) +
                      "); nothing was removed",
                  std::nullopt, "stop it first: envpin stop " + job);
  }
}

std::uintmax_t remove_job(const Project& p, std::string_view job_view, bool checkpoints) {
  const std::string job(job_view);
  check_removable(p, job);
  std::uintmax_t bytes = 0;
  // The status last: a job half removed (a failed unlink) is still listed.
  std::vector<fs::path> files = job_files(p, job);
  std::stable_partition(files.begin(), files.end(), [](const fs::path& f) { return f.extension() != ".status"; });
  if (checkpoints)
    for (const fs::path& dir : checkpoint_dirs(p, job)) bytes += remove_path(dir);
  // Its container too: one whose supervisor was killed stays (exited) until someone removes it.
  remove_container(p, job);
  for (const fs::path& f : files) bytes += remove_path(f);
  return bytes;
}

long parse_age(std::string_view text, std::string_view option) {
  const auto bad = [&] {
    return Error(std::string(option) + " " + diag::quote(text, 40) + " is not an age", std::nullopt,
                 "write a number with a unit: 30m, 12h, 7d (s, m, h, d)");
  };
  if (text.size() < 2 || text.size() > 8) throw bad();
  const char unit = text.back();
  const std::string_view digits = text.substr(0, text.size() - 1);
  if (!diag::all_digits(digits)) throw bad();
  const long n = std::stol(std::string(digits));
  switch (unit) {
    case 's':
      return n;
    case 'm':
      return n * 60;
    case 'h':
      return n * 3600;
    case 'd':
      return n * 86400;
    default:
      throw bad();
  }
}

std::int64_t written_at(const fs::path& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) return 0;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec);
}

PruneResult prune_jobs(const Project& p, std::optional<long> older_than_s, bool checkpoints, std::int64_t now) {
  PruneResult out;
  std::vector<fs::path> statuses;
  std::error_code ec;
  for (auto it = fs::directory_iterator(p.logs, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with('.') && name.ends_with(".status")) statuses.push_back(it->path());
  }
  std::sort(statuses.begin(), statuses.end());
  for (const fs::path& f : statuses) {
    const std::string job = f.stem().string();
    Status s;
    try {
      check_job_id(job);
      s = read_status(f);
    } catch (const Error& e) {
      out.unreadable.push_back(diag::printable(f.filename().string()) + ": " + e.message() + " (envpin rm removes it)");
      continue;
    }
    // Another node's status goes with its job's.
    if (!field(s, "node").empty() && !field(s, "node").starts_with("0/")) continue;
    if (older_than_s && now - written_at(f) <= *older_than_s) continue;
    try {
      check_removable(p, job);
    } catch (const Error&) {
      continue;  // still running: kept
    }
    out.removed.push_back({job, remove_job(p, job, checkpoints)});
  }
  return out;
}

std::vector<std::size_t> shown_in_list(const std::vector<Listed>& jobs, std::size_t keep) {
  std::vector<std::size_t> finished, out;
  for (std::size_t i = 0; i < jobs.size(); ++i) (jobs[i].active ? out : finished).push_back(i);
  std::sort(finished.begin(), finished.end(), [&](std::size_t a, std::size_t b) {
    return jobs[a].written != jobs[b].written ? jobs[a].written > jobs[b].written : a > b;
  });
  if (finished.size() > keep) finished.resize(keep);
  out.insert(out.end(), finished.begin(), finished.end());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// The user's name as .envpin/dev.sh writes it in the container's name: `id -un` with every byte
// outside [A-Za-z0-9_.-] written '_', the uid where there is no name.
std::string dev_user() {
  const struct passwd* pw = ::getpwuid(::getuid());
  std::string n = pw && pw->pw_name ? pw->pw_name : "";
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  return n.empty() ? std::to_string(::getuid()) : n;
}

}  // namespace

std::vector<JobRow> job_rows(const Project& p) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(p.logs, ec))
    if (e.path().extension() == ".status") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<JobRow> rows;
  const ContainerSnapshot containers(p);  // asked at the first job whose supervisor is gone
  for (const fs::path& f : files) {
    JobRow row;
    row.listed = {false, written_at(f)};
    Status s;
    try {
      s = read_status(f);
    } catch (const Error& e) {
      row.job = f.stem().string();
      row.state = "unreadable";
      row.reason =
          (e.where() && e.where()->line > 0 ? "line " + std::to_string(e.where()->line) + ": " : "") + e.message();
      rows.push_back(std::move(row));
      continue;
    }
    if (!s["node"].empty() && !s["node"].starts_with("0/")) continue;
    // The directory run.sh made for this job (<checkpoints>/<job>), not any the file names.
    const bool own_dir = fs::path(s["checkpoints"]).filename() == s["job"];
    std::tie(row.last_checkpoint, row.last_checkpoint_age_s) =
        last_checkpoint(own_dir ? s["checkpoints"] : std::string(), checkpoint_patterns(p));
    const Shown now = shown(p, s, &containers);
    row.listed.active = active(now.state);
    row.job = s["job"].empty() ? f.stem().string() : s["job"];
    row.state = now.state;
    row.exit = now.exit;
    row.restarts = s["restarts"];
    row.started = s["started"];
    row.checkpoints = s["checkpoints"];
    row.log = s["log"];
    row.container = s["job"].empty() ? std::string() : container_name(p, s["job"]);
    row.reason = now.reason;
    rows.push_back(std::move(row));
  }
  // The development container of `envpin dev` (.envpin/dev.sh names it envpin-<name>-dev-<user>),
  // which has no status file: a row of its own while the engine has it.
  if (p.m.dev)
    if (const std::string id = "dev-" + dev_user(); const auto c = containers.of(id)) {
      JobRow row;
      row.job = id;
      row.state = c->status;
      row.exit = c->status == "exited" ? std::to_string(c->exit) : "-";
      row.restarts = "-";
      row.started = "-";
      row.container = "envpin-" + p.m.name.value + "-" + id;
      row.reason = "the development container of envpin dev (envpin dev --status; envpin dev --stop removes it)";
      row.listed = {true, 0};
      rows.push_back(std::move(row));
    }
  return rows;
}

}  // namespace envpin::jobs

// SPDX-License-Identifier: Apache-2.0
// Long jobs: `envpin run`, `jobs`, `logs`, `stop`, `resume`, `submit` and `resume-check`. The running itself is
// the generated .envpin/run.sh (and .envpin/job.sbatch under Slurm), so a job started by envpin
// and one started by hand behave the same; these commands check the project first (a current
// lock, current generated files, an engine) and read the state run.sh keeps in the logs
// directory: <job>.status (key=value lines), <job>.log, <job>.args.
#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/project.hpp"
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "jobs/checkpoints.hpp"
#include "jobs/resume_check.hpp"
#include "manifest/load.hpp"
#include "render/render.hpp"
#include "resolve/environment.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;
using diag::Error;
using diag::Location;

struct JobOptions {
  std::string manifest = "envpin.yaml";
  std::string job_id;
  bool detach = false;
  bool resume = false;
  bool json = false;
  bool no_follow = false;
  bool force = false;
  std::vector<std::string> command;
  // resume-check
  bool slurm = false;
  std::string kill_at = "auto";
  int kills = 1;
  std::vector<std::string> compare;
};

struct Project {
  manifest::Manifest m;
  fs::path run_script;
  fs::path sbatch_script;
  fs::path logs;
};

fs::path logs_dir(const manifest::Manifest& m) {
  const char* env = std::getenv("ENVPIN_LOGS");
  const fs::path dir = env && *env ? fs::path(env) : fs::path(m.jobs->logs.value);
  return (dir.is_absolute() ? dir : m.project_dir / dir).lexically_normal();
}

Project load(const std::string& file) {
  Project p{manifest::load(file), {}, {}, {}};
  const manifest::Manifest& m = p.m;
  if (!m.jobs)
    throw Error(m.file + " has no jobs section", Location{m.file, 0, 0},
                "add one, e.g. 'jobs: {checkpoints: /checkpoints, resume: --resume auto}', then run 'envpin generate'");
  p.run_script = m.project_dir / m.outputs.run.value;
  p.sbatch_script = m.project_dir / m.outputs.sbatch.value;
  p.logs = logs_dir(m);
  return p;
}

// Jobs run the pinned image: a lock that is current, and generated files that match it.
void require_pinned(const Project& p) {
  const manifest::Manifest& m = p.m;
  resolve::Environment env = resolve::resolve(m);
  env.lock = load_lock(m, "");
  if (!env.lock)
    throw Error("there is no envpin.lock beside " + m.file + ": jobs run the pinned image", Location{m.file, 0, 0},
                "run 'envpin lock', then 'envpin generate'");
  for (const render::Artifact& a : render::render_all(m, env)) {
    const auto current = io::read_file(m.project_dir / a.path);
    if (!current || *current != a.bytes)
      throw Error(shown_path(m.project_dir, a.path).generic_string() + " is " + (current ? "out of date" : "missing") +
                      " (it does not match " + m.file + " and envpin.lock)",
                  Location{m.file, 0, 0}, "run 'envpin generate --manifest " + m.file + "'");
  }
}

std::string container_engine() {
  const std::string engine = io::find_container_engine({"ENVPIN_ENGINE", "ENVPIN_CONTAINER_ENGINE"});
  if (!engine.empty() && engine != "none") return engine;
  throw Error("no container engine: neither docker nor podman is on PATH", std::nullopt,
              "install one of them, or name yours in ENVPIN_ENGINE");
}

void check_job_id(const std::string& id) {
  static const std::regex re(R"(^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$)");
  if (!id.empty() && !std::regex_match(id, re))
    throw Error("invalid job id '" + id + "'", std::nullopt,
                "use letters, digits, '.', '_' and '-', starting with a letter or digit");
}

std::map<std::string, std::string> read_status(const fs::path& file) {
  std::map<std::string, std::string> status;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) status[line.substr(0, eq)] = line.substr(eq + 1);
  return status;
}

std::map<std::string, std::string> job_status(const Project& p, const std::string& id) {
  check_job_id(id);
  const fs::path file = p.logs / (id + ".status");
  if (!fs::exists(file))
    throw Error("there is no job '" + id + "' (no " + file.generic_string() + ")", std::nullopt,
                "list the jobs with: envpin jobs");
  return read_status(file);
}

bool active(const std::string& state) { return state == "running" || state == "restarting"; }

std::string field(const std::map<std::string, std::string>& s, const std::string& key) {
  const auto it = s.find(key);
  return it == s.end() ? std::string() : it->second;
}

// Whether the job's supervisor ran on this machine (a Slurm job runs on a compute node).
bool on_this_host(const std::map<std::string, std::string>& s) {
  utsname u{};
  ::uname(&u);
  return field(s, "host").empty() || field(s, "host") == u.nodename;
}

// Whether the supervisor (run.sh) recorded in the status still runs; unknown (true) for another host.
bool supervisor_alive(const std::map<std::string, std::string>& s) {
  if (!on_this_host(s)) return true;
  const int pid = std::atoi(field(s, "pid").c_str());
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM)) return false;
  // A killed process lingers as a zombie until its parent (often init) reaps it: not alive.
  const auto stat = io::read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat ? stat->rfind(") ") : std::string::npos;
  return paren == std::string::npos || stat->compare(paren + 2, 1, "Z") != 0;
}

// The state to show: a job whose supervisor vanished while running is "lost".
std::string shown_state(const std::map<std::string, std::string>& s) {
  const std::string state = field(s, "state").empty() ? "?" : field(s, "state");
  return active(state) && !supervisor_alive(s) ? "lost" : state;
}

// The newest complete checkpoint in the job's checkpoint directory (its sha256 sidecar
// verified when there is one: a file cut off mid-write is not the last checkpoint), and how old.
std::pair<std::string, long> last_checkpoint(const std::string& dir) {
  if (dir.empty()) return {"", 0};
  const auto last = jobs::last_complete(dir);
  if (!last) return {"", 0};
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(fs::file_time_type::clock::now() - last->mtime);
  return {last->name, static_cast<long>(age.count())};
}

int exec_run_script(const Project& p, std::vector<std::string> args) {
  const std::string engine = container_engine();
  args.insert(args.begin(), {"sh", p.run_script.string()});
  const int rc = io::run_attached(args, {"ENVPIN_ENGINE=" + engine});
  if (rc < 0) throw Error("cannot run " + p.run_script.generic_string(), std::nullopt, "is 'sh' on PATH?");
  return rc;
}

int run_job(const JobOptions& o, Streams&) {
  const Project p = load(o.manifest);
  check_job_id(o.job_id);
  if (o.command.empty())
    throw Error("no command to run", std::nullopt, "put it after '--': envpin run -- python train.py --epochs 10");
  require_pinned(p);
  std::vector<std::string> args;
  if (!o.job_id.empty()) args.insert(args.end(), {"--job-id", o.job_id});
  if (o.detach) args.push_back("--detach");
  args.push_back("--");
  args.insert(args.end(), o.command.begin(), o.command.end());
  return exec_run_script(p, args);
}

int resume_job(const JobOptions& o, Streams&) {
  const Project p = load(o.manifest);
  const auto status = job_status(p, o.job_id);
  if (active(field(status, "state")) && supervisor_alive(status))
    throw Error("job '" + o.job_id + "' is still " + field(status, "state"), std::nullopt,
                "stop it first: envpin stop " + o.job_id);
  // A job that finished is done: resuming it would run it again over its final checkpoint.
  if (field(status, "state") == "exited" && field(status, "exit") == "0" && !o.force)
    throw Error("job '" + o.job_id + "' finished successfully (exit 0); resuming it would run it again over its "
                "final checkpoint",
                std::nullopt, "pass --force to run it again: envpin resume --force " + o.job_id);
  require_pinned(p);
  std::vector<std::string> args = {"--job-id", o.job_id, "--resume"};
  if (o.detach) args.push_back("--detach");
  return exec_run_script(p, args);
}

int list_jobs(const JobOptions& o, Streams& io) {
  const Project p = load(o.manifest);
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(p.logs, ec))
    if (e.path().extension() == ".status") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  nlohmann::json out = nlohmann::json::array();
  for (const fs::path& f : files) {
    auto s = read_status(f);
    const auto [checkpoint, age] = last_checkpoint(s["checkpoints"]);
    out.push_back({{"job", s["job"]},
                   {"state", shown_state(s)},
                   {"exit", s["exit"]},
                   {"restarts", s["restarts"]},
                   {"started", s["started"]},
                   {"last_checkpoint", checkpoint},
                   {"last_checkpoint_age_s", checkpoint.empty() ? nlohmann::json(nullptr) : nlohmann::json(age)},
                   {"checkpoints", s["checkpoints"]},
                   {"log", s["log"]},
                   {"container", s["container"]},
                   {"reason", s["reason"]}});
  }
  if (o.json) {
    io.out << out.dump(2) << "\n";
    return kOk;
  }
  if (out.empty()) {
    io.out << "no jobs in " << p.logs.generic_string() << "\n";
    return kOk;
  }
  auto cell = [](std::string s, std::size_t width) { return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' '); };
  io.out << cell("JOB", 32) << cell("STATE", 11) << cell("EXIT", 5) << cell("RESTARTS", 9) << cell("STARTED", 21)
         << "LAST CHECKPOINT\n";
  for (const auto& j : out) {
    std::string ck = j["last_checkpoint"].get<std::string>();
    if (!ck.empty()) ck += " (" + std::to_string(j["last_checkpoint_age_s"].get<long>()) + " s ago)";
    io.out << cell(j["job"], 32) << cell(j["state"], 11) << cell(j["exit"], 5) << cell(j["restarts"], 9)
           << cell(j["started"], 21) << (ck.empty() ? "-" : ck) << "\n";
    if (!j["reason"].get<std::string>().empty()) io.out << "  " << j["reason"].get<std::string>() << "\n";
  }
  return kOk;
}

int job_logs(const JobOptions& o, Streams& io) {
  const Project p = load(o.manifest);
  job_status(p, o.job_id);
  const fs::path log = p.logs / (o.job_id + ".log");
  std::ifstream in(log, std::ios::binary);
  // What the log holds beyond what was printed.
  const auto print_new = [&] {
    if (!in.is_open()) in.open(log, std::ios::binary);
    // (operator<< of an empty streambuf would set failbit on io.out: look first.)
    if (in.peek() != std::ifstream::traits_type::eof()) io.out << in.rdbuf();
    io.out.flush();
    in.clear();  // at the end of the file: clear eof/fail to read what is appended next
  };
  print_new();
  while (!o.no_follow) {
    const auto s = read_status(p.logs / (o.job_id + ".status"));
    const bool ended = !active(field(s, "state")) || !supervisor_alive(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(ended ? 0 : 200));
    print_new();  // after an end too: what was written before the state changed
    if (ended) break;
  }
  return kOk;
}

int stop_job(const JobOptions& o, Streams& io) {
  const Project p = load(o.manifest);
  auto s = job_status(p, o.job_id);
  if (!on_this_host(s))
    throw Error("job '" + o.job_id + "' runs on " + s["host"] + ", not here", std::nullopt,
                "stop it there, or with scancel when Slurm runs it");
  const int pid = std::atoi(s["pid"].c_str());
  const int timeout = p.m.jobs->stop_timeout.value + 15;
  if (active(s["state"]) && supervisor_alive(s) && pid > 0) {
    ::kill(pid, SIGTERM);
    for (int i = 0; i < timeout * 5; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      s = read_status(p.logs / (o.job_id + ".status"));
      if (!active(s["state"])) break;
    }
    if (active(s["state"]))
      throw Error("job '" + o.job_id + "' did not stop within " + std::to_string(timeout) + " s", std::nullopt,
                  "look at 'envpin logs " + o.job_id + "'; the container is " + s["container"]);
    io.out << "stopped job " << o.job_id << " (exit " << s["exit"] << "); continue it with: envpin resume " << o.job_id
           << "\n";
    return kOk;
  }
  // No supervisor (it was killed, or the job ran on another machine's Slurm): the container, if any.
  const std::string engine = s.count("engine") && !s["engine"].empty() ? s["engine"] : container_engine();
  const auto r = io::run_process({engine, "stop", "-t", std::to_string(p.m.jobs->stop_timeout.value), s["container"]});
  if (r.exit_code == 0) {
    io.out << "stopped container " << s["container"] << " of job " << o.job_id << "\n";
    return kOk;
  }
  throw Error("job '" + o.job_id + "' is not running (" + shown_state(s) + (s["exit"].empty() ? "" : ", exit " + s["exit"]) + ")",
              std::nullopt, "continue it with: envpin resume " + o.job_id);
}

std::string find_sbatch() {
  const std::string sbatch = io::find_on_path("sbatch");
  if (sbatch.empty())
    throw Error("Slurm is not reachable from here: there is no sbatch on PATH", std::nullopt,
                "install Slurm's client tools (slurm-client), or run the job on this machine with 'envpin run'");
  return sbatch;
}

// Submits .envpin/job.sbatch with the command; returns the Slurm job id.
std::string sbatch_submit(const Project& p, const std::string& sbatch, const std::string& job_id,
                          const std::vector<std::string>& command) {
  const std::string project = fs::absolute(p.m.project_dir).lexically_normal().generic_string();
  if (project.find(',') != std::string::npos)
    throw Error("the project path '" + project + "' has a comma, which sbatch --export cannot carry");
  fs::create_directories(p.logs);  // Slurm writes --output there and does not create it
  std::string exports = "ALL,ENVPIN_PROJECT_DIR=" + project;
  if (!job_id.empty()) exports += ",ENVPIN_JOB_ID=" + job_id;
  std::vector<std::string> argv = {sbatch, "--parsable", "--chdir=" + project, "--export=" + exports,
                                   fs::absolute(p.sbatch_script).lexically_normal().string()};
  argv.insert(argv.end(), command.begin(), command.end());
  const io::ProcessResult r = io::run_process(argv);
  if (r.exit_code != 0) {
    std::string why = r.err.empty() ? r.out : r.err;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    if (const auto nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);
    throw Error("Slurm did not take the job: " + why, std::nullopt,
                "check that slurmctld is up and SLURM_CONF names its slurm.conf ('scontrol ping')");
  }
  return r.out.substr(0, r.out.find_first_of(";\n"));
}

int submit_job(const JobOptions& o, Streams& io) {
  const Project p = load(o.manifest);
  check_job_id(o.job_id);
  if (o.command.empty())
    throw Error("no command to submit", std::nullopt, "put it after '--': envpin submit -- python train.py");
  require_pinned(p);
  const std::string sbatch = find_sbatch();
  if (!o.job_id.empty() && !o.resume && fs::exists(p.logs / (o.job_id + ".status")))
    throw Error("job id '" + o.job_id + "' is already in use", std::nullopt,
                "choose another --job-id, or continue that job with: envpin submit --resume --job-id " + o.job_id);
  const std::string slurm_id = sbatch_submit(p, sbatch, o.job_id, o.command);
  io.out << "submitted slurm job " << slurm_id << " as envpin job "
         << (o.job_id.empty() ? p.m.name.value + "-slurm-" + slurm_id : o.job_id) << "; output in "
         << shown_path(p.m.project_dir, p.m.jobs->logs.value).generic_string() << "/\n";
  return kOk;
}

// --- resume-check -------------------------------------------------------------------------------

// The host directory of the jobs' checkpoints, as run.sh computes it (under Slurm, as
// job.sbatch sets it: the shared jobs.slurm.checkpoints when there is one).
fs::path checkpoint_root(const Project& p, bool slurm) {
  const char* env = std::getenv("ENVPIN_CHECKPOINTS");
  const manifest::Jobs& j = *p.m.jobs;
  const fs::path dir = env && *env                      ? fs::path(env)
                       : slurm && j.slurm_checkpoints ? fs::path(j.slurm_checkpoints->value)
                                                      : fs::path(j.checkpoints_host.value);
  return (dir.is_absolute() ? dir : p.m.project_dir / dir).lexically_normal();
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

// A job of the check, on this machine (run.sh) or under Slurm (job.sbatch), watched while it runs.
class CheckRun {
 public:
  CheckRun(const Project& p, std::string id, std::string engine, std::string sbatch)
      : p_(p), id_(std::move(id)), engine_(std::move(engine)), sbatch_(std::move(sbatch)),
        watch_(checkpoint_root(p, slurm()) / id_) {}

  bool slurm() const { return !sbatch_.empty(); }
  const std::string& id() const { return id_; }
  fs::path status_file() const { return p_.logs / (id_ + ".status"); }
  fs::path log() const { return p_.logs / (id_ + ".log"); }
  fs::path checkpoints() const { return checkpoint_root(p_, slurm()) / id_; }
  jobs::CheckpointWatch& watch() { return watch_; }
  std::map<std::string, std::string> status() const { return read_status(status_file()); }
  // How an interruption is made, for the messages.
  std::string interruption() const { return slurm() ? "scontrol requeue" : "SIGKILL"; }

  // Refuses an id whose job or checkpoints exist: each run starts from an empty directory.
  void require_unused() const {
    std::error_code ec;
    if (fs::exists(status_file(), ec))
      throw Error("job id '" + id_ + "' is already in use (" + status_file().generic_string() + ")", std::nullopt,
                  "choose another --job-id for the check");
    if (fs::exists(checkpoints(), ec) && !fs::is_empty(checkpoints(), ec))
      throw Error("the checkpoint directory " + checkpoints().generic_string() + " is not empty", std::nullopt,
                  "resume-check runs each job from an empty checkpoint directory: choose another --job-id, or remove it");
  }

  // Starts it detached from envpin: run.sh --detach, or a Slurm batch job.
  void start(const std::vector<std::string>& command) {
    if (slurm()) {
      slurm_id_ = sbatch_submit(p_, sbatch_, id_, command);
      return;
    }
    std::vector<std::string> argv = {"sh", p_.run_script.string(), "--job-id", id_, "--detach", "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    run_script(argv, "start");
  }

  // Interrupts it and has it resumed the way a user's job would be: the supervisor and the
  // container SIGKILLed (the machine's session died) and `run.sh --resume` (what `envpin
  // resume` runs); under Slurm, `scontrol requeue` (job.sbatch continues it when it restarts).
  void interrupt() {
    if (slurm()) {
      const auto r = io::run_process({"scontrol", "requeue", slurm_id_});
      if (r.exit_code != 0)
        throw Error("scontrol requeue " + slurm_id_ + " failed: " + last_line(r.err.empty() ? r.out : r.err),
                    std::nullopt, "the Slurm cluster must allow requeueing (JobRequeue=1, or the job's --requeue)");
      return;
    }
    kill_hard();
    run_script({"sh", p_.run_script.string(), "--job-id", id_, "--detach", "--resume"}, "resume");
  }

  void abandon() {
    if (slurm()) io::run_process({"scancel", slurm_id_});
    else kill_hard();
  }

  bool ended() const {
    if (slurm()) return slurm_terminal(slurm_state().first);
    const auto s = status();
    return !field(s, "state").empty() && (!active(field(s, "state")) || !supervisor_alive(s));
  }

  // Empty when it finished with exit 0; else what happened.
  std::string failure() const {
    if (slurm()) {
      const auto [state, code] = slurm_state();
      return state == "COMPLETED" && code == "0:0" ? "" : "slurm job " + slurm_id_ + " " + state + " (ExitCode=" + code + ")";
    }
    const auto s = status();
    if (field(s, "state") == "exited" && field(s, "exit") == "0") return "";
    return shown_state(s) + (field(s, "exit").empty() ? "" : " with exit " + field(s, "exit")) +
           (field(s, "reason").empty() ? "" : ": " + field(s, "reason"));
  }

 private:
  void run_script(const std::vector<std::string>& argv, const std::string& what) const {
    const io::ProcessResult r = io::run_process(argv);
    if (r.exit_code != 0)
      throw Error("run.sh could not " + what + " job " + id_ + ": " + last_line(r.err), std::nullopt,
                  "see " + log().generic_string());
  }

  // The supervisor and the container SIGKILLed.
  void kill_hard() const {
    const auto s = status();
    const int pid = std::atoi(field(s, "pid").c_str());
    if (pid > 0) ::kill(pid, SIGKILL);
    io::run_process({engine_, "kill", "-s", "KILL", field(s, "container")});
    for (int i = 0; i < 150; ++i) {  // the container gone (run --rm), so a resume can reuse its name
      const auto r = io::run_process({engine_, "ps", "-q", "--filter", "name=^/?" + field(s, "container") + "$"});
      if (r.exit_code != 0 || r.out.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // JobState and ExitCode from `scontrol show job`.
  std::pair<std::string, std::string> slurm_state() const {
    const auto r = io::run_process({"scontrol", "-o", "show", "job", slurm_id_});
    const auto value = [&](const std::string& key) {
      const auto at = r.out.find(" " + key + "=");
      if (at == std::string::npos) return std::string();
      const auto from = at + key.size() + 2;
      return r.out.substr(from, r.out.find_first_of(" \n", from) - from);
    };
    return {value("JobState"), value("ExitCode")};
  }

  static bool slurm_terminal(const std::string& state) {
    for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"})
      if (state == s) return true;
    return false;
  }

  const Project& p_;
  std::string id_;
  std::string engine_;
  std::string sbatch_;
  std::string slurm_id_;
  jobs::CheckpointWatch watch_;
};

// One run, watched to its end: interrupted and resumed at `kill_at` until `kills` interruptions
// were made (none for a reference run). Throws diag::Error when it cannot be judged.
struct Watched {
  jobs::RunRecord record;
  std::vector<jobs::KillPoint> kills;
};

Watched watch_run(const Project& p, CheckRun& run, const JobOptions& o, const jobs::KillAt& kill_at, int kills_wanted,
                  double limit, const std::vector<jobs::CompareItem>& items, Streams& io) {
  const auto start = Clock::now();
  std::vector<jobs::KillPoint> kills;
  run.start(o.command);
  auto segment = Clock::now();
  bool segment_checkpoint = false;
  std::uintmax_t log_offset = 0;
  std::string log_tail;
  const auto give_up = [&](const std::string& why, const std::string& hint) {
    run.abandon();
    throw Error(why, std::nullopt, hint);
  };
  while (!run.ended()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!run.watch().poll().empty()) segment_checkpoint = true;
    if (limit > 0 && seconds_since(start) > limit)
      give_up("job " + run.id() + " ran " + std::to_string(static_cast<int>(limit)) + " s, ten times the uninterrupted "
              "run: it does not finish after a resume",
              "see " + run.log().generic_string());
    if (static_cast<int>(kills.size()) >= kills_wanted) continue;
    bool now = false;
    switch (kill_at.kind) {
      case jobs::KillAt::Kind::automatic:
        now = segment_checkpoint;
        break;
      case jobs::KillAt::Kind::seconds:
        now = seconds_since(segment) >= kill_at.seconds;
        break;
      case jobs::KillAt::Kind::pattern: {
        std::ifstream in(run.log(), std::ios::binary);
        in.seekg(static_cast<std::streamoff>(log_offset));
        std::string more((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        log_offset += more.size();
        log_tail += more;
        now = log_tail.find(kill_at.pattern) != std::string::npos;
        if (const auto nl = log_tail.rfind('\n'); nl != std::string::npos) log_tail.erase(0, nl + 1);
        break;
      }
    }
    if (!now) continue;
    run.watch().poll();
    if (!segment_checkpoint)
      give_up("no checkpoint was written before kill " + std::to_string(kills.size() + 1) + " (" +
                  std::to_string(static_cast<int>(seconds_since(segment))) + " s after the " +
                  (kills.empty() ? "start" : "resume") + "): there is nothing to resume from",
              "raise --kill-at or checkpoint more often");
    run.interrupt();
    const auto& done = run.watch().completed();
    kills.push_back({seconds_since(start), done.empty() ? "" : done.back().first, done.size()});
    io.err << "envpin resume-check: kill " << kills.size() << " (" << run.interruption() << ") at "
           << static_cast<int>(kills.back().seconds) << " s"
           << (kills.back().newest.empty() ? "" : ", newest checkpoint " + kills.back().newest) << "; resuming\n";
    std::error_code ec;
    log_offset = fs::file_size(run.log(), ec);
    log_tail.clear();
    segment = Clock::now();
    segment_checkpoint = false;
  }
  run.watch().poll();
  if (const std::string why = run.failure(); !why.empty())
    throw Error("job " + run.id() + " ended " + why, std::nullopt,
                "see " + run.log().generic_string() + (kills.empty() ? "" : "; a resume that cannot load its checkpoint fails here"));
  if (static_cast<int>(kills.size()) < kills_wanted)
    throw Error("the interrupted run finished after " + std::to_string(kills.size()) + " of " + std::to_string(kills_wanted) +
                    " kills: " + (kill_at.kind == jobs::KillAt::Kind::pattern ? "the text never appeared in the log again"
                                                                               : "it wrote no new checkpoint in time"),
                std::nullopt, "ask for fewer --kills, an earlier --kill-at, or checkpoint more often");
  return {{run.id(), jobs::collect_outputs(items, p.m.project_dir, run.checkpoints(), run.log()), run.watch().completed(),
           seconds_since(start)},
          kills};
}

// An uninterrupted run. On this machine in the foreground (its output shown), its checkpoints
// watched meanwhile; under Slurm, submitted and watched like the interrupted one.
jobs::RunRecord run_uninterrupted(const Project& p, CheckRun& run, const JobOptions& o,
                                  const std::vector<jobs::CompareItem>& items, Streams& io) {
  run.require_unused();
  io.err << "envpin resume-check: uninterrupted run, job " << run.id() << "\n";
  if (run.slurm()) return watch_run(p, run, o, {}, 0, 0, items, io).record;
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done) {
      run.watch().poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const auto start = Clock::now();
  std::vector<std::string> args = {"--job-id", run.id(), "--"};
  args.insert(args.end(), o.command.begin(), o.command.end());
  // The job's output (and the image build) is progress: it goes to stderr, so stdout carries
  // the verdict alone.
  io.out.flush();
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  const auto restore = [&] {
    if (saved >= 0) {
      ::dup2(saved, STDOUT_FILENO);
      ::close(saved);
    }
  };
  int rc = -1;
  try {
    rc = exec_run_script(p, args);
  } catch (...) {
    restore();
    done = true;
    watcher.join();
    throw;
  }
  restore();
  done = true;
  watcher.join();
  run.watch().poll();
  if (rc != 0)
    throw Error("the uninterrupted run (job " + run.id() + ") failed with exit " + std::to_string(rc) +
                    ": resume cannot be checked on a run that does not finish",
                std::nullopt, "see " + run.log().generic_string());
  return {run.id(), jobs::collect_outputs(items, p.m.project_dir, run.checkpoints(), run.log()), run.watch().completed(),
          seconds_since(start)};
}

int resume_check_job(const JobOptions& o, Streams& io) {
  try {
    const Project p = load(o.manifest);
    check_job_id(o.job_id);
    if (o.command.empty())
      throw Error("no command to check", std::nullopt, "put it after '--': envpin resume-check -- python train.py");
    if (o.kills < 1 || o.kills > 20)
      throw Error("--kills " + std::to_string(o.kills) + " is out of range", std::nullopt, "kill 1 to 20 times");
    const jobs::KillAt kill_at = jobs::parse_kill_at(o.kill_at);
    std::vector<jobs::CompareItem> items;
    for (const std::string& c : o.compare) items.push_back(jobs::parse_compare(c));
    require_pinned(p);
    const std::string sbatch = o.slurm ? find_sbatch() : std::string();
    const std::string engine = o.slurm ? std::string() : container_engine();
    if (!engine.empty()) ::setenv("ENVPIN_ENGINE", engine.c_str(), 1);
    if (!fs::is_directory(checkpoint_root(p, o.slurm)))
      throw Error("the checkpoint directory " + checkpoint_root(p, o.slurm).generic_string() + " does not exist",
                  std::nullopt, "create it on persistent storage, or point ENVPIN_CHECKPOINTS at one");
    std::string base = o.job_id;
    if (base.empty()) {
      const std::time_t now = std::time(nullptr);
      char stamp[32];
      std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::gmtime(&now));
      base = p.m.name.value + "-rc-" + stamp;
    }
    check_job_id(base + "-ref2");
    CheckRun ref_run(p, base + "-ref", engine, sbatch), killed_run(p, base + "-kill", engine, sbatch),
        ref2_run(p, base + "-ref2", engine, sbatch);
    for (const CheckRun* r : {&ref_run, &killed_run, &ref2_run}) r->require_unused();

    const jobs::RunRecord ref = run_uninterrupted(p, ref_run, o, items, io);
    io.err << "envpin resume-check: interrupted run, job " << killed_run.id() << " (" << o.kills << " "
           << killed_run.interruption() << (o.kills == 1 ? "" : "s") << ", --kill-at " << o.kill_at << ")\n";
    // A requeued Slurm job waits for its credential to expire (120 s on a default cluster).
    const double limit = std::max(120.0, 10 * ref.seconds) + (o.slurm ? 180.0 * o.kills : 0.0);
    const Watched killed = watch_run(p, killed_run, o, kill_at, o.kills, limit, items, io);
    // Different: a second uninterrupted run tells non-determinism from a wrong resume.
    std::optional<jobs::RunRecord> ref2;
    if (ref.outputs != killed.record.outputs) ref2 = run_uninterrupted(p, ref2_run, o, items, io);
    const jobs::Verdict v = jobs::judge(ref, killed.record, killed.kills, ref2);
    for (const std::string& line : v.lines) io.out << line << "\n";
    io.out << "runs: " << ref.job << " " << static_cast<int>(ref.seconds) << " s, " << killed.record.job << " "
           << static_cast<int>(killed.record.seconds) << " s"
           << (ref2 ? ", " + ref2->job + " " + std::to_string(static_cast<int>(ref2->seconds)) + " s" : "") << "; logs in "
           << shown_path(p.m.project_dir, p.logs).generic_string() << "/\n";
    return v.exit_code;
  } catch (const Error& e) {
    io.err << diag::format(e);
    return 2;
  }
}

using Action = int (*)(const JobOptions&, Streams&);

// Every job command reads the manifest (-f) and its own options into one JobOptions.
Command job_command(const char* name, const char* summary, Action action,
                    std::function<void(CLI::App&, JobOptions&)> options) {
  return {name, summary, [action, options](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<JobOptions>();
            app.add_option("-f,--manifest", o->manifest, "the manifest to read")->capture_default_str();
            options(app, *o);
            return [o, action](Streams& io) { return action(*o, io); };
          }};
}

void job_argument(CLI::App& app, JobOptions& o) { app.add_option("job", o.job_id, "the job id")->required(); }

}  // namespace

Command run_command() {
  return job_command("run", "run a command as a job in the pinned image (checkpoints, logs, restarts); see .envpin/run.sh",
                     run_job, [](CLI::App& app, JobOptions& o) {
                       app.add_option("--job-id", o.job_id, "the job's id (default: <name>-<UTC time>-<pid>); must be unused");
                       app.add_flag("-d,--detach", o.detach, "run in its own session, immune to the terminal; print the id");
                       app.add_option("command", o.command, "the command, after --")->required();
                     });
}

Command jobs_command() {
  return job_command("jobs", "list the jobs with state, exit code, restarts, start time and last checkpoint", list_jobs,
                     [](CLI::App& app, JobOptions& o) { app.add_flag("--json", o.json, "print JSON"); });
}

Command logs_command() {
  return job_command("logs", "print a job's log, following it while the job runs", job_logs,
                     [](CLI::App& app, JobOptions& o) {
                       app.add_flag("--no-follow", o.no_follow, "print what is there and return");
                       job_argument(app, o);
                     });
}

Command stop_command() {
  return job_command("stop", "stop a job: SIGTERM to its container, SIGKILL after jobs.stop_timeout; no restart",
                     stop_job, job_argument);
}

Command resume_command() {
  return job_command("resume", "start a stopped or failed job again: same command and volumes, plus jobs.resume",
                     resume_job, [](CLI::App& app, JobOptions& o) {
                       app.add_flag("-d,--detach", o.detach, "run in its own session, immune to the terminal");
                       app.add_flag("--force", o.force, "resume even a job that finished successfully (exit 0)");
                       job_argument(app, o);
                     });
}

Command resume_check_command() {
  return job_command("resume-check",
                     "run a command as a job twice, once killed and resumed, and say whether the results are identical",
                     resume_check_job, [](CLI::App& app, JobOptions& o) {
                       app.add_option("--job-id", o.job_id, "the check's id: its jobs are ID-ref, ID-kill (and ID-ref2)");
                       app.add_option("--kill-at", o.kill_at,
                                      "auto (after each new checkpoint), SECONDS after each (re)start, or a text the "
                                      "job prints")
                           ->capture_default_str();
                       app.add_option("--kills", o.kills, "how many times to kill and resume")->capture_default_str();
                       app.add_flag("--slurm", o.slurm,
                                    "run the jobs under Slurm (job.sbatch); interrupt with scontrol requeue");
                       // One value per --compare: with CLI11 2.1 a vector option that takes extra
                       // arguments makes the '--' before the command end its values, and the
                       // command's own options ("sh -c") are then parsed as envpin's.
                       app.add_option("--compare", o.compare,
                                      "what to compare after each run: a project path, or line:PREFIX (default: the "
                                      "final checkpoints); repeatable")
                           ->allow_extra_args(false);
                       app.add_option("command", o.command, "the command, after --")->required();
                     });
}

Command submit_command() {
  return job_command("submit", "submit a command as a Slurm job (.envpin/job.sbatch) with sbatch", submit_job,
                     [](CLI::App& app, JobOptions& o) {
                       app.add_option("--job-id", o.job_id, "the envpin job id (default: <name>-slurm-<slurm job id>)");
                       app.add_flag("--resume", o.resume, "continue the job with this --job-id from its checkpoints");
                       app.add_option("command", o.command, "the command, after --")->required();
                     });
}

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
// Long jobs: `envpin run`, `jobs`, `logs`, `stop`, `resume` and `submit`. The running itself is
// the generated .envpin/run.sh (and .envpin/job.sbatch under Slurm), so a job started by envpin
// and one started by hand behave the same; these commands check the project first (a current
// lock, current generated files, an engine) and read the state run.sh keeps in the logs
// directory: <job>.status (key=value lines), <job>.log, <job>.args.
#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
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

// The newest file under the job's checkpoint directory, and how old it is.
std::pair<std::string, long> last_checkpoint(const std::string& dir) {
  std::error_code ec;
  fs::path newest;
  fs::file_time_type newest_time{};
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const auto t = it->last_write_time(ec);
    if (newest.empty() || t > newest_time) {
      newest = it->path();
      newest_time = t;
    }
  }
  if (newest.empty()) return {"", 0};
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(fs::file_time_type::clock::now() - newest_time);
  return {newest.lexically_relative(dir).generic_string(), static_cast<long>(age.count())};
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

int submit_job(const JobOptions& o, Streams& io) {
  const Project p = load(o.manifest);
  check_job_id(o.job_id);
  if (o.command.empty())
    throw Error("no command to submit", std::nullopt, "put it after '--': envpin submit -- python train.py");
  require_pinned(p);
  const std::string sbatch = io::find_on_path("sbatch");
  if (sbatch.empty())
    throw Error("Slurm is not reachable from here: there is no sbatch on PATH", std::nullopt,
                "install Slurm's client tools (slurm-client), or run the job on this machine with 'envpin run'");
  if (!o.job_id.empty() && !o.resume && fs::exists(p.logs / (o.job_id + ".status")))
    throw Error("job id '" + o.job_id + "' is already in use", std::nullopt,
                "choose another --job-id, or continue that job with: envpin submit --resume --job-id " + o.job_id);
  const std::string project = fs::absolute(p.m.project_dir).lexically_normal().generic_string();
  if (project.find(',') != std::string::npos)
    throw Error("the project path '" + project + "' has a comma, which sbatch --export cannot carry");
  fs::create_directories(p.logs);  // Slurm writes --output there and does not create it
  std::string exports = "ALL,ENVPIN_PROJECT_DIR=" + project;
  if (!o.job_id.empty()) exports += ",ENVPIN_JOB_ID=" + o.job_id;
  std::vector<std::string> argv = {sbatch, "--parsable", "--chdir=" + project, "--export=" + exports,
                                   fs::absolute(p.sbatch_script).lexically_normal().string()};
  argv.insert(argv.end(), o.command.begin(), o.command.end());
  const io::ProcessResult r = io::run_process(argv);
  if (r.exit_code != 0) {
    std::string why = r.err.empty() ? r.out : r.err;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    if (const auto nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);
    throw Error("Slurm did not take the job: " + why, std::nullopt,
                "check that slurmctld is up and SLURM_CONF names its slurm.conf ('scontrol ping')");
  }
  const std::string slurm_id = r.out.substr(0, r.out.find_first_of(";\n"));
  io.out << "submitted slurm job " << slurm_id << " as envpin job "
         << (o.job_id.empty() ? p.m.name.value + "-slurm-" + slurm_id : o.job_id) << "; output in "
         << shown_path(p.m.project_dir, p.m.jobs->logs.value).generic_string() << "/\n";
  return kOk;
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

Command submit_command() {
  return job_command("submit", "submit a command as a Slurm job (.envpin/job.sbatch) with sbatch", submit_job,
                     [](CLI::App& app, JobOptions& o) {
                       app.add_option("--job-id", o.job_id, "the envpin job id (default: <name>-slurm-<slurm job id>)");
                       app.add_flag("--resume", o.resume, "continue the job with this --job-id from its checkpoints");
                       app.add_option("command", o.command, "the command, after --")->required();
                     });
}

}  // namespace envpin::cli

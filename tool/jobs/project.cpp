// SPDX-License-Identifier: Apache-2.0
#include "jobs/project.hpp"

#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "jobs/checkpoints.hpp"
#include "manifest/load.hpp"

namespace envpin::jobs {

using diag::Error;
using diag::Location;
namespace fs = std::filesystem;

namespace {

fs::path logs_dir(const manifest::Manifest& m) {
  const char* env = std::getenv("ENVPIN_LOGS");
  const fs::path dir = env && *env ? fs::path(env) : fs::path(m.jobs->logs.value);
  return (dir.is_absolute() ? dir : m.project_dir / dir).lexically_normal();
}

}  // namespace

Project load_project(const std::string& file) {
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

std::string container_engine() {
  const std::string engine = io::find_container_engine({"ENVPIN_ENGINE", "ENVPIN_CONTAINER_ENGINE"});
  if (!engine.empty() && engine != "none") return engine;
  throw Error("no container engine: neither docker nor podman is on PATH", std::nullopt,
              "install one of them, or name yours in ENVPIN_ENGINE");
}

void check_job_id(const std::string& id) {
  if (!id.empty() && (id.size() > 100 || !diag::only_ascii(id, "_.-") || !diag::only_ascii(id.substr(0, 1), "")))
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

bool on_this_host(const std::map<std::string, std::string>& s) {
  utsname u{};
  ::uname(&u);
  return field(s, "host").empty() || field(s, "host") == u.nodename;
}

bool supervisor_alive(const std::map<std::string, std::string>& s) {
  if (!on_this_host(s)) return true;
  const int pid = std::atoi(field(s, "pid").c_str());
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM)) return false;
  // A killed process lingers as a zombie until its parent (often init) reaps it: not alive.
  const auto stat = io::read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat ? stat->rfind(") ") : std::string::npos;
  return paren == std::string::npos || stat->compare(paren + 2, 1, "Z") != 0;
}

std::string shown_state(const std::map<std::string, std::string>& s) {
  const std::string state = field(s, "state").empty() ? "?" : field(s, "state");
  return active(state) && !supervisor_alive(s) ? "lost" : state;
}

std::pair<std::string, long> last_checkpoint(const std::string& dir) {
  if (dir.empty()) return {"", 0};
  const auto last = last_complete(dir);
  if (!last) return {"", 0};
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(fs::file_time_type::clock::now() - last->mtime);
  return {last->name, static_cast<long>(age.count())};
}

std::map<std::string, std::string> stop_supervisor(const Project& p, const std::string& id, int timeout_s) {
  auto s = job_status(p, id);
  const int pid = std::atoi(field(s, "pid").c_str());
  if (pid > 0) ::kill(pid, SIGTERM);
  for (int i = 0; i < timeout_s * 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    s = read_status(p.logs / (id + ".status"));
    if (!active(field(s, "state"))) return s;
  }
  throw Error("job '" + id + "' did not stop within " + std::to_string(timeout_s) + " s", std::nullopt,
              "look at 'envpin logs " + id + "'; the container is " + field(s, "container"));
}

int exec_run_script(const Project& p, std::vector<std::string> args) {
  const std::string engine = container_engine();
  args.insert(args.begin(), {"sh", p.run_script.string()});
  const int rc = io::run_attached(args, {"ENVPIN_ENGINE=" + engine});
  if (rc < 0) throw Error("cannot run " + p.run_script.generic_string(), std::nullopt, "is 'sh' on PATH?");
  return rc;
}

std::string find_sbatch() {
  const std::string sbatch = io::find_on_path("sbatch");
  if (sbatch.empty())
    throw Error("Slurm is not reachable from here: there is no sbatch on PATH", std::nullopt,
                "install Slurm's client tools (slurm-client), or run the job on this machine with 'envpin run'");
  return sbatch;
}

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

}  // namespace envpin::jobs

// SPDX-License-Identifier: Apache-2.0
#include "jobs/project.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "io/state_dir.hpp"
#include "jobs/checkpoints.hpp"
#include "jobs/slurm_rest.hpp"
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
  Project p{manifest::load(file), {}, {}, {}, {}};
  const manifest::Manifest& m = p.m;
  if (!m.jobs)
    throw Error(m.file + " has no jobs section", Location{m.file, 0, 0},
                "add one, e.g. 'jobs: {checkpoints: /checkpoints, resume: --resume auto}', then run 'envpin generate'");
  p.run_script = m.project_dir / m.outputs.run.value;
  p.sbatch_script = m.project_dir / m.outputs.sbatch.value;
  p.logs = logs_dir(m);
  p.held_run_script = io::project_state(m.project_dir) / "run.sh";
  return p;
}

void podman_session() {
  // As run.sh's podman_session: an inherited XDG_RUNTIME_DIR that is not this user's writable
  // directory (a Slurm job's, su's) makes rootless podman fail; without it podman uses its own.
  const char* dir = std::getenv("XDG_RUNTIME_DIR");
  if (!dir || !*dir) return;
  struct stat st {};
  if (::stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || ::access(dir, W_OK) != 0)
    ::unsetenv("XDG_RUNTIME_DIR");
}

std::string container_engine() {
  // As run.sh chooses it (templates/lib/run.sh, choose_engine): ENVPIN_CONTAINER_ENGINE is the
  // lock's (resolve/pins.cpp), never the jobs'.
  const std::string engine = io::find_container_engine({"ENVPIN_ENGINE"});
  if (engine == "podman") podman_session();
  if (!engine.empty() && engine != "none") return engine;
  throw Error("no container engine: neither docker nor podman is on PATH", std::nullopt,
              "install one of them, or name yours in ENVPIN_ENGINE");
}

void check_job_id(const std::string& id) {
  if (!id.empty() && (id.size() > 100 || !diag::only_ascii(id, "_.-") || !diag::only_ascii(id.substr(0, 1), "")))
    throw Error("invalid job id '" + id + "'", std::nullopt,
                "use letters, digits, '.', '_' and '-', starting with a letter or digit");
}

namespace {

// One value's rule: which bytes it may hold and how long it may be.
struct StatusKey {
  const char* name;
  std::size_t max;
  bool (*ok)(std::string_view);
};

bool digits_or_empty(std::string_view v) { return v.empty() || diag::all_digits(v); }
bool text(std::string_view) { return true; }  // printable: checked for every value
bool word(std::string_view v) { return diag::only_ascii(v, "._-"); }
// A job id as check_job_id takes it: what run.sh accepts for --job-id.
bool job_id(std::string_view v) {
  return !v.empty() && v.size() <= 100 && diag::only_ascii(v, "._-") && diag::only_ascii(v.substr(0, 1), "");
}
bool image_ref(std::string_view v) { return diag::only_ascii(v, "._-/:@+"); }
bool engine_path(std::string_view v) { return diag::only_ascii(v, "._-/+"); }
bool timestamp(std::string_view v) { return v.find_first_not_of("0123456789-:TZ") == std::string_view::npos; }
bool state_name(std::string_view v) {
  return v == "running" || v == "restarting" || v == "exited" || v == "failed" || v == "stopped";
}
bool node_of(std::string_view v) {
  const auto slash = v.find('/');
  return slash != std::string_view::npos && diag::all_digits(v.substr(0, slash)) &&
         diag::all_digits(v.substr(slash + 1));
}
bool absolute_path(std::string_view v) { return v.empty() || v.front() == '/'; }

// The keys .envpin/run.sh writes (templates/run.sh.mustache, write_status), and nothing else.
constexpr StatusKey kStatusKeys[] = {
    {"job", 100, job_id},
    {"state", 16, state_name},
    {"exit", 3, digits_or_empty},
    {"restarts", 9, diag::all_digits},
    {"max_restarts", 9, diag::all_digits},
    {"started", 32, timestamp},
    {"pid", 10, digits_or_empty},
    {"pid_start", 20, digits_or_empty},
    {"host", 255, word},
    {"engine", 4096, engine_path},
    {"container", 300, word},
    {"image", 1024, image_ref},
    {"checkpoints", 4096, absolute_path},
    {"node", 21, node_of},
    {"slurm_job", 12, diag::all_digits},
    {"log", 4096, absolute_path},
    {"reason", 4096, text},
};

constexpr std::uintmax_t kMaxStatus = 64 * 1024;

Error status_error(const fs::path& file, int line, std::size_t column, const std::string& what) {
  return Error(what, Location{file.generic_string(), line, static_cast<int>(column)},
               "the file is not as run.sh writes it (edited by hand?): remove it, or restore it from the job's run");
}

}  // namespace

Status parse_status(const std::string& content, const fs::path& file) {
  Status status;
  std::size_t begin = 0;
  int line = 0;
  while (begin < content.size()) {
    ++line;
    const std::size_t eol = content.find('\n', begin);
    const std::string_view row =
        std::string_view(content).substr(begin, eol == std::string::npos ? std::string::npos : eol - begin);
    begin = eol == std::string::npos ? content.size() : eol + 1;
    const std::size_t eq = row.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw status_error(file, line, 1, "a line of the job's status is not key=value");
    const std::string key(row.substr(0, eq));
    const std::string_view value = row.substr(eq + 1);
    const StatusKey* rule = nullptr;
    for (const StatusKey& k : kStatusKeys)
      if (key == k.name) rule = &k;
    if (!rule) throw status_error(file, line, 1, diag::quote(key, 40) + " is not a key of a job's status");
    if (status.count(key)) throw status_error(file, line, 1, "'" + key + "' appears twice in the job's status");
    if (const std::size_t bad = diag::invalid_utf8_at(value); bad != std::string_view::npos)
      throw status_error(file, line, eq + 2 + bad,
                         "'" + key + "' holds " + diag::describe_char_at(value, bad) + ", which is not UTF-8");
    if (const std::size_t bad = diag::control_at(value); bad != std::string_view::npos)
      throw status_error(file, line, eq + 2 + bad, "'" + key + "' holds " + diag::describe_char_at(value, bad));
    if (value.size() > rule->max || !rule->ok(value))
      throw status_error(file, line, eq + 2,
                         "'" + key + "' is " + diag::quote(value, 60) + ", not a value run.sh writes");
    status.emplace(key, std::string(value));
  }
  // <job>.status or <job>.nodeN.status: the job it names is the file's own.
  const std::string stem = file.stem().string();
  const std::string job = field(status, "job");
  if (!job.empty() && job != stem &&
      !(stem.starts_with(job + ".node") && diag::all_digits(std::string_view(stem).substr(job.size() + 5))))
    throw status_error(file, 1, 1, "the status names job " + diag::quote(job, 60) + ", not " + diag::quote(stem, 60));
  return status;
}

Status read_status(const fs::path& file) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);  // run.sh never writes a symlink
  if (!fs::exists(st)) return {};
  if (!fs::is_regular_file(st) || fs::file_size(file, ec) > kMaxStatus)
    throw status_error(file, 0, 0, "the job's status is not a regular file of at most 64 KiB");
  const auto content = io::read_file(file);
  return content ? parse_status(*content, file) : Status{};
}

Status job_status(const Project& p, const std::string& id) {
  check_job_id(id);
  const fs::path file = p.logs / (id + ".status");
  if (!fs::exists(file))
    throw Error("there is no job '" + id + "' (no " + file.generic_string() + ")", std::nullopt,
                "list the jobs with: envpin jobs");
  return read_status(file);
}

bool active(const std::string& state) { return state == "running" || state == "restarting"; }

std::string field(const Status& s, const std::string& key) {
  const auto it = s.find(key);
  return it == s.end() ? std::string() : it->second;
}

bool on_this_host(const Status& s) {
  utsname u{};
  ::uname(&u);
  return field(s, "host").empty() || field(s, "host") == u.nodename;
}

std::string process_start(int pid) {
  if (pid <= 0) return "";
  std::optional<std::string> stat;
  try {
    stat = io::read_file("/proc/" + std::to_string(pid) + "/stat");
  } catch (const Error&) {
    return "";
  }
  const auto paren = stat ? stat->rfind(") ") : std::string::npos;
  if (paren == std::string::npos) return "";
  // After the command's name: state (field 3) ... starttime (field 22).
  std::istringstream in(stat->substr(paren + 2));
  std::vector<std::string> fields;
  for (std::string w; fields.size() < 20 && in >> w;) fields.push_back(w);
  if (fields.size() < 20 || fields[0] == "Z" || fields[0] == "X") return "";
  return fields[19];
}

std::vector<std::string> process_args(int pid, std::size_t most) {
  std::optional<std::string> cmdline;
  try {
    cmdline = io::read_file("/proc/" + std::to_string(pid) + "/cmdline");
  } catch (const Error&) {
    return {};
  }
  std::vector<std::string> argv;
  for (std::size_t at = 0; cmdline && at < cmdline->size() && argv.size() < most;) {
    const std::size_t end = std::min(cmdline->find('\0', at), cmdline->size());
    argv.push_back(cmdline->substr(at, end - at));
    at = end + 1;
  }
  return argv;
}

bool is_supervisor(const Project& p, int pid, const std::string& start) {
  if (pid <= 1 || start.empty() || process_start(pid) != start) return false;
  const std::string proc = "/proc/" + std::to_string(pid);
  std::vector<std::string> argv = process_args(pid, 4);
  // Mid-execve (`sh` becoming `setsid`, `setsid` becoming `sh`) the same process shows an empty
  // command line for a moment: looked at again, not taken for gone (resume-check saw a job it had
  // just started as lost, on a loaded machine, before its first attempt).
  for (int i = 0; i < 50 && argv.empty() && process_start(pid) == start; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    argv = process_args(pid, 4);
  }
  // `run.sh --detach` starts it as `setsid sh run.sh ...` (or nohup): until setsid has executed
  // sh, the process (same pid, same start) is setsid with sh and the script as its arguments.
  while (!argv.empty() && (fs::path(argv[0]).filename() == "setsid" || fs::path(argv[0]).filename() == "nohup"))
    argv.erase(argv.begin());
  if (argv.size() < 2 || argv[1].empty()) return false;
  std::error_code ec;
  fs::path script = argv[1];
  if (script.is_relative()) {
    const fs::path cwd = fs::read_symlink(proc + "/cwd", ec);
    if (ec) return false;
    script = cwd / script;
  }
  // The held copy envpin runs, or the tree's run.sh a user started by hand.
  script = fs::weakly_canonical(script, ec);
  if (ec) return false;
  if (script != fs::weakly_canonical(fs::absolute(p.held_run_script, ec), ec) &&
      script != fs::weakly_canonical(fs::absolute(p.run_script, ec), ec))
    return false;
  return process_start(pid) == start;  // still the same process after the look at it
}

bool supervisor_alive(const Project& p, const Status& s) {
  if (!on_this_host(s)) return true;
  const std::string pid = field(s, "pid");
  return !pid.empty() && pid.size() <= 9 && is_supervisor(p, std::stoi(pid), field(s, "pid_start"));
}

std::optional<ContainerState> container_state(const Project& p, const std::string& id) {
  std::string engine;
  try {
    engine = container_engine();
    check_job_id(id);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (engine == "ch-run") return ch_container_state(p, id);
  const auto r = io::run_process(
      {engine, "container", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", container_name(p, id)});
  if (r.exit_code != 0) return std::nullopt;
  // "<status> <code>": the engine's answer is data too; anything else is no answer.
  std::istringstream in(r.out);
  ContainerState c;
  std::string code, rest;
  if (!(in >> c.status >> code) || (in >> rest) || c.status.size() > 16 || code.size() > 4 ||
      !diag::only_ascii(c.status, "") || code.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  c.exit = std::stoi(code);
  return c;
}

ContainerSnapshot::ContainerSnapshot(const Project& p) : p_(p) {}

const std::map<std::string, ContainerState>* ContainerSnapshot::all() const {
  if (asked_) return answered_ ? &containers_ : nullptr;
  asked_ = true;
  std::string engine;
  try {
    engine = container_engine();
  } catch (const Error&) {
    return nullptr;
  }
  if (engine == "ch-run") return nullptr;
  const std::string prefix = "envpin-" + p_.m.name.value + "-";
  // .Status, which docker and podman write alike: "Up 2 hours" (running; "(Paused)" after it on
  // docker, "Paused" alone on podman), "Exited (137) 5 seconds ago", "Restarting (1) ...",
  // "Created". (.State is the word inspect gives on docker, but podman 4 writes "Up 2 seconds
  // ago" there too; neither has the exit code elsewhere.)
  const auto r = io::run_process(
      {engine, "ps", "-a", "--no-trunc", "--filter", "name=" + prefix, "--format", "{{.Names}}|{{.Status}}"});
  if (r.exit_code != 0) return nullptr;
  answered_ = true;
  const auto code_in = [](const std::string& status) -> std::optional<int> {
    const auto open = status.find('('), close = status.find(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
    const std::string code = status.substr(open + 1, close - open - 1);
    if (code.empty() || code.size() > 4 || code.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    return std::stoi(code);
  };
  std::istringstream in(r.out);
  int lines = 0;
  for (std::string line; std::getline(in, line) && ++lines <= 100000;) {
    const auto bar = line.find('|');
    if (bar == std::string::npos) continue;
    const std::string name = line.substr(0, bar), status = line.substr(bar + 1);
    if (!name.starts_with(prefix) || status.size() > 200 || !diag::only_ascii(status, " ()-.,:")) continue;
    std::optional<ContainerState> c;
    if (status.starts_with("Up ") || status == "Up")
      c = ContainerState{status.find("(Paused)") == std::string::npos ? "running" : "paused", 0};
    else if (status.starts_with("Paused"))
      c = ContainerState{"paused", 0};
    else if (status.starts_with("Restarting"))
      c = ContainerState{"restarting", 0};
    else if (status.starts_with("Exited ("))
      if (const auto code = code_in(status)) c = ContainerState{"exited", *code};
    if (!c && status == "Created") c = ContainerState{"created", 0};
    if (c) containers_[name] = *c;
  }
  return &containers_;
}

std::optional<ContainerState> ContainerSnapshot::of(const std::string& id) const {
  try {
    if (container_engine() == "ch-run") return ch_container_state(p_, id);
    check_job_id(id);
  } catch (const Error&) {
    return std::nullopt;
  }
  const auto* containers = all();
  if (!containers) return std::nullopt;
  const auto it = containers->find(container_name(p_, id));
  if (it == containers->end()) return std::nullopt;
  return it->second;
}

bool remove_container(const Project& p, const std::string& id) {
  std::string engine;
  try {
    engine = container_engine();
  } catch (const Error&) {
    return false;
  }
  if (engine == "ch-run" || !ContainerSnapshot(p).of(id)) return false;
  return io::run_process({engine, "rm", "-f", container_name(p, id)}).exit_code == 0;
}

bool SlurmJobState::ended() const {
  static const std::set<std::string> kEnded = {"COMPLETED", "FAILED",    "CANCELLED",     "TIMEOUT",
                                               "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL",
                                               "DEADLINE",  "REVOKED",   "SPECIAL_EXIT"};
  return kEnded.count(state) > 0;
}

namespace {

bool slurm_word(const std::string& w) {
  return !w.empty() && w.size() <= 32 &&
         std::all_of(w.begin(), w.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

bool exit_code_word(const std::string& w) {  // "0:9"
  const auto colon = w.find(':');
  const auto digits = [](std::string_view d) {
    return !d.empty() && d.size() <= 3 && d.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return colon != std::string::npos && digits(std::string_view(w).substr(0, colon)) &&
         digits(std::string_view(w).substr(colon + 1));
}

}  // namespace

std::optional<SlurmJobState> parse_scontrol_job(const std::string& text) {
  // One line of KEY=VALUE words; the first JobState= and ExitCode= count.
  std::istringstream in(text.substr(0, 64 * 1024));
  SlurmJobState st;
  for (std::string w; in >> w;) {
    if (st.state.empty() && w.starts_with("JobState=")) st.state = w.substr(9);
    if (st.exit.empty() && w.starts_with("ExitCode=")) st.exit = w.substr(9);
  }
  if (!slurm_word(st.state) || !exit_code_word(st.exit)) return std::nullopt;
  return st;
}

std::optional<SlurmJobState> parse_sacct_job(const std::string& text) {
  // "STATE[ by UID]|A:B", the job's own line first (-X: no steps).
  const std::string line = text.substr(0, std::min(text.find('\n'), std::size_t{256}));
  const auto bar = line.find('|');
  if (bar == std::string::npos) return std::nullopt;
  SlurmJobState st{line.substr(0, line.find(' ') < bar ? line.find(' ') : bar), line.substr(bar + 1)};
  if (!slurm_word(st.state) || !exit_code_word(st.exit)) return std::nullopt;
  return st;
}

std::optional<SlurmJobState> slurm_job_state(const std::string& id) {
  if (id.empty() || id.size() > 12 || id.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  // The ids come from status files anyone may have written: at most 64 questions a run, and
  // none after Slurm did not answer once (an unreachable slurmctld makes each wait its timeout).
  static int asked = 0;
  static bool silent = false;
  if (silent || ++asked > 64) return std::nullopt;
  const auto sc = io::run_process({"scontrol", "show", "job", "-o", id});
  if (sc.exit_code == 0)
    if (auto st = parse_scontrol_job(sc.out)) return st;
  if (const auto r = io::run_process({"sacct", "-n", "-X", "-P", "-o", "State,ExitCode", "-j", id}); r.exit_code == 0)
    if (auto st = parse_sacct_job(r.out)) return st;
  // A job Slurm no longer knows is an answer; anything else (no scontrol, no slurmctld) is not.
  if (sc.err.find("Invalid job id") == std::string::npos) silent = true;
  return std::nullopt;
}

Shown shown(const Project& p, const Status& s, const ContainerSnapshot* containers) {
  Shown v{field(s, "state").empty() ? "?" : field(s, "state"), field(s, "exit"), field(s, "reason")};
  if (!active(v.state)) return v;
  const bool here = on_this_host(s);
  if (here && supervisor_alive(p, s)) return v;
  // The supervisor is gone (killed, or its machine session ended), or runs on another node. Its
  // container may have run on: the engine knows whether it still runs and how it ended (run.sh
  // leaves the container for the supervisor to remove, so one whose supervisor died is still
  // there). Where this host cannot see it, Slurm knows whether the job still runs.
  const auto c = !here        ? std::nullopt
                 : containers ? containers->of(field(s, "job"))
                              : container_state(p, field(s, "job"));
  if (!c) {
    const std::string slurm_job = field(s, "slurm_job");
    const auto sj = slurm_job.empty() ? std::nullopt : slurm_job_state(slurm_job);
    if (sj && sj->ended()) {
      const bool finished = sj->state == "COMPLETED" && sj->exit == "0:0";
      v.state = finished ? "exited" : "lost";
      v.exit = sj->exit.substr(0, sj->exit.find(':'));
      v.reason = "slurm job " + slurm_job + " ended " + sj->state + " (exit " + sj->exit + ")" +
                 (finished ? "" : " without its supervisor writing the status");
      return v;
    }
    if (!here || (sj && !sj->ended())) return v;  // Slurm runs it (or cannot be asked): as the status says
    v.state = "lost";
    return v;
  }
  if (c->status == "running" || c->status == "paused" || c->status == "restarting") {
    v.state = "running";
    v.reason = "its supervisor is gone: the container runs on, without restarts or checkpoint pruning";
    return v;
  }
  if (c->status == "exited" || c->status == "stopped") {
    // Exit 0: the job finished, nothing to resume. Anything else ended without the restart
    // policy (it died with its supervisor): lost, to be resumed.
    v.state = c->exit == 0 ? "exited" : "lost";
    v.exit = std::to_string(c->exit);
    v.reason = "its supervisor is gone; the container exited " + std::to_string(c->exit) +
               (c->exit == 0     ? " (the job finished)"
                : c->exit == 137 ? " (killed)"
                                 : "");
    return v;
  }
  v.state = "lost";
  return v;
}

std::string shown_state(const Project& p, const Status& s) { return shown(p, s).state; }

std::string container_name(const Project& p, const std::string& id) {
  check_job_id(id);
  return "envpin-" + p.m.name.value + "-" + id;
}

bool signal_supervisor(const Project& p, const Status& s, int sig) {
  const std::string pid_text = field(s, "pid");
  if (!on_this_host(s) || pid_text.empty() || pid_text.size() > 9) return false;
  const int pid = std::stoi(pid_text);
  // A pidfd holds on to the process looked at: if it ends and its pid is reused before the
  // signal, the signal reaches nobody rather than the newcomer.
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0 && errno != ENOSYS) return false;
  const bool ours = is_supervisor(p, pid, field(s, "pid_start"));
  bool sent = false;
  if (ours) sent = fd >= 0 ? ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0 : ::kill(pid, sig) == 0;
  if (fd >= 0) ::close(fd);
  return sent;
}

Patterns checkpoint_patterns(const Project& p) {
  Patterns out;
  for (const auto& g : p.m.jobs->checkpoints_pattern) out.push_back(g.value);
  return out;
}

std::pair<std::string, long> last_checkpoint(const std::string& dir, const Patterns& patterns) {
  if (dir.empty()) return {"", 0};
  const auto last = last_complete(dir, nullptr, patterns);
  if (!last) return {"", 0};
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(fs::file_time_type::clock::now() - last->mtime);
  return {last->name, static_cast<long>(age.count())};
}

Status stop_supervisor(const Project& p, const std::string& id, int timeout_s) {
  auto s = job_status(p, id);
  if (!signal_supervisor(p, s, SIGTERM))
    throw Error("the recorded supervisor of job '" + id + "' (pid " + field(s, "pid") +
                    ") is gone or is not this project's run.sh; nothing was signalled",
                std::nullopt, "look at 'envpin jobs'; a lost job continues with: envpin resume " + id);
  for (int i = 0; i < timeout_s * 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    s = read_status(p.logs / (id + ".status"));
    if (!active(field(s, "state"))) return s;
  }
  throw Error("job '" + id + "' did not stop within " + std::to_string(timeout_s) + " s", std::nullopt,
              "look at 'envpin logs " + id + "'; the container is " + field(s, "container"));
}

std::optional<std::string> stop_unsupervised(const Project& p, const std::string& id) {
  const int timeout = p.m.jobs->stop_timeout.value;
  const std::string engine = container_engine();
  if (engine == "ch-run") {
    if (stop_ch_session(p, id, timeout)) return "the ch-run session";
    return std::nullopt;
  }
  const std::string container = container_name(p, id);
  // Identity by label, not by name: only a container run.sh started for this job is stopped (a
  // planted status file of 'dev-<user>' names the development container, which is no job's).
  const auto label = io::run_process(
      {engine, "container", "inspect", "--format", "{{index .Config.Labels \"org.envpin.job\"}}", container});
  if (label.exit_code != 0 || label.out != id + "\n") return std::nullopt;
  if (io::run_process({engine, "stop", "-t", std::to_string(timeout), container}).exit_code == 0)
    return "container " + container;
  return std::nullopt;
}

void print_log(const Project& p, const std::string& id, std::ostream& out, bool follow) {
  const fs::path log = p.logs / (id + ".log");
  std::ifstream in(log, std::ios::binary);
  // What the log holds beyond what was printed.
  const auto print_new = [&] {
    if (!in.is_open()) in.open(log, std::ios::binary);
    // (operator<< of an empty streambuf would set failbit on `out`: look first.)
    if (in.peek() != std::ifstream::traits_type::eof()) out << in.rdbuf();
    out.flush();
    in.clear();  // at the end of the file: clear eof/fail to read what is appended next
  };
  print_new();
  while (follow) {
    const auto s = read_status(p.logs / (id + ".status"));
    const bool ended = !active(field(s, "state")) || !supervisor_alive(p, s);
    std::this_thread::sleep_for(std::chrono::milliseconds(ended ? 0 : 200));
    print_new();  // after an end too: what was written before the state changed
    if (ended) break;
  }
}

std::vector<std::string> run_script_argv(const Project& p) {
  return {"env", "ENVPIN_PROJECT=" + io::project_path(p.m.project_dir), "sh", p.held_run_script.string()};
}

int exec_run_script(const Project& p, std::vector<std::string> args) {
  const std::string engine = container_engine();
  std::vector<std::string> argv = run_script_argv(p);
  argv.insert(argv.end(), args.begin(), args.end());
  const int rc = io::run_attached(argv, {"ENVPIN_ENGINE=" + engine});
  if (rc < 0) throw Error("cannot run " + p.held_run_script.generic_string(), std::nullopt, "is 'sh' on PATH?");
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

std::string rest_submit_job(const Project& p, const std::string& rest, const std::string& job_id,
                            const std::vector<std::string>& command, std::vector<std::string>& withheld) {
  RestTarget t = rest_target(rest);
  discover_api(t);
  Submission s;
  s.project_dir = fs::absolute(p.m.project_dir).lexically_normal().generic_string();
  while (s.project_dir.size() > 1 && s.project_dir.back() == '/') s.project_dir.pop_back();
  std::ifstream in(p.sbatch_script, std::ios::binary);
  s.script.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  s.job_id = job_id;
  s.command = command;
  s.environment = job_environment(p.m, s.project_dir, job_id, withheld);
  fs::create_directories(p.logs);  // Slurm writes the output there and does not create it
  return rest_submit(t, submit_body(p.m, s, t.api));
}

}  // namespace envpin::jobs

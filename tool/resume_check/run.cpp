// SPDX-License-Identifier: Apache-2.0
#include "resume_check/run.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <thread>
#include <utility>

#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "jobs/cleanup.hpp"
#include "jobs/project.hpp"
#include "pin/sha256.hpp"
#include "render/templates.hpp"
#include "resume_check/verdict.hpp"
#include "workflow/project.hpp"

namespace envpin::resume_check {
namespace {

using diag::Error;
namespace fs = std::filesystem;

// A directory removed with everything in it when the scope ends, however it ends.
struct Scratch {
  explicit Scratch(fs::path d) : dir(std::move(d)) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path dir;
};

// The host directory of the jobs' checkpoints, as run.sh computes it (under Slurm, as
// job.sbatch sets it: the shared jobs.slurm.checkpoints when there is one).
fs::path checkpoint_root(const jobs::Project& p, bool slurm) {
  const char* env = std::getenv("ENVPIN_CHECKPOINTS");
  const manifest::Jobs& j = *p.m.jobs;
  const fs::path dir = env && *env                    ? fs::path(env)
                       : slurm && j.slurm_checkpoints ? fs::path(j.slurm_checkpoints->value)
                                                      : fs::path(j.checkpoints_host.value);
  return (dir.is_absolute() ? dir : p.m.project_dir / dir).lexically_normal();
}

using Clock = std::chrono::steady_clock;

// Ctrl-C, SIGTERM or SIGHUP while resume-check runs: noted here, acted on at the next look (the
// watch loops look every 100 ms), so that it stops the jobs it started before it exits (it used
// to exit 130 at once and leave its interrupted job running to the end).
volatile std::sig_atomic_t stop_signal = 0;
extern "C" void note_stop_signal(int signal) { stop_signal = signal; }

struct Interrupted {
  int signal;
};

void check_stop() {
  if (stop_signal) throw Interrupted{stop_signal};
}

// Notes the three signals while it lives; the handlers before it come back after.
class StopSignals {
 public:
  StopSignals() {
    stop_signal = 0;
    SigAction note{};
    note.sa_handler = note_stop_signal;
    sigemptyset(&note.sa_mask);
    for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &note, &before_[i]);
  }
  ~StopSignals() {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &before_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  using SigAction = struct sigaction;  // (the struct shares its name with the function)
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  SigAction before_[3]{};
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

// A job of the check, on this machine (run.sh) or under Slurm (job.sbatch), watched while it runs.
class CheckRun {
 public:
  // Each version of a checkpoint is copied under `snapshots` (while `budget` bytes last) to be
  // compared after the run, as the program loads it.
  CheckRun(const jobs::Project& p, std::string id, std::string engine, std::string sbatch, const fs::path& snapshots,
           std::uintmax_t budget)
      : p_(p),
        id_(std::move(id)),
        engine_(std::move(engine)),
        sbatch_(std::move(sbatch)),
        snapshots_(snapshots / id_),
        budget_(budget),
        watch_(checkpoint_root(p, slurm()) / id_, jobs::checkpoint_patterns(p), snapshots / id_, budget) {}

  bool slurm() const { return !sbatch_.empty(); }
  const std::string& id() const { return id_; }
  const fs::path& snapshots() const { return snapshots_; }
  std::uintmax_t budget() const { return budget_; }
  fs::path status_file() const { return p_.logs / (id_ + ".status"); }
  fs::path log() const { return p_.logs / (id_ + ".log"); }
  fs::path checkpoints() const { return checkpoint_root(p_, slurm()) / id_; }
  CheckpointWatch& watch() { return watch_; }
  jobs::Status status() const { return jobs::read_status(status_file()); }
  // How an interruption is made, for the messages.
  std::string interruption() const { return slurm() ? "scontrol requeue" : "SIGKILL"; }

  // Refuses an id whose job or checkpoints exist: each run starts from an empty directory.
  void require_unused() const {
    std::error_code ec;
    if (fs::exists(status_file(), ec))
      throw Error("job id '" + id_ + "' is already in use (" + status_file().generic_string() + ")", std::nullopt,
                  "choose another --job-id for the check");
    if (fs::exists(checkpoints(), ec) && !fs::is_empty(checkpoints(), ec))
      throw Error(
          "the checkpoint directory " + checkpoints().generic_string() + " is not empty", std::nullopt,
          "resume-check runs each job from an empty checkpoint directory: choose another --job-id, or remove it");
  }

  // Removed as `envpin rm --checkpoints` removes a job (the check's own jobs): its files in the
  // logs directory and its checkpoint directory. One that still runs stays, for envpin stop.
  void remove() const {
    if (jobs::job_files(p_, id_).empty()) return;
    try {
      jobs::remove_job(p_, id_, true);
    } catch (const Error&) {
    }
  }

  // Whatever of it still runs stopped (its supervisor and container SIGKILLed, its Slurm job
  // cancelled) and its container removed; then its files and checkpoints too, unless `keep`. Every
  // way out of resume-check that is not its verdict (a refusal, an error, Ctrl-C) comes here:
  // it leaves no running job, no exited container and no lost job behind.
  void stop_and_remove(bool keep) {
    if (!ours_) return;  // never a job of the same id that was there before
    std::error_code ec;
    try {
      if (slurm()) {
        if (!slurm_id_.empty()) io::run_process({"scancel", slurm_id_});
      } else if (fs::exists(status_file(), ec)) {
        const auto s = status();
        if (jobs::active(jobs::field(s, "state")) || jobs::supervisor_alive(p_, s)) kill_hard();
        jobs::remove_container(p_, id_);
      }
    } catch (const Error&) {
    }
    if (!keep) remove();
  }

  // From now on its job id is this check's: it was unused (require_unused) and is about to start.
  void claim() { ours_ = true; }

  // Starts it detached from envpin: run.sh --detach, or a Slurm batch job.
  void start(const std::vector<std::string>& command) {
    claim();
    if (slurm()) {
      slurm_id_ = jobs::sbatch_submit(p_, sbatch_, id_, command);
      return;
    }
    std::vector<std::string> argv = jobs::run_script_argv(p_);
    argv.insert(argv.end(), {"--job-id", id_, "--detach", "--"});
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
    std::vector<std::string> argv = jobs::run_script_argv(p_);
    argv.insert(argv.end(), {"--job-id", id_, "--detach", "--resume"});
    run_script(argv, "resume");
  }

  void abandon() {
    if (slurm())
      io::run_process({"scancel", slurm_id_});
    else
      kill_hard();
  }

  bool ended() const {
    if (slurm()) return slurm_terminal(slurm_state().first);
    const auto s = status();
    return !jobs::field(s, "state").empty() &&
           (!jobs::active(jobs::field(s, "state")) || !jobs::supervisor_alive(p_, s));
  }

  // Empty when it finished with exit 0; else what happened.
  std::string failure() const {
    if (slurm()) {
      const auto [state, code] = slurm_state();
      return state == "COMPLETED" && code == "0:0"
                 ? ""
                 : "slurm job " + slurm_id_ + " " + state + " (ExitCode=" + code + ")";
    }
    const auto s = status();
    if (jobs::field(s, "state") == "exited" && jobs::field(s, "exit") == "0") return "";
    return jobs::shown_state(p_, s) + (jobs::field(s, "exit").empty() ? "" : " with exit " + jobs::field(s, "exit")) +
           (jobs::field(s, "reason").empty() ? "" : ": " + jobs::field(s, "reason"));
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
    jobs::signal_supervisor(p_, s, SIGKILL);  // only when it is verifiably the job's run.sh
    const std::string container = jobs::container_name(p_, id_);
    io::run_process({engine_, "kill", "-s", "KILL", container});
    for (int i = 0; i < 150; ++i) {  // the container gone (run --rm), so a resume can reuse its name
      const auto r = io::run_process({engine_, "ps", "-q", "--filter", "name=^/?" + container + "$"});
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
    for (const char* s :
         {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"})
      if (state == s) return true;
    return false;
  }

  const jobs::Project& p_;
  std::string id_;
  std::string engine_;
  std::string sbatch_;
  std::string slurm_id_;
  fs::path snapshots_;
  std::uintmax_t budget_ = 0;
  bool ours_ = false;
  CheckpointWatch watch_;
};

// What a finished run left: its outputs, each checkpoint version with its step.
RunRecord finish_record(const jobs::Project& p, CheckRun& run, const std::vector<CompareItem>& items, double seconds) {
  RunRecord r;
  r.job = run.id();
  r.outputs =
      collect_outputs(items, p.m.project_dir, run.checkpoints(), run.log(), jobs::checkpoint_patterns(p), &r.files);
  // Files of the project (outputs/final.pt) are written again by the next run: each run's copy
  // is kept to be loaded later, or the comparison would read one file twice. (Checkpoint items
  // stay in the run's own directory.)
  std::size_t n = 0;
  std::uintmax_t left = run.budget();
  for (auto& [name, path] : r.files) {
    if (name.starts_with("checkpoint ")) continue;
    const fs::path copy = run.snapshots() / "outputs" / (std::to_string(n++) + "-" + path.filename().string());
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec || size > left) {  // beyond ENVPIN_RESUME_CHECK_SNAPSHOT_MB: compared by bytes only
      path.clear();
      continue;
    }
    left -= size;
    fs::create_directories(copy.parent_path(), ec);
    fs::remove(copy, ec);
    if (io::copy_regular(path, copy, size) && pin::sha256_file(copy) == r.outputs.at(name))
      path = copy;
    else
      path.clear();  // not kept: compared by bytes only
  }
  r.journal = read_journal(run.checkpoints());
  run.watch().resolve_steps(r.journal);
  r.checkpoints = run.watch().completed();
  r.seconds = seconds;
  return r;
}

// One run, watched to its end: interrupted and resumed at `kill_at` until `kills` interruptions
// were made (none for a reference run). With --kill-at auto the first kill waits for
// `first_after` checkpoint versions: after the second, a program that starts over writes the
// first again, which tells it from one that resumes (and may save again what it loaded).
// Names in `not_counted` (a config.json the uninterrupted run wrote once, at its start) are no
// checkpoint to count or to kill after. Throws diag::Error when it cannot be judged.
struct Watched {
  RunRecord record;
  std::vector<KillPoint> kills;
};

Watched watch_run(const jobs::Project& p, CheckRun& run, const ResumeCheckRequest& o, const KillAt& kill_at,
                  int kills_wanted, double limit, const std::vector<CompareItem>& items, const Console& io,
                  std::size_t first_after = 1, const std::set<std::string>& not_counted = {},
                  const std::string& last_sha256 = {}) {
  const auto start = Clock::now();
  std::vector<KillPoint> kills;
  run.start(o.command);
  auto segment = Clock::now();
  bool segment_checkpoint = false;
  bool last_seen = false;  // auto: the newest checkpoint is the uninterrupted run's last
  std::uintmax_t log_offset = 0;
  std::string log_tail;
  const auto give_up = [&](const std::string& why, const std::string& hint) {
    run.abandon();
    throw Error(why, std::nullopt, hint);
  };
  while (!run.ended()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    check_stop();
    for (const std::string& name : run.watch().poll())
      if (!not_counted.contains(name)) segment_checkpoint = true;
    if (limit > 0 && seconds_since(start) > limit)
      give_up("job " + run.id() + " ran " + std::to_string(static_cast<int>(limit)) +
                  " s, ten times the uninterrupted "
                  "run: it does not finish after a resume",
              "see " + run.log().generic_string());
    if (static_cast<int>(kills.size()) >= kills_wanted) continue;
    bool now = false;
    switch (kill_at.kind) {
      case KillAt::Kind::automatic:
        // Never after the uninterrupted run's last checkpoint (the same bytes): a resume from it
        // has nothing left to write, so it tests nothing.
        if (last_sha256.empty() || run.watch().completed().empty() ||
            run.watch().completed().back().sha256 != last_sha256)
          last_seen = false;
        else
          last_seen = true;
        now = !last_seen && segment_checkpoint &&
              (!kills.empty() || static_cast<std::size_t>(std::count_if(
                                     run.watch().completed().begin(), run.watch().completed().end(),
                                     [&](const Version& v) { return !not_counted.contains(v.name); })) >= first_after);
        break;
      case KillAt::Kind::seconds:
        now = seconds_since(segment) >= kill_at.seconds;
        break;
      case KillAt::Kind::pattern: {
        // What the job wrote since the last look, 16 MiB at most a poll, from the log itself (a
        // link the job put in its place is not read).
        std::error_code lec;
        if (!fs::is_regular_file(fs::symlink_status(run.log(), lec))) break;
        std::ifstream in(run.log(), std::ios::binary);
        in.seekg(static_cast<std::streamoff>(log_offset));
        const std::uintmax_t size = fs::file_size(run.log(), lec);
        std::string more(lec || size <= log_offset ? 0 : std::min<std::uintmax_t>(size - log_offset, 16 << 20), '\0');
        in.read(more.data(), static_cast<std::streamsize>(more.size()));
        more.resize(static_cast<std::size_t>(in.gcount()));
        log_offset += more.size();
        log_tail += more;
        now = log_tail.find(kill_at.pattern) != std::string::npos;
        if (const auto nl = log_tail.rfind('\n'); nl != std::string::npos) log_tail.erase(0, nl + 1);
        // A line without end keeps only what a match could still start in.
        if (log_tail.size() > kill_at.pattern.size()) log_tail.erase(0, log_tail.size() - kill_at.pattern.size());
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
    kills.push_back({seconds_since(start), done.empty() ? "" : done.back().name, done.size()});
    io.err << "envpin resume-check: kill " << kills.size() << " (" << run.interruption() << ") at "
           << static_cast<int>(kills.back().seconds) << " s"
           << (kills.back().newest.empty() ? "" : ", newest checkpoint " + diag::excerpt(kills.back().newest))
           << "; resuming\n";
    std::error_code ec;
    log_offset = fs::file_size(run.log(), ec);
    log_tail.clear();
    segment = Clock::now();
    segment_checkpoint = false;
  }
  run.watch().poll();
  if (const std::string why = run.failure(); !why.empty()) {
    // Several kinds of checkpoint (netD_epoch_0.pth and netG_epoch_0.pth) and no pattern: the
    // resume got the newest of any kind, perhaps not the one the program loads.
    std::set<std::string> kinds;
    for (const Version& v : run.watch().completed()) {
      std::string kind;  // its name with each run of digits a '*': a pattern for its kind
      for (const char c : v.name)
        if (c < '0' || c > '9')
          kind += c;
        else if (kind.empty() || kind.back() != '*')
          kind += '*';
      kinds.insert(kind);
    }
    std::string hint = "see " + run.log().generic_string();
    if (!kills.empty() && kinds.size() > 1 && jobs::checkpoint_patterns(p).empty())
      hint += "; the resume got " + kills.back().newest + ", the newest of " + std::to_string(kinds.size()) +
              " kinds of checkpoint: name the one the program resumes from with jobs.checkpoints.pattern (e.g. '" +
              *kinds.rbegin() + "')";
    else if (!kills.empty())
      hint += "; a resume that cannot load its checkpoint fails here";
    throw Error("job " + run.id() + " ended " + why, std::nullopt, hint);
  }
  if (static_cast<int>(kills.size()) < kills_wanted)
    throw Error("the interrupted run finished after " + std::to_string(kills.size()) + " of " +
                    std::to_string(kills_wanted) + " kills: " +
                    (kill_at.kind == KillAt::Kind::pattern ? "the text never appeared in the log again"
                     : last_seen ? "the next checkpoint was the uninterrupted run's last, and a kill after it "
                                   "tests no resume"
                                 : "it wrote no new checkpoint in time"),
                std::nullopt, "ask for fewer --kills, an earlier --kill-at, or checkpoint more often");
  return {finish_record(p, run, items, seconds_since(start)), kills};
}

// An uninterrupted run. On this machine in the foreground (its output shown), its checkpoints
// watched meanwhile; under Slurm, submitted and watched like the interrupted one.
RunRecord run_uninterrupted(const jobs::Project& p, CheckRun& run, const ResumeCheckRequest& o,
                            const std::vector<CompareItem>& items, const Console& io) {
  run.require_unused();
  run.claim();
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
    rc = jobs::exec_run_script(p, args);
  } catch (...) {
    restore();
    done = true;
    watcher.join();
    throw;
  }
  restore();
  done = true;
  watcher.join();
  check_stop();  // run.sh heard it too (run_attached passed it on) and stopped the job
  run.watch().poll();
  if (rc != 0)
    throw Error("the uninterrupted run (job " + run.id() + ") failed with exit " + std::to_string(rc) +
                    ": resume cannot be checked on a run that does not finish",
                std::nullopt, "see " + run.log().generic_string());
  return finish_record(p, run, items, seconds_since(start));
}

// envpin_compare.py in the job's image, with the project's python3, over `pairs`: each file is
// loaded as the program loads it and compared key by key. The engine runs it without network,
// every directory read-only. On any failure: no findings, and `note` says why (the verdict then
// compares bytes and says so).
// A pair without `b` asks for the step recorded inside `a`, answered in `steps`.
Semantics compare_in_image(const jobs::Project& p, const std::string& image, const std::vector<Pair>& pairs,
                           const fs::path& work, const Tolerance& tolerance, std::string& note,
                           std::map<std::string, long long>* steps = nullptr) {
  if (pairs.empty()) return {};
  std::string engine;
  try {
    engine = jobs::container_engine();
  } catch (const Error&) {
    note = "compared by bytes: no container engine here to load the checkpoints in the job's image";
    return {};
  }
  std::error_code ec;
  fs::create_directories(work, ec);
  // Each path through the deepest directory of the ones mounted that holds it.
  std::vector<fs::path> roots;
  std::vector<std::pair<std::string, std::string>> mapped;
  nlohmann::json list = nlohmann::json::array();
  const auto inside = [&](const fs::path& file) {
    const fs::path abs = fs::absolute(file).lexically_normal();
    std::size_t best = roots.size();
    for (std::size_t i = 0; i < roots.size(); ++i) {
      const auto rel = abs.lexically_relative(roots[i]);
      if (!rel.empty() && *rel.begin() != ".." &&
          (best == roots.size() || roots[i].string().size() > roots[best].string().size()))
        best = i;
    }
    if (best == roots.size()) {
      roots.push_back(abs.parent_path());
      best = roots.size() - 1;
    }
    return "/envpin-compare/r" + std::to_string(best) + "/" + abs.lexically_relative(roots[best]).generic_string();
  };
  roots.push_back(fs::absolute(p.m.project_dir).lexically_normal());
  for (const auto& pair : pairs)
    if (pair.b.empty())
      list.push_back({{"id", pair.id}, {"a", inside(pair.a)}});
    else
      list.push_back({{"id", pair.id}, {"a", inside(pair.a)}, {"b", inside(pair.b)}});
  io::write_atomic(work / "pairs.json", list.dump() + "\n", false);
  io::write_atomic(work / "envpin_compare.py", render::render_template("envpin_compare.py.mustache", {}), false);
  std::vector<std::string> argv = {engine,
                                   "run",
                                   "--rm",
                                   "--network",
                                   "none",
                                   "--user",
                                   std::to_string(::getuid()) + ":" + std::to_string(::getgid()),
                                   "-e",
                                   "OMP_NUM_THREADS=1",
                                   "-v",
                                   fs::absolute(work).lexically_normal().string() + ":/envpin-compare/x:ro"};
  for (std::size_t i = 0; i < roots.size(); ++i)
    argv.insert(argv.end(), {"-v", roots[i].string() + ":/envpin-compare/r" + std::to_string(i) + ":ro"});
  argv.insert(argv.end(), {image, "python3", "/envpin-compare/x/envpin_compare.py", "/envpin-compare/x/pairs.json",
                           std::to_string(tolerance.rtol), std::to_string(tolerance.atol)});
  const auto r = io::run_process(argv);
  if (r.exit_code != 0) {
    note = "compared by bytes: envpin_compare.py failed in " + image + ": " + diag::printable(last_line(r.err));
    return {};
  }
  try {
    Semantics found = parse_semantics(r.out);
    if (steps) *steps = parse_steps(r.out);
    const std::string torch = torch_version(r.out);
    note = torch.empty() ? "torch is not in the image: its files were compared by bytes" : "";
    return found;
  } catch (const Error& e) {
    note = "compared by bytes: " + e.message();
    return {};
  }
}

}  // namespace

int run_check(const ResumeCheckRequest& o, const Console& io) {
  const jobs::Project p = jobs::load_project(o.manifest);
  jobs::check_job_id(o.job_id);
  if (o.command.empty())
    throw Error("no command to check", std::nullopt, "put it after '--': envpin resume-check -- python train.py");
  if (o.kills < 1 || o.kills > 20)
    throw Error("--kills " + std::to_string(o.kills) + " is out of range", std::nullopt, "kill 1 to 20 times");
  const KillAt kill_at = parse_kill_at(o.kill_at);
  std::vector<CompareItem> items;
  for (const std::string& c : o.compare) items.push_back(parse_compare(c));
  workflow::require_pinned(p);
  // It kills the job's container and loads its checkpoints in the image with the engine: ch-run
  // has neither a container to kill nor an image to run a comparison in.
  if (const char* e = std::getenv("ENVPIN_ENGINE"); e && std::string_view(e) == "ch-run")
    throw Error("resume-check runs the job under docker or podman, not ch-run (ENVPIN_ENGINE)", std::nullopt,
                "run it where docker or podman runs (ENVPIN_ENGINE=docker or podman): the job's image is the same");
  const std::string sbatch = o.slurm ? jobs::find_sbatch() : std::string();
  const std::string engine = o.slurm ? std::string() : jobs::container_engine();
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
  jobs::check_job_id(base + "-ref2");
  const Tolerance tolerance = parse_tolerance(o.tolerance);
  // Snapshots of every checkpoint version, compared after the runs (1 GiB a run by default), in a
  // directory of this user's outside the project: the jobs own the project's tree while they run
  // and could put a link where a snapshot goes.
  const Scratch scratch{io::private_directory("envpin-resume-check")};
  const fs::path& work = scratch.dir;
  std::uintmax_t budget = std::uintmax_t{1} << 30;
  if (const char* b = std::getenv("ENVPIN_RESUME_CHECK_SNAPSHOT_MB");
      b && *b && std::strlen(b) < 9 && std::strspn(b, "0123456789") == std::strlen(b))
    budget = std::stoull(b) << 20;
  CheckRun ref_run(p, base + "-ref", engine, sbatch, work, budget),
      killed_run(p, base + "-kill", engine, sbatch, work, budget),
      ref2_run(p, base + "-ref2", engine, sbatch, work, budget);
  for (const CheckRun* r : {&ref_run, &killed_run, &ref2_run}) r->require_unused();

  // Every way out but the verdict stops and removes what the check started (see stop_and_remove).
  StopSignals signals;
  const auto clean_up = [&] {
    for (CheckRun* r : {&ref_run, &killed_run, &ref2_run}) r->stop_and_remove(o.keep);
  };
  try {
    RunRecord ref = run_uninterrupted(p, ref_run, o, items, io);
    // The image the jobs ran in (run.sh's, ENVPIN_IMAGE included), for the comparison.
    const std::string image = jobs::field(ref_run.status(), "image");
    io.err << "envpin resume-check: interrupted run, job " << killed_run.id() << " (" << o.kills << " "
           << killed_run.interruption() << (o.kills == 1 ? "" : "s") << ", --kill-at " << o.kill_at << ")\n";
    // A requeued Slurm job waits for its credential to expire (120 s on a default cluster).
    const double limit = std::max(120.0, 10 * ref.seconds) + (o.slurm ? 180.0 * o.kills : 0.0);
    // The first kill after the second checkpoint version when the uninterrupted run wrote three
    // or more (see watch_run).
    // Names the uninterrupted run wrote once and without a step (a config.json at its start) are
    // not counted: a kill after one tests nothing.
    std::set<std::string> once;
    for (const Version& v : ref.checkpoints)
      if (written_once(ref.checkpoints, v)) once.insert(v.name);
    if (once.size() == ref.checkpoints.size()) once.clear();  // each written once: they are the checkpoints
    const std::size_t counted = ref.checkpoints.size() - once.size();
    const std::size_t first_after = counted >= 3 ? 2 : 1;
    std::string last_sha256;  // the uninterrupted run's last checkpoint (a config.json not counted)
    for (auto v = ref.checkpoints.rbegin(); v != ref.checkpoints.rend() && last_sha256.empty(); ++v)
      if (!once.contains(v->name)) last_sha256 = v->sha256;
    Watched killed = watch_run(p, killed_run, o, kill_at, o.kills, limit, items, io, first_after, once, last_sha256);
    if (p.m.jobs)
      for (const auto& w : p.m.jobs->resume)
        killed.record.resume_words += (killed.record.resume_words.empty() ? "" : " ") + w.value;
    // What each attempt printed, for the causes (the job's log is the job's: a link or a FIFO in
    // its place is not read, and one past 32 MiB is left unread, the causes it would tell left out).
    if (std::string log; io::read_regular(killed_run.log(), std::size_t{32} << 20, log) == io::ReadStatus::ok)
      killed.record.attempts = split_attempts(log, killed_run.id());
    // Steps from inside the checkpoints (nanoGPT's iter_num, an epoch) where neither the journal
    // nor the names gave them: versions are then matched by step, not by order (a resumed
    // program that saves again what it loaded would shift every later version).
    {
      std::vector<Pair> probes;
      for (std::size_t i = 0; i < ref.checkpoints.size(); ++i)
        if (!ref.checkpoints[i].step && !ref.checkpoints[i].copy.empty())
          probes.push_back({"step:r:" + std::to_string(i), ref.checkpoints[i].copy, {}});
      for (std::size_t j = 0; j < killed.record.checkpoints.size(); ++j)
        if (!killed.record.checkpoints[j].step && !killed.record.checkpoints[j].copy.empty())
          probes.push_back({"step:k:" + std::to_string(j), killed.record.checkpoints[j].copy, {}});
      std::map<std::string, long long> steps;
      std::string ignored;
      compare_in_image(p, image, probes, work / "steps", {}, ignored, &steps);
      check_stop();
      apply_inner_steps(ref.checkpoints, killed.record.checkpoints, steps);
    }
    // Files that differ in bytes are loaded as the program loads them and compared key by key.
    std::string note;
    Semantics semantics = compare_in_image(p, image, pairs_to_compare(ref, killed.record, "", killed.kills),
                                           work / "compare", tolerance, note);
    check_stop();
    // Different: a second uninterrupted run tells non-determinism from a wrong resume.
    std::optional<RunRecord> ref2;
    // (Not when a segment started over: that verdict needs no second run.)
    if (resume_failures(ref, killed.record, killed.kills, semantics).empty() &&
        !results_match(ref, killed.record, semantics, "")) {
      ref2 = run_uninterrupted(p, ref2_run, o, items, io);
      std::string note2;
      semantics.merge(
          compare_in_image(p, image, pairs_to_compare(ref, *ref2, "ref2:"), work / "compare2", tolerance, note2));
      check_stop();
      if (note.empty()) note = note2;
    }
    const Verdict v = judge(ref, killed.record, killed.kills, ref2, semantics, tolerance, note);
    for (const std::string& line : v.lines) io.out << line << "\n";
    io.out << "runs: " << ref.job << " " << static_cast<int>(ref.seconds) << " s, " << killed.record.job << " "
           << static_cast<int>(killed.record.seconds) << " s"
           << (ref2 ? ", " + ref2->job + " " + std::to_string(static_cast<int>(ref2->seconds)) + " s" : "")
           << (o.keep ? "; logs in " + workflow::shown_path(p.m.project_dir, p.logs).generic_string() + "/"
                      : "; their jobs removed (--keep keeps their logs and checkpoints)")
           << "\n";
    if (!o.keep)
      for (const CheckRun* r : {&ref_run, &killed_run, &ref2_run}) r->remove();
    return v.exit_code;
  } catch (const Interrupted& i) {
    clean_up();
    io.err << "envpin resume-check: "
           << (i.signal == SIGINT    ? "interrupted (SIGINT)"
               : i.signal == SIGTERM ? "stopped (SIGTERM)"
                                     : "hung up (SIGHUP)")
           << ": its jobs were stopped" << (o.keep ? "; their logs and checkpoints kept (--keep)" : " and removed")
           << "\n";
    return 128 + i.signal;
  } catch (...) {
    clean_up();
    throw;
  }
}

}  // namespace envpin::resume_check

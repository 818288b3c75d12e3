// SPDX-License-Identifier: Apache-2.0
// `envpin run/jobs/logs/stop/resume/submit` through the binary, for what needs no container
// engine: the refusals before anything starts, and reading the state run.sh keeps. Running
// jobs for real (docker, Slurm) is tests/e2e/jobs.sh.
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli_fixture.hpp"
#include "jobs/project.hpp"
#include "lock/lock.hpp"
#include "manifest/load.hpp"
#include "pin/sha256.hpp"

namespace envpin {
namespace {

constexpr const char* kManifest =
    "envpin: 1\nname: demo\nbase: 127.0.0.1:5000/envpin/bookworm:12\nos: debian12\n"
    "jobs: {checkpoints: {path: /checkpoints, host: ckpt}, logs: logs, resume: --resume auto}\n";

class JobsCli : public Cli {
 protected:
  // The manifest, a lock for it (made here: resolving needs a registry) and the generated files.
  void project() {
    write("envpin.yaml", kManifest);
    write("envpin.lock", lock::to_toml(image_only_lock(manifest::load((dir_ / "envpin.yaml").string()))));
    ASSERT_EQ(run("generate").code, 0);
    fs::create_directories(dir_ / "ckpt");
  }
  // A job's state as run.sh writes it (the pid's start time as run.sh records it).
  void job(const std::string& id, const std::string& state, int pid, const std::string& exit_code = "",
           const std::string& on = host(), const std::string& engine = "envpin-no-engine") {
    fs::create_directories(dir_ / "ckpt" / id);
    write("logs/" + id + ".status", "job=" + id + "\nstate=" + state + "\nexit=" + exit_code +
                                        "\nrestarts=1\nstarted=2026-11-30T06:00:00Z\npid=" + std::to_string(pid) +
                                        "\npid_start=" + jobs::process_start(pid) + "\nhost=" + on +
                                        "\nengine=" + engine + "\ncontainer=envpin-demo-" + id +
                                        "\ncheckpoints=" + (dir_ / "ckpt" / id).string() +
                                        "\nlog=" + (dir_ / "logs" / (id + ".log")).string() + "\nreason=\n");
    write("logs/" + id + ".log", "starting at step 0\ncheckpoint at step 5\n");
  }
  // A stand-in for a job's supervisor: the project's run.sh replaced by a loop that, on SIGTERM,
  // records the job as stopped, as run.sh does; started as `sh <project>/.envpin/run.sh`. Its pid.
  int supervisor(const std::string& id) {
    write(".envpin/run.sh", "trap 'sed -i s/^state=running$/state=stopped/ logs/" + id +
                                ".status; exit 0' TERM\nwhile :; do sleep 0.1; done\n");
    const std::string pid =
        shell("cd " + sh_quote(dir_.string()) + " && { sh " + sh_quote((dir_ / ".envpin/run.sh").string()) +
              " >/dev/null 2>&1 </dev/null & echo $!; }");
    started_.push_back(std::stoi(pid));
    return started_.back();
  }
  void TearDown() override {
    for (int pid : started_) ::kill(pid, SIGKILL);
    Cli::TearDown();
  }
  std::vector<int> started_;
  static std::string host() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
  }
};

TEST_F(JobsCli, GenerateWritesTheRunAndSlurmScripts) {
  project();
  EXPECT_TRUE(fs::exists(dir_ / ".envpin/run.sh"));
  EXPECT_TRUE(fs::exists(dir_ / ".envpin/job.sbatch"));
  // The image is named after what goes into it: the same inputs give the same tag; an `env`
  // edit (which leaves the lock current) gives a new one, so `envpin run` cannot start the old
  // image; undoing the edit names the first image again.
  const auto image = [this] {
    const std::string run_sh = *io::read_file(dir_ / ".envpin/run.sh");
    const std::size_t at = run_sh.find("image=${ENVPIN_IMAGE:-'");
    return at == std::string::npos ? std::string() : run_sh.substr(at + 23, run_sh.find('\'', at + 23) - at - 23);
  };
  const std::string first = image();
  EXPECT_EQ(first.rfind("envpin/demo:", 0), 0u) << first;
  EXPECT_EQ(first.size(), std::string("envpin/demo:").size() + 16) << first;
  ASSERT_EQ(run("generate").code, 0);
  EXPECT_EQ(image(), first);
  write("envpin.yaml", std::string(kManifest) + "env: {STEP: '2'}\n");
  ASSERT_EQ(run("verify").code, 0);  // env is not locked: the lock stays current
  ASSERT_EQ(run("generate").code, 0);
  const std::string edited = image();
  EXPECT_NE(edited, first);
  EXPECT_NE(io::read_file(dir_ / "Dockerfile")->find("ENV STEP=\"2\"\n"), std::string::npos);
  write("envpin.yaml", kManifest);
  ASSERT_EQ(run("generate").code, 0);
  EXPECT_EQ(image(), first);
}

TEST_F(JobsCli, RefusesBeforeAnythingStarts) {
  write("envpin.yaml", "envpin: 1\nname: demo\n");
  Result r = run("run -- true");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml: envpin.yaml has no jobs section\n"
            "envpin: hint: add one, e.g. 'jobs: {checkpoints: /checkpoints, resume: --resume auto}', "
            "then run 'envpin generate'\n");
  write("envpin.yaml", kManifest);
  r = run("run -- true");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml: there is no envpin.lock beside envpin.yaml: jobs run the pinned image\n"
            "envpin: hint: run 'envpin lock', then 'envpin generate'\n");
  project();
  // Generated files that no longer match the lock and manifest.
  write(".envpin/run.sh", "#!/bin/sh\n");
  r = run("run -- true");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(".envpin/run.sh is out of date"), std::string::npos) << r.err;
  // That run.sh is not envpin's any more: generate replaces it only when told to.
  EXPECT_EQ(run("generate").code, 1);
  ASSERT_EQ(run("generate --force").code, 0);
  // A stale lock: the manifest changed after locking.
  write("envpin.yaml", std::string(kManifest) + "apt: [jq]\n");
  r = run("run -- true");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("envpin.lock is stale"), std::string::npos) << r.err;
  write("envpin.yaml", kManifest);
  r = run("run --job-id 'bad id' -- true");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("invalid job id 'bad id'"), std::string::npos) << r.err;
  // The dev container of `envpin dev` is envpin-<name>-dev-<user>: no job may take that name.
  const std::string user = ::getpwuid(::getuid())->pw_name;
  r = run("run --job-id dev-" + user + " -- true");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("job id 'dev-" + user + "' names this user's development container"), std::string::npos)
      << r.err;
  r = run("run -- true", "-u ENVPIN_ENGINE -u ENVPIN_CONTAINER_ENGINE PATH=/nonexistent");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: no container engine: neither docker nor podman is on PATH\n"
            "envpin: hint: install one of them, or name yours in ENVPIN_ENGINE\n");
  r = run("submit -- true", "PATH=/nonexistent");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("Slurm is not reachable from here: there is no sbatch on PATH"), std::string::npos) << r.err;
  // Nothing was started or written for any of them.
  EXPECT_FALSE(fs::exists(dir_ / "logs"));
  EXPECT_TRUE(fs::is_empty(dir_ / "ckpt"));
}

TEST_F(JobsCli, ListsJobsWithStateAndLastCheckpoint) {
  project();
  job("done", "exited", 1, "0");
  write("ckpt/done/step-10.pt", "x");
  job("gone", "running", 999999);  // its supervisor no longer exists
  const Result text = run("jobs");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("done                            exited     0    1        2026-11-30T06:00:00Z step-10.pt ("),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("gone                            lost            1        2026-11-30T06:00:00Z -"),
            std::string::npos)
      << text.out;
  const Result json = run("jobs --json");
  ASSERT_EQ(json.code, 0);
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["job"], "done");
  EXPECT_EQ(j[0]["last_checkpoint"], "step-10.pt");
  EXPECT_EQ(j[1]["state"], "lost");
}

TEST_F(JobsCli, LastCheckpointIsTheNewestComplete) {
  project();
  job("cut", "failed", 1, "1");
  // envpin_ckpt.py's files: the newest was cut off mid-write (its sidecar names other bytes).
  write("ckpt/cut/ckpt-10.pt", "ten");
  write("ckpt/cut/ckpt-10.pt.sha256", pin::sha256_hex("ten") + "  ckpt-10.pt\n");
  write("ckpt/cut/ckpt-20.pt", "twen");
  write("ckpt/cut/ckpt-20.pt.sha256", pin::sha256_hex("twenty") + "  ckpt-20.pt\n");
  fs::last_write_time(dir_ / "ckpt/cut/ckpt-10.pt", fs::file_time_type::clock::now() - std::chrono::seconds(60));
  write("ckpt/cut/.envpin-tmp-ckpt-30.pt", "being written");
  const auto j = nlohmann::json::parse(run("jobs --json").out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["last_checkpoint"], "ckpt-10.pt");
}

TEST_F(JobsCli, ResumeCheckRefusesBeforeAnythingRuns) {
  project();
  const auto refused = [&](const std::string& args, const std::string& message) {
    const Result r = run("resume-check " + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  };
  refused("--kill-at 0 -- true", "--kill-at 0 is not a positive number of seconds");
  refused("--kills 0 -- true", "--kills 0 is out of range");
  refused("--compare ../elsewhere -- true", "--compare '../elsewhere' is not a path inside the project");
  refused("--compare /etc/passwd -- true", "is not a path inside the project");
  refused("--job-id 'bad id' -- true", "invalid job id 'bad id'");
  // Each run starts from an empty checkpoint directory.
  write("ckpt/rc-kill/ckpt-5.pt", "left over");
  refused("--job-id rc -- true", "the checkpoint directory ckpt/rc-kill is not empty");
  job("rc2-ref", "exited", 1, "0");
  refused("--job-id rc2 -- true", "job id 'rc2-ref' is already in use");
  // The command's own options stay the command's, with --compare given or not ("sh -c" once
  // failed as "the following argument was not expected: -c").
  refused("--compare x --compare y --kills 0 -- sh -c 'exit 0'", "--kills 0 is out of range");
  const Result no_slurm = run("resume-check --slurm -- true", "PATH=/nonexistent");
  EXPECT_EQ(no_slurm.code, 2);
  EXPECT_NE(no_slurm.err.find("there is no sbatch on PATH"), std::string::npos) << no_slurm.err;
  // No engine: could not run (2), not "differs" (1).
  const Result r = run("resume-check -- true", "-u ENVPIN_ENGINE -u ENVPIN_CONTAINER_ENGINE PATH=/nonexistent");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no container engine"), std::string::npos) << r.err;
}

TEST_F(JobsCli, LogsStopAndResumeOfJobsThatDoNotRun) {
  project();
  job("done", "exited", 1, "0");
  Result r = run("logs --no-follow done");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "starting at step 0\ncheckpoint at step 5\n");
  // Following a finished job prints it and returns.
  r = run("logs done");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "starting at step 0\ncheckpoint at step 5\n");
  // Following a running job (a stand-in supervisor): what is appended while it runs, up to the
  // end of the job.
  job("live", "running", supervisor("live"));
  const std::string followed =
      shell("cd " + sh_quote(dir_.string()) +
            " && { ( sleep 0.5; echo 'step 2' >> logs/live.log; sleep 0.5;"
            " echo 'done' >> logs/live.log; sed -i 's/^state=running$/state=exited/' logs/live.status ) & " +
            sh_quote(ENVPIN_BINARY) + " logs live; }");
  EXPECT_EQ(followed, "starting at step 0\ncheckpoint at step 5\nstep 2\ndone\n");
  r = run("logs nope");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: there is no job 'nope' (no logs/nope.status)\n"
            "envpin: hint: list the jobs with: envpin jobs\n");
  r = run("stop done");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("job 'done' is not running (exited, exit 0)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("envpin resume done"), std::string::npos) << r.err;
  // A finished job is not re-run over its final checkpoint unless asked.
  r = run("resume done");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: job 'done' finished successfully (exit 0); resuming it would run it again over its "
            "final checkpoint\n"
            "envpin: hint: pass --force to run it again: envpin resume --force done\n");
  r = run("resume nope");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("there is no job 'nope'"), std::string::npos);
  // A job whose supervisor runs (a stand-in) is not resumed twice.
  job("busy", "running", supervisor("busy"));
  r = run("resume busy");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "envpin: error: job 'busy' is still running\nenvpin: hint: stop it first: envpin stop busy\n");
  // A job on a compute node: its pid means nothing here; it is neither lost nor stopped from here.
  job("remote", "running", 999999, "", "node-17");
  r = run("stop remote");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: job 'remote' runs on node-17, not here\n"
            "envpin: hint: stop it there, or with scancel when Slurm runs it\n");
  EXPECT_NE(run("jobs").out.find("remote                          running "), std::string::npos);
}

// An engine on PATH that answers like docker and records each `run`'s words, NUL-separated.
constexpr const char* kFakeEngine =
    "#!/bin/sh\ncase $1 in\n  version | image | rm) exit 0 ;;\n"
    "  stop) [ -z \"${FAKE_RUNS:-}\" ] || echo \"stop $*\" >> \"$FAKE_RUNS\"; exit 0 ;;\n"
    // A job's container carries its id as the label org.envpin.job; the dev container carries none.
    "  container) case $4 in *org.envpin.job*) case $5 in envpin-demo-dev-*) echo; exit 0 ;;"
    " envpin-demo-*) echo \"${5#envpin-demo-}\"; exit 0 ;; esac ;; esac; exit 1 ;;\n  ps) exit 1 ;;\n"
    "  run) shift; for a in \"$@\"; do printf '%s\\0' \"$a\"; done >> \"$FAKE_RUNS\"; printf '\\n' >> \"$FAKE_RUNS\";"
    " exit 0 ;;\nesac\nexit 0\n";

TEST_F(JobsCli, TheSavedCommandIsDataNeverShellCode) {
  project();
  write("bin/docker", kFakeEngine);
  fs::permissions(dir_ / "bin/docker", fs::perms::owner_all);
  const std::string env =
      "ENVPIN_ENGINE=" + sh_quote((dir_ / "bin/docker").string()) + " FAKE_RUNS=" + sh_quote((dir_ / "runs").string());
  const auto run_sh = [&](const std::string& args) {
    return shell("cd " + sh_quote(dir_.string()) + " && env " + env + " sh .envpin/run.sh " + args +
                 " >/dev/null 2>run.err; echo $?");
  };
  // Words that a shell would act on, a newline inside and at the end of a word, an empty word.
  const std::vector<std::string> words = {
      "python3", "-c", "print('$(touch CANARY)`touch CANARY`')", "a\nb", "100%0A%", "", "end\n"};
  std::string quoted;
  for (const auto& w : words) quoted += " " + sh_quote(w);
  ASSERT_EQ(run_sh("--job-id j1 --" + quoted), "0\n") << *io::read_file(dir_ / "run.err");
  EXPECT_EQ(io::read_file(dir_ / "logs/j1.args")->substr(0, 14), "envpin-args/1\n");
  // Resumed, the job gets exactly its words again.
  ASSERT_EQ(run_sh("--job-id j1 --resume"), "0\n") << *io::read_file(dir_ / "run.err");
  const std::string runs = *io::read_file(dir_ / "runs");
  const auto tail_of = [&](const std::string& line) {
    std::vector<std::string> argv;
    for (std::size_t at = 0; at < line.size();) {
      const std::size_t end = std::min(line.find('\0', at), line.size());
      argv.push_back(line.substr(at, end - at));
      at = end + 1;
    }
    return std::vector<std::string>(argv.end() - static_cast<long>(std::min(argv.size(), words.size())), argv.end());
  };
  const std::size_t first_end = runs.find("\0\n", 0, 2);
  ASSERT_NE(first_end, std::string::npos);
  EXPECT_EQ(tail_of(runs.substr(0, first_end + 1)), words);
  EXPECT_EQ(tail_of(runs.substr(first_end + 2, runs.size() - first_end - 3)), words);
  EXPECT_FALSE(fs::exists(dir_ / "CANARY"));
  // A planted args file (the old `set -- ...` form that run.sh sourced) is refused, not run:
  // through run.sh and through `envpin resume`.
  write("logs/j1.args", "set -- true; touch CANARY\n");
  EXPECT_EQ(run_sh("--job-id j1 --resume"), "2\n");
  EXPECT_NE(io::read_file(dir_ / "run.err")->find("is not a command saved by this run.sh"), std::string::npos)
      << *io::read_file(dir_ / "run.err");
  const Result r = run("resume --force j1", env);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "CANARY"));
  // An encoded file with a stray '%' is refused too.
  write("logs/j1.args", "envpin-args/1\ntrue\n%2\n");
  EXPECT_EQ(run_sh("--job-id j1 --resume"), "2\n");
  EXPECT_NE(io::read_file(dir_ / "run.err")->find("holds a '%' that is not %25 or %0A"), std::string::npos);
}

TEST_F(JobsCli, StopSignalsOnlyTheJobsOwnSupervisor) {
  project();
  write("bin/docker", kFakeEngine);
  fs::permissions(dir_ / "bin/docker", fs::perms::owner_all);
  // A project file named like the engine's subcommand, and a status whose engine= names it.
  write("evil", "#!/bin/sh\ntouch CANARY\n");
  fs::permissions(dir_ / "evil", fs::perms::owner_all);
  const std::string env = "PATH=" + sh_quote((dir_ / "bin").string()) + ":/usr/bin:/bin";
  // The status names this test's own process (alive, but not the project's run.sh): it is not
  // signalled (the test would die of SIGTERM), the job is lost, and the container is stopped
  // with the engine from PATH, never the status's.
  job("mine", "running", static_cast<int>(::getpid()), "", host(), (dir_ / "evil").string());
  Result r = run("stop mine", env);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "envpin: note: the recorded supervisor of job mine (pid " + std::to_string(::getpid()) +
                       ") is gone or is not this project's run.sh; nothing was signalled\n");
  EXPECT_EQ(r.out, "stopped container envpin-demo-mine of job mine\n");
  EXPECT_FALSE(fs::exists(dir_ / "CANARY"));
  EXPECT_NE(run("jobs").out.find("mine                            lost "), std::string::npos);
  // pid 1 with its own start time: not the supervisor either.
  job("init", "running", 1);
  EXPECT_NE(run("jobs").out.find("init                            lost "), std::string::npos);
  // The real supervisor (a stand-in run.sh of this project) is signalled and stops.
  const int pid = supervisor("real");
  job("real", "running", pid);
  r = run("stop real", env);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "stopped job real (exit ); continue it with: envpin resume real\n");
  // A pid whose start time does not match (a reused pid) is not it.
  const int other = supervisor("again");
  write("logs/again.status", "job=again\nstate=running\npid=" + std::to_string(other) + "\npid_start=1\n");
  r = run("stop again", env);
  EXPECT_NE(r.err.find("nothing was signalled"), std::string::npos) << r.err;
  EXPECT_EQ(::kill(other, 0), 0);  // still running
}

TEST_F(JobsCli, StatusFilesAreShownAsData) {
  project();
  job("ok", "exited", 1, "0");
  // Terminal escapes (a window title, clear-screen, colour) and a bidi override in a status.
  write("logs/evil.status", "job=evil\nstate=exited\nreason=\x1b]0;owned\x07\x1b[2J\x1b[31mred\n");
  write("logs/bidi.status",
        "job=bidi\nstate=exited\nreason=\xe2\x80\xae"
        "deggol\n");
  write("logs/junk.status", std::string(70000, 'x'));
  // A job name run.sh would refuse, and a file without one: listed, never the end of the list.
  write("logs/.hidden.status", "job=.hidden\nstate=exited\n");
  write("logs/no name.status", "state=exited\n");
  const Result r = run("jobs");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\xe2\x80\xae"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("evil                            unreadable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  line 3: 'reason' holds an escape character\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  line 3: 'reason' holds the bidirectional control U+202E\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("junk                            unreadable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".hidden                         unreadable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  line 1: 'job' is '.hidden', not a value run.sh writes\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no name"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok                              exited     0"), std::string::npos) << r.out;
  // Acting on such a job is one located error.
  const Result stop = run("stop evil");
  EXPECT_EQ(stop.code, 1);
  EXPECT_EQ(stop.err.substr(0, stop.err.find('\n')),
            "envpin: error: logs/evil.status:3:8: 'reason' holds an escape character");
}

// Identity by label, not by name: a status file planted under the development container's name
// (dev-<user>, envpin-demo-dev-<user>) never makes `envpin stop` stop that container.
TEST_F(JobsCli, APlantedStatusNeverStopsTheDevContainer) {
  project();
  write("bin/docker", kFakeEngine);
  fs::permissions(dir_ / "bin/docker", fs::perms::owner_all);
  const std::string user = ::getpwuid(::getuid())->pw_name;
  const std::string env =
      "PATH=" + sh_quote((dir_ / "bin").string()) + ":/usr/bin:/bin FAKE_RUNS=" + sh_quote((dir_ / "runs").string());
  job("dev-" + user, "running", static_cast<int>(::getpid()));
  const Result r = run("stop dev-" + user, env);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "runs")) << *io::read_file(dir_ / "runs");
  // A job's own container is still stopped: its label names the job.
  job("mine", "running", static_cast<int>(::getpid()));
  EXPECT_EQ(run("stop mine", env).out, "stopped container envpin-demo-mine of job mine\n");
  const std::string stops = io::read_file(dir_ / "runs").value_or("");
  EXPECT_EQ(stops.substr(0, 13), "stop stop -t ") << stops;
  EXPECT_EQ(stops.substr(stops.find_last_of(' ') + 1), "envpin-demo-mine\n") << stops;
}

// The host never runs the tree's generated scripts, which every container can write: envpin runs
// the copy it rendered and holds in its own state. A dev.sh replaced in the tree (--status ran it
// with no check) and bytes appended while the script runs (sh reads a file as it goes; the engine
// here appends them at its first call, as a container would) both run nothing.
TEST_F(JobsCli, TheHostRunsItsHeldScriptsNeverTheTrees) {
  write("envpin.yaml", std::string(kManifest) + "dev:\n  servers:\n    - {name: notebook, kind: jupyter}\n");
  write("envpin.lock", lock::to_toml(image_only_lock(manifest::load((dir_ / "envpin.yaml").string()))));
  ASSERT_EQ(run("generate").code, 0);
  const std::string pristine = *io::read_file(dir_ / ".envpin/dev.sh");
  write("bin/docker",
        "#!/bin/sh\nprintf '\\ntouch \"$PWNED\"\\n' >> \"$TREE_DEV\"\ncase $1 in version) exit 0 ;; esac\nexit 1\n");
  fs::permissions(dir_ / "bin/docker", fs::perms::owner_all);
  const std::string env = "ENVPIN_ENGINE=" + sh_quote((dir_ / "bin/docker").string()) +
                          " PWNED=" + sh_quote((dir_ / "PWNED").string()) +
                          " TREE_DEV=" + sh_quote((dir_ / ".envpin/dev.sh").string());
  // Replaced whole: --status, --url and --stop.
  write(".envpin/dev.sh", "touch " + sh_quote((dir_ / "PWNED").string()) + "\n");
  EXPECT_EQ(run("dev --status", env).out, "state none\n");
  run("dev --stop", env);
  EXPECT_FALSE(fs::exists(dir_ / "PWNED"));
  // Appended after envpin's check: --dry-run checks the tree, then runs.
  write(".envpin/dev.sh", pristine);
  const Result dry = run("dev --dry-run", env);
  EXPECT_NE(*io::read_file(dir_ / ".envpin/dev.sh"), pristine) << "the engine was never asked: " << dry.err;
  EXPECT_FALSE(fs::exists(dir_ / "PWNED")) << dry.err;
  // What ran is private: the held copy's directories are this user's only, the copy read-only,
  // and its bytes are what the tree held before it was touched.
  std::vector<fs::path> held;
  for (const auto& e : fs::recursive_directory_iterator(state_)) {
    const auto mode = e.symlink_status().permissions() & fs::perms::mask;
    if (e.is_directory()) EXPECT_EQ(mode, fs::perms::owner_all) << e.path();
    if (e.path().filename() == "dev.sh") held.push_back(e.path());
  }
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(fs::status(held[0]).permissions() & fs::perms::mask, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_EQ(*io::read_file(held[0]), pristine);
}

// The server of `envpin dev --host` is another machine: its answers are data (issue 61). An endless
// answer is cut at 1 MiB with one error, and its messages reach this terminal with no escape
// sequence or bidirectional control. The "server" here is a stand-in ssh.
TEST_F(JobsCli, TheServersAnswersAreData) {
  write("envpin.yaml", std::string(kManifest) + "dev:\n  servers:\n    - {name: notebook, kind: jupyter}\n");
  write("bin/ssh",
        "#!/bin/sh\nfor last; do :; done\ncase $last in\n"
        "  *--status*) head -c 2000000 /dev/zero | tr '\\0' a ;;\n"
        "  *--stop*) printf '\\033[31mred\\033]0;title\\007 \\342\\200\\256done\\n' >&2 ;;\n"
        "  *) exit 0 ;;\nesac\n");
  fs::permissions(dir_ / "bin/ssh", fs::perms::owner_all);
  const std::string env = "ENVPIN_SSH=" + sh_quote((dir_ / "bin/ssh").string());
  const Result status = run("dev --host box:/srv/p --status", env);
  EXPECT_EQ(status.code, 1);
  EXPECT_EQ(status.err.substr(0, status.err.find('\n')),
            "envpin: error: envpin on box answered more than 1 MiB to 'envpin dev --status': not read further");
  EXPECT_LT(status.out.size(), 4096u);
  const Result stop = run("dev --host box:/srv/p --stop", env);
  EXPECT_EQ(stop.code, 0) << stop.err;
  EXPECT_EQ(stop.err.find('\x1b'), std::string::npos) << stop.err;
  EXPECT_EQ(stop.err.find("\xe2\x80\xae"), std::string::npos) << stop.err;
  EXPECT_NE(stop.err.find("red"), std::string::npos) << stop.err;
}

// A keeper killed alone leaves the forward's ssh running in its process group, holding the laptop's
// port; `envpin dev --host ... --stop` ends that group from the keeper's state (issue 61). The
// keeper here is a session leader killed with SIGKILL (a zombie until something reaps it, or gone),
// its ssh a child that still runs.
TEST_F(JobsCli, TheForwardDiesWithItsKeeper) {
  write("envpin.yaml", std::string(kManifest) + "dev:\n  servers:\n    - {name: notebook, kind: jupyter}\n");
  write("bin/ssh", "#!/bin/sh\nexit 0\n");
  fs::permissions(dir_ / "bin/ssh", fs::perms::owner_all);
  const std::string ids = shell("cd " + sh_quote(dir_.string()) +
                                " && setsid sh -c 'sleep 120 & echo $$ $!; wait' >group 2>&1 </dev/null & sleep 0.5;"
                                " cat " +
                                sh_quote((dir_ / "group").string()));
  const auto space = ids.find(' ');
  ASSERT_NE(space, std::string::npos) << ids;
  const int keeper = std::stoi(ids.substr(0, space)), forward = std::stoi(ids.substr(space + 1));
  started_.push_back(forward);
  ::kill(keeper, SIGKILL);
  const fs::path forward_state = state_ / "envpin/forward" / pin::sha256_hex("box:/srv/p").substr(0, 16) / "state";
  fs::create_directories(forward_state.parent_path());
  io::write_atomic(forward_state, "pid " + std::to_string(keeper) + "\nstart 1\nport notebook 8888 8888\n", false);
  const auto runs = [](int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
  };
  ASSERT_TRUE(runs(forward));
  const Result stop = run("dev --host box:/srv/p --stop", "ENVPIN_SSH=" + sh_quote((dir_ / "bin/ssh").string()));
  EXPECT_EQ(stop.code, 0) << stop.err;
  for (int i = 0; i < 50 && runs(forward); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(runs(forward)) << "the forward outlived its keeper and --stop";
  EXPECT_FALSE(fs::exists(forward_state.parent_path()));
}

}  // namespace
}  // namespace envpin

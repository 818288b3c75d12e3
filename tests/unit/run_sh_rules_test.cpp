// SPDX-License-Identifier: Apache-2.0
// The job rules that live twice, in envpin's C++ (tool/jobs/) and in run.sh, which runs without
// envpin: each test runs run.sh's own rule (its library, templates/lib/run.sh, or its template)
// with sh and compares it with the C++ one on the same inputs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "jobs/checkpoints.hpp"
#include "jobs/project.hpp"

namespace envpin {
namespace {

namespace fs = std::filesystem;

const std::string kLibrary = std::string(ENVPIN_SOURCE_DIR) + "/templates/lib/run.sh";
// Every run.sh carries the checkpoint library before its own (templates/lib/checkpoints.sh).
const std::string kCheckpoints = std::string(ENVPIN_SOURCE_DIR) + "/templates/lib/checkpoints.sh";
const std::string kWithCheckpoints = ". '" + kCheckpoints + "'; ";
// The engine and image helpers run.sh and dev.sh share (templates/lib/image.sh).
const std::string kImageLibrary = std::string(ENVPIN_SOURCE_DIR) + "/templates/lib/image.sh";

// The job-id rule lives twice: jobs::check_job_id (envpin's commands) and run.sh's `case $job in`
// (the script runs without envpin). The script's pattern, taken from its library and run by sh,
// gives the same verdict on each id. It had no length limit: a 101-character id ran under run.sh
// and was refused by every envpin command after.
TEST(JobIds, RunShAndEnvpinAcceptTheSameIds) {
  const auto tmpl = io::read_file(kLibrary);
  ASSERT_TRUE(tmpl);
  const auto die = tmpl->find("die \"invalid job id '$job'\"");
  ASSERT_NE(die, std::string::npos);
  const auto case_at = tmpl->rfind("case $job in\n", die);
  ASSERT_NE(case_at, std::string::npos);
  const auto length = tmpl->find("longer than 100 characters", die);
  ASSERT_NE(length, std::string::npos);
  const auto end = tmpl->find('\n', length);
  // The rule as run.sh runs it: its case statement and length check, with die() exiting 1.
  const std::string script = "die() { exit 1; }\njob=$1\n" + tmpl->substr(case_at, end + 1 - case_at) + "exit 0\n";
  const std::vector<std::string> ids = {"a",
                                        "job-1",
                                        "A.b_c",
                                        "7",
                                        "-x",
                                        ".x",
                                        "_x",
                                        "a/b",
                                        "a b",
                                        "x\xc3\xa4",
                                        "a;b",
                                        "a$b",
                                        std::string(100, 'j'),
                                        std::string(101, 'j')};
  for (const std::string& id : ids) {
    bool envpin_ok = true;
    try {
      jobs::check_job_id(id);
    } catch (const diag::Error&) {
      envpin_ok = false;
    }
    const io::ProcessResult sh = io::run_process({"sh", "-c", script, "sh", id});
    EXPECT_EQ(sh.exit_code == 0, envpin_ok)
        << "'" << id << "' (" << id.size() << " bytes): run.sh " << (sh.exit_code == 0 ? "accepts" : "refuses")
        << " it, envpin " << (envpin_ok ? "accepts" : "refuses") << " it";
  }
}

// Which files are checkpoints lives twice too: jobs::is_checkpoint_name and run.sh's
// is_checkpoint (templates/lib/checkpoints.sh, run here by sh with the values generate writes).
TEST(CheckpointNames, RunShAndEnvpinAgree) {
  const std::string& lib = kCheckpoints;
  std::string defaults = "*tfevents*";
  for (const std::string_view ext : jobs::kNotCheckpointSuffixes) defaults += "\n*" + std::string(ext);
  const std::vector<std::string> names = {"ckpt.pt",        "model_best.pth.tar", "step-100.safetensors",
                                          "samples.PNG",    "train.log",          "events.out.tfevents.1.host",
                                          "notes.md",       ".hidden.pt",         "ckpt.pt.tmp",
                                          "ckpt.pt.sha256", "ckpt.pt.partial",    "ckpt.pt~",
                                          "ckpt-7.pt",      "final.bin",          "x.csv"};
  for (const jobs::Patterns& patterns : {jobs::Patterns{}, jobs::Patterns{"ckpt-*.pt", "final.[bp]in"}}) {
    std::string lines;
    for (const std::string& p : patterns) lines += (lines.empty() ? "" : "\n") + p;
    for (const std::string& name : names) {
      const io::ProcessResult sh = io::run_process(
          {"sh", "-c", ". \"$1\"; checkpoint_patterns=$2; not_checkpoint_patterns=$3; is_checkpoint \"$4\"", "sh", lib,
           lines, defaults, name});
      EXPECT_EQ(sh.exit_code == 0, jobs::is_checkpoint_name(name, patterns))
          << name << " with patterns '" << lines << "': run.sh " << (sh.exit_code == 0 ? "takes" : "skips") << " it";
    }
  }
}

// The engine: ENVPIN_ENGINE, else docker, else podman on PATH. envpin's commands also read
// ENVPIN_CONTAINER_ENGINE (the lock's variable) before this test: `envpin jobs` then asked
// another engine than the one run.sh ran the job on, and called the job lost.
TEST(EngineChoice, RunShAndEnvpinChooseTheSameEngine) {
  const fs::path dir = fs::temp_directory_path() / ("envpin-engine-" + std::to_string(::getpid()));
  fs::create_directories(dir / "both");
  fs::create_directories(dir / "podman");
  fs::create_directories(dir / "none");
  for (const char* p : {"both/docker", "both/podman", "podman/podman"}) {
    io::write_atomic(dir / p, "#!/bin/sh\nexit 0\n", true);
  }
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  struct Case {
    const char* path;
    const char* engine;            // ENVPIN_ENGINE, nullptr: unset
    const char* container_engine;  // ENVPIN_CONTAINER_ENGINE, nullptr: unset
  };
  for (const Case& c :
       {Case{"both", nullptr, nullptr}, Case{"podman", nullptr, nullptr}, Case{"none", nullptr, nullptr},
        Case{"both", "podman", nullptr}, Case{"both", nullptr, "podman"}, Case{"none", nullptr, "none"}}) {
    SCOPED_TRACE(std::string(c.path) + " ENVPIN_ENGINE=" + (c.engine ? c.engine : "-") +
                 " ENVPIN_CONTAINER_ENGINE=" + (c.container_engine ? c.container_engine : "-"));
    // Only the case's directory and the system's tools the shell needs (no docker or podman there).
    const std::string path = (dir / c.path).string() + ":/usr/bin:/bin";
    ::setenv("PATH", path.c_str(), 1);
    c.engine ? ::setenv("ENVPIN_ENGINE", c.engine, 1) : ::unsetenv("ENVPIN_ENGINE");
    c.container_engine ? ::setenv("ENVPIN_CONTAINER_ENGINE", c.container_engine, 1)
                       : ::unsetenv("ENVPIN_CONTAINER_ENGINE");
    std::string cpp;
    try {
      cpp = jobs::container_engine();
    } catch (const diag::Error&) {
    }
    const io::ProcessResult sh = io::run_process({"/bin/sh", "-c", ". \"$1\"; choose_engine", "sh", kImageLibrary});
    std::string chosen = sh.out;
    if (!chosen.empty() && chosen.back() == '\n') chosen.pop_back();
    EXPECT_EQ(chosen, cpp);
  }
  ::setenv("PATH", old_path.c_str(), 1);
  ::unsetenv("ENVPIN_ENGINE");
  ::unsetenv("ENVPIN_CONTAINER_ENGINE");
  fs::remove_all(dir);
}

// Which inherited XDG_RUNTIME_DIR rootless podman runs without lives twice too: run.sh's
// podman_session (the job's own podman) and jobs::podman_session (envpin jobs/stop/logs). A job
// Slurm starts inherits the submitting session's value, which the node does not have.
TEST(PodmanSession, RunShAndEnvpinDropTheSameRuntimeDirs) {
  const fs::path dir = fs::temp_directory_path() / ("envpin-xdg-" + std::to_string(::getpid()));
  fs::create_directories(dir / "own");
  fs::create_directories(dir / "other");
  ASSERT_EQ(::chown((dir / "other").c_str(), 65534, 65534), 0);  // nobody's
  io::write_atomic(dir / "file", "", false);
  fs::create_directories(dir / "read-only");
  fs::permissions(dir / "read-only", fs::perms::owner_read | fs::perms::owner_exec);
  const bool root = ::geteuid() == 0;  // root writes a read-only directory all the same
  const struct {
    std::string value;
    bool kept;
  } cases[] = {{(dir / "own").string(), true},
               {(dir / "missing").string(), false},
               {"/run/user/4711", false},
               {(dir / "file").string(), false},
               {(dir / "other").string(), false},
               {(dir / "read-only").string(), root},
               {"", false}};
  for (const auto& c : cases) {
    ::setenv("XDG_RUNTIME_DIR", c.value.c_str(), 1);
    jobs::podman_session();
    const char* after = std::getenv("XDG_RUNTIME_DIR");
    const bool cpp = after != nullptr && *after;
    const io::ProcessResult sh =
        io::run_process({"/bin/sh", "-c",
                         ". \"$1\"; engine=podman; XDG_RUNTIME_DIR=$2; export XDG_RUNTIME_DIR; podman_session "
                         "2>/dev/null; printf %s \"${XDG_RUNTIME_DIR:-}\"",
                         "sh", kImageLibrary, c.value});
    EXPECT_EQ(cpp, c.kept) << "envpin, XDG_RUNTIME_DIR=" << c.value;
    EXPECT_EQ(!sh.out.empty(), c.kept) << "run.sh, XDG_RUNTIME_DIR=" << c.value << ": '" << sh.out << "'";
  }
  ::unsetenv("XDG_RUNTIME_DIR");
  fs::permissions(dir / "read-only", fs::perms::owner_all);
  fs::remove_all(dir);
}

// What run.sh's write_status writes is what envpin's grammar reads, every key, as written.
TEST(StatusFile, WhatRunShWritesEnvpinReads) {
  const fs::path logs = fs::temp_directory_path() / ("envpin-status-" + std::to_string(::getpid()));
  fs::create_directories(logs);
  const std::string script =
      kWithCheckpoints +
      ". \"$1\"; logs=$2; tag=train-7; status_file=$logs/$tag.status; job=train-7; restarts=2; "
      "max_restarts=3; started=2026-12-03T10:00:00Z; self_start=12345; engine=podman; container=envpin-train-7; "
      "image=envpin/demo:0123456789abcdef; ckpt=/data/ckpt/train-7; node_rank=0; nnodes=1; log=$logs/train-7.log; "
      "write_status failed 137 'the same failure twice in a row (exit 137)'";
  const io::ProcessResult sh = io::run_process({"/bin/sh", "-c", script, "sh", kLibrary, logs.string()});
  ASSERT_EQ(sh.exit_code, 0) << sh.err;
  const jobs::Status s = jobs::read_status(logs / "train-7.status");
  EXPECT_EQ(jobs::field(s, "job"), "train-7");
  EXPECT_EQ(jobs::field(s, "state"), "failed");
  EXPECT_EQ(jobs::field(s, "exit"), "137");
  EXPECT_EQ(jobs::field(s, "restarts"), "2");
  EXPECT_EQ(jobs::field(s, "engine"), "podman");
  EXPECT_EQ(jobs::field(s, "pid_start"), "12345");
  EXPECT_EQ(jobs::field(s, "node"), "0/1");
  EXPECT_EQ(jobs::field(s, "reason"), "the same failure twice in a row (exit 137)");
  EXPECT_EQ(jobs::field(s, "checkpoints"), "/data/ckpt/train-7");
  fs::remove_all(logs);
}

// "Still running" lives twice: jobs::shown (envpin resume, stop, jobs) and run.sh's job_runs_here
// (sh .envpin/run.sh --resume). Both judge the same recorded status with the same live processes
// and the same engine answers. run.sh took any live process with the recorded pid and start for
// the supervisor, and resumed over a container running without one.
pid_t start_process(const fs::path& dir, std::vector<std::string> argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // A process group of its own, killed whole, and no inherited output: ctest waits for every
    // process holding the test's output open (its `sleep` too) before it reports.
    ::setpgid(0, 0);
    const int null = ::open("/dev/null", O_RDWR);
    for (int fd : {0, 1, 2}) ::dup2(null, fd);
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv("/bin/sh", args.data());
    ::_exit(127);
  }
  return pid;
}

// Polls PRED until it holds, for at most 60 s: a deadline for a loaded CI machine (ctest -j2 beside
// image builds), never a measured time. Three-second deadlines here failed there.
template <class Pred>
bool wait_until(Pred pred) {
  for (int i = 0; i < 6000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

// Its start time once it runs `sh SCRIPT` (argv[1] of its command line is `second`).
std::string started(pid_t pid, const std::string& second) {
  for (int i = 0; i < 3000; ++i) {  // a deadline (30 s on a loaded machine), not a measured time
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    const std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(std::string(1, '\0') + second + '\0') != std::string::npos) return jobs::process_start(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

TEST(StillRunning, RunShAndEnvpinJudgeAJobAlike) {
  const fs::path dir = fs::temp_directory_path() / ("envpin-still-" + std::to_string(::getpid()));
  fs::create_directories(dir / ".envpin");
  fs::create_directories(dir / "bin");
  io::write_atomic(dir / ".envpin/run.sh", "sleep 30\n", false);
  io::write_atomic(dir / "other.sh", "sleep 30\n", false);
  // `setsid sh .envpin/run.sh` as it looks before setsid has executed sh: /bin/sh named setsid
  // runs the file "sh" here, with the script as its argument.
  io::write_atomic(dir / "sh", "sleep 30\n", false);
  // The engine: `container inspect` answers what container.answer holds, or fails without one.
  io::write_atomic(dir / "bin/docker",
                   "#!/bin/sh\n[ \"$1 $2\" = 'container inspect' ] || exit 9\n"
                   "[ -f '" +
                       (dir / "container.answer").string() +
                       "' ] || { echo 'Error: no such container' >&2; exit 1; }\n"
                       "cat '" +
                       (dir / "container.answer").string() + "'\n",
                   true);
  const pid_t sup = start_process(dir, {"sh", (dir / ".envpin/run.sh").string()});
  const pid_t rel = start_process(dir, {"setsid", "sh", ".envpin/run.sh"});
  const pid_t other = start_process(dir, {"sh", (dir / "other.sh").string()});
  const std::string sup_start = started(sup, (dir / ".envpin/run.sh").string());
  const std::string rel_start = started(rel, "sh");
  const std::string other_start = started(other, (dir / "other.sh").string());
  const pid_t gone = start_process(dir, {"sh", "-c", "exit 0"});
  ::waitpid(gone, nullptr, 0);

  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", ((dir / "bin").string() + ":/usr/bin:/bin").c_str(), 1);
  ::setenv("ENVPIN_ENGINE", "docker", 1);
  utsname u{};
  ::uname(&u);
  jobs::Project p;
  p.m.name.value = "demo";
  p.run_script = dir / ".envpin/run.sh";
  struct Case {
    std::string what, state;
    pid_t pid;
    std::string start, host, container;  // container: the engine's answer, empty: none
  };
  const std::string here = u.nodename;
  const std::vector<Case> cases = {
      {"its supervisor", "running", sup, sup_start, here, ""},
      {"its supervisor, no host recorded", "restarting", sup, sup_start, "", ""},
      {"its supervisor under setsid, relative", "running", rel, rel_start, here, ""},
      {"the pid reused (another start)", "running", sup, sup_start + "1", here, ""},
      {"another program with that pid and start", "running", other, other_start, here, ""},
      {"another program, its container running", "running", other, other_start, here, "running 0"},
      {"supervisor gone, container running", "running", gone, "1", here, "running 0"},
      {"supervisor gone, container paused", "restarting", gone, "1", here, "paused 0"},
      {"supervisor gone, container exited 0", "running", gone, "1", here, "exited 0"},
      {"supervisor gone, container exited 137", "running", gone, "1", here, "exited 137"},
      {"supervisor gone, the engine's answer has a third word", "running", gone, "1", here, "running 0 x"},
      {"supervisor gone, the engine's answer on two lines", "running", gone, "1", here, "running\n0"},
      {"supervisor gone, no exit code", "running", gone, "1", here, "running"},
      {"supervisor gone, no container", "running", gone, "1", here, ""},
      {"ended, its supervisor alive", "exited", sup, sup_start, here, "running 0"},
      {"failed", "failed", gone, "1", here, ""},
  };
  ASSERT_FALSE(sup_start.empty());
  ASSERT_FALSE(rel_start.empty());
  ASSERT_FALSE(other_start.empty());
  int judged_running = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    fs::remove(dir / "container.answer");
    if (!c.container.empty()) io::write_atomic(dir / "container.answer", c.container + "\n", false);
    const jobs::Status s = {{"job", "train-1"},
                            {"state", c.state},
                            {"pid", std::to_string(c.pid)},
                            {"pid_start", c.start},
                            {"host", c.host}};
    const bool cpp = jobs::active(jobs::shown(p, s).state);
    const io::ProcessResult sh = io::run_process(
        {"/bin/sh", "-c",
         kWithCheckpoints +
             ". \"$1\"; engine=docker; container=envpin-demo-train-1; recorded_state=$2; recorded_pid=$3; "
             "recorded_start=$4; recorded_host=$5; job_runs_here \"$6\"",
         "sh", kLibrary, c.state, std::to_string(c.pid), c.start, c.host, p.run_script.string()});
    EXPECT_EQ(sh.exit_code == 0, cpp) << "run.sh says '" << sh.out << "', envpin " << jobs::shown(p, s).state;
    judged_running += cpp ? 1 : 0;
  }
  EXPECT_EQ(judged_running, 7);  // both outcomes are exercised
  ::setenv("PATH", old_path.c_str(), 1);
  ::unsetenv("ENVPIN_ENGINE");
  for (const pid_t pid : {sup, rel, other}) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  fs::remove_all(dir);
}

// `envpin jobs` asks the engine once for all the project's containers (one `ps`, not an inspect
// per job: issue 48): docker's and podman 4's status texts (podman's as its ps printed them for
// e2e.jobs_podman), the exit code from "Exited (N) ...", and no answer from lines that do not
// parse or name another project. The
// verdicts are those the per-job inspect gives (the case above): the same shown() judges.
TEST(ContainerSnapshot, OneListingJudgesEveryJobAsItsInspectWould) {
  const fs::path dir = fs::temp_directory_path() / ("envpin-snapshot-" + std::to_string(::getpid()));
  fs::create_directories(dir / "bin");
  io::write_atomic(dir / "bin/docker",
                   "#!/bin/sh\necho \"$*\" >>'" + (dir / "calls").string() +
                       "'\n[ \"$1\" = ps ] || exit 9\n"
                       "printf '%s\\n' 'envpin-demo-run-1|Up 3 minutes' 'envpin-demo-paused-1|Up 1 minute (Paused)' "
                       "'envpin-demo-podpaused-1|Paused' 'envpin-demo-podrun-1|Up 2 seconds ago' "
                       "'envpin-demo-done-1|Exited (0) 2 minutes ago' "
                       "'envpin-demo-killed-1|Exited (137) Less than a second ago' 'envpin-demo-odd-1|Exited' "
                       "'envpin-demo-bad-1 running' 'envpin-other-x-1|Up 1 hour' 'envpin-demo-made-1|Created'\n",
                   true);
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", ((dir / "bin").string() + ":/usr/bin:/bin").c_str(), 1);
  ::setenv("ENVPIN_ENGINE", "docker", 1);
  utsname u{};
  ::uname(&u);
  jobs::Project p;
  p.m.name.value = "demo";
  const jobs::ContainerSnapshot containers(p);
  const auto shown = [&](const std::string& job) {
    const jobs::Status s = {
        {"job", job}, {"state", "running"}, {"pid", "999999"}, {"pid_start", "1"}, {"host", u.nodename}};
    const jobs::Shown v = jobs::shown(p, s, &containers);
    return v.state + (v.exit.empty() ? "" : " " + v.exit);
  };
  EXPECT_EQ(shown("run-1"), "running");
  EXPECT_EQ(shown("paused-1"), "running");
  EXPECT_EQ(shown("podpaused-1"), "running");
  EXPECT_EQ(shown("podrun-1"), "running");
  EXPECT_EQ(shown("done-1"), "exited 0");
  EXPECT_EQ(shown("killed-1"), "lost 137");
  EXPECT_EQ(shown("odd-1"), "lost") << "an exited container without its code is no answer";
  EXPECT_EQ(shown("bad-1"), "lost");
  EXPECT_EQ(shown("x-1"), "lost") << "envpin-other-x-1 is another project's";
  EXPECT_EQ(shown("made-1"), "lost");
  EXPECT_EQ(shown("none-1"), "lost");
  const std::string calls = io::read_file(dir / "calls").value_or("");
  EXPECT_EQ(calls, "ps -a --no-trunc --filter name=envpin-demo- --format {{.Names}}|{{.Status}}\n")
      << "one question for eleven jobs";
  ::setenv("PATH", old_path.c_str(), 1);
  ::unsetenv("ENVPIN_ENGINE");
  fs::remove_all(dir);
}

// Under ch-run the container is a session run.sh's wrapper records in <logs>/<job>.ch-run. Whether
// it still runs lives twice too: run.sh's ch_running (its `running` under ch-run) and
// jobs::container_state. Both judge the same records with the same live processes: the wrapper
// itself, its session with the wrapper killed, another process with the recorded pid and start,
// a record with the exit, from another host, or not in the grammar.
TEST(StillRunning, RunShAndEnvpinJudgeACharliecloudSessionAlike) {
  const fs::path dir = fs::temp_directory_path() / ("envpin-ch-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path record = dir / "train-1.ch-run";
  const std::string container = "envpin-demo-train-1";
  // Every process group started here is killed however the test ends (an ASSERT returns early).
  struct Reaper {
    std::vector<pid_t> groups;
    ~Reaper() {
      for (const pid_t g : groups) ::kill(-g, SIGKILL);
    }
  } reaper;
  // The wrapper as run_ch starts it, the job a `sleep` (a member of its session, long enough to
  // outlive the test on a loaded machine); `deaf`: one that ignores SIGTERM.
  const auto start_session = [&](const fs::path& file, bool deaf = false) {
    const pid_t pid =
        start_process(dir, {"sh", "-c",
                            std::string(deaf ? "trap '' TERM; " : "") +
                                ". \"$1\"; exec setsid -w sh -c \"$ch_wrapper\" envpin-ch-run \"$2\" \"$3\" sleep 600",
                            "sh", kLibrary, container, file.string()});
    reaper.groups.push_back(pid);
    wait_until([&] { return fs::exists(file); });
    if (const auto r = jobs::parse_ch_record(io::read_file(file).value_or(""))) reaper.groups.push_back(r->pid);
    return pid;
  };
  const pid_t waiter = start_session(record, true);
  const std::string live = io::read_file(record).value_or("");
  const auto leader = jobs::parse_ch_record(live);
  ASSERT_TRUE(leader) << live;
  const fs::path orphan_record = dir / "orphan.ch-run";
  const pid_t orphan_waiter = start_session(orphan_record);
  const auto orphan = jobs::parse_ch_record(io::read_file(orphan_record).value_or(""));
  ASSERT_TRUE(orphan);
  // Once the wrapper has started its `sleep` (the record is written just before): the `sleep` in the
  // session. Not any member: right after the record appears, its `mv` (or a command substitution)
  // may still be one, and a wrapper killed then never starts the job (a flake under load).
  const auto member_runs = [&] {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      std::string stat;
      try {
        stat = io::read_file(entry.path() / "stat").value_or("");
      } catch (const diag::Error&) {
        continue;  // it ended meanwhile
      }
      const auto paren = stat.rfind(") ");
      if (paren == std::string::npos || entry.path().filename() == std::to_string(orphan->pid)) continue;
      std::istringstream in(stat.substr(paren + 2));
      std::string state, ppid, pgrp, session;
      const bool sleeping = stat.find(" (sleep) ") != std::string::npos;
      if (in >> state >> ppid >> pgrp >> session && session == std::to_string(orphan->pid) && sleeping) return true;
    }
    return false;
  };
  ASSERT_TRUE(wait_until(member_runs));
  ::kill(orphan->pid, SIGKILL);  // the wrapper only: its `sleep` runs on in the session
  ::waitpid(orphan_waiter, nullptr, 0);
  ASSERT_TRUE(wait_until([&] { return !fs::exists("/proc/" + std::to_string(orphan->pid)); }));

  utsname u{};
  ::uname(&u);
  const std::string here = u.nodename;
  const std::string me = std::to_string(::getpid());
  struct Case {
    std::string what, text;
  };
  const std::vector<Case> cases = {
      {"the wrapper runs", live},
      {"the wrapper killed, its job runs on", io::read_file(orphan_record).value_or("")},
      {"ended: the exit recorded", live + "exit=0\n"},
      {"another process with the recorded pid and start",
       "pid=" + me + "\nstart=" + jobs::process_start(::getpid()) + "\nhost=" + here + "\n"},
      {"the pid reused (another start)", "pid=" + std::to_string(leader->pid) + "\nstart=1\nhost=" + here + "\n"},
      {"another host", "pid=" + std::to_string(leader->pid) + "\nstart=" + leader->start + "\nhost=elsewhere\n"},
      {"a key twice", live + "pid=1\n"},
      {"a pid that is not a number", "pid=1;true\nstart=1\nhost=" + here + "\n"},
      {"no start", "pid=" + std::to_string(leader->pid) + "\nhost=" + here + "\n"},
  };
  ::setenv("ENVPIN_ENGINE", "ch-run", 1);
  jobs::Project p;
  p.m.name.value = "demo";
  p.logs = dir;
  int judged_running = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    io::write_atomic(dir / "case.ch-run", c.text, false);
    fs::rename(dir / "case.ch-run", dir / "judged.ch-run");
    const auto state = jobs::container_state(p, "judged");
    const bool cpp = state && state->status == "running";
    const io::ProcessResult sh =
        io::run_process({"/bin/sh", "-c", ". \"$1\"; engine=ch-run; container=$2; ch_file=$3; running", "sh", kLibrary,
                         "envpin-demo-judged", (dir / "judged.ch-run").string()});
    // The container name is the judged job's: the wrapper's own name is train-1's.
    const bool own = c.what == "the wrapper runs";
    if (own) {
      EXPECT_FALSE(cpp) << "another job's wrapper is not this job's container";
      const io::ProcessResult ours =
          io::run_process({"/bin/sh", "-c", ". \"$1\"; engine=ch-run; container=$2; ch_file=$3; running", "sh",
                           kLibrary, container, record.string()});
      EXPECT_EQ(ours.exit_code, 0);
      const auto train = jobs::container_state(p, "train-1");
      EXPECT_TRUE(train && train->status == "running");
      judged_running += 1;
    } else {
      EXPECT_EQ(sh.exit_code == 0, cpp) << "run.sh says " << sh.exit_code << ", envpin "
                                        << (state ? state->status : "none");
      judged_running += cpp ? 1 : 0;
    }
    if (c.what == "ended: the exit recorded") EXPECT_TRUE(state && state->status == "exited" && state->exit == 0);
  }
  EXPECT_EQ(judged_running, 2);  // the wrapper, and its session without it
  // envpin stop's way: SIGTERM to the session, then SIGKILL to all but the wrapper, which records
  // 137 (a SIGKILL to the whole group killed the wrapper too: no exit, shown as lost).
  EXPECT_TRUE(jobs::stop_ch_session(p, "train-1", 1));
  ::waitpid(waiter, nullptr, 0);
  const auto ended = jobs::container_state(p, "train-1");
  EXPECT_TRUE(ended && ended->status == "exited" && ended->exit == 137) << io::read_file(record).value_or("");
  ::unsetenv("ENVPIN_ENGINE");
  ::kill(-orphan->pid, SIGKILL);
  ::kill(-leader->pid, SIGKILL);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace envpin

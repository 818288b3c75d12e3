// SPDX-License-Identifier: Apache-2.0
// The job state run.sh keeps (<logs>/<job>.status) is read as data with a grammar: only run.sh's
// keys, each value in its own charset; anything else is one located error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "diag/error.hpp"
#include "jobs/project.hpp"

namespace envpin::jobs {
namespace {

constexpr const char* kStatus =
    "job=train-1\nstate=running\nexit=\nrestarts=0\nmax_restarts=3\nstarted=2026-12-02T10:00:00Z\npid=4242\n"
    "pid_start=123456\nhost=gpu-7\nengine=docker\ncontainer=envpin-demo-train-1\n"
    "image=envpin/demo:0123456789abcdef\ncheckpoints=/srv/ckpt/train-1\nnode=0/1\nlog=/srv/logs/train-1.log\n"
    "reason=exit 3; restart 1 of 3 in 10 s\n";

std::string error_of(const std::string& text, const std::string& name = "logs/train-1.status") {
  try {
    parse_status(text, name);
  } catch (const diag::Error& e) {
    const auto& w = e.where();
    return (w ? w->file + ":" + std::to_string(w->line) + ":" + std::to_string(w->column) + ": " : "") + e.message();
  }
  return "";
}

TEST(JobStatus, ReadsWhatRunShWrites) {
  const Status s = parse_status(kStatus, "logs/train-1.status");
  EXPECT_EQ(s.at("state"), "running");
  EXPECT_EQ(s.at("pid_start"), "123456");
  EXPECT_EQ(s.at("reason"), "exit 3; restart 1 of 3 in 10 s");
  EXPECT_EQ(s.at("exit"), "");
  // A node's own file names the job it belongs to.
  EXPECT_NO_THROW(parse_status(kStatus, "logs/train-1.node2.status"));
  EXPECT_TRUE(parse_status("", "logs/x.status").empty());
}

TEST(JobStatus, RefusesWhatRunShNeverWrites) {
  const std::string base = kStatus;
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string t = base;
    t.replace(t.find(from), from.size(), to);
    return error_of(t);
  };
  EXPECT_EQ(with("pid=4242", "pid=1; kill -9 -1"),
            "logs/train-1.status:7:5: 'pid' is '1; kill -9 -1', not a value run.sh writes");
  EXPECT_EQ(with("pid=4242", "pid=-1"), "logs/train-1.status:7:5: 'pid' is '-1', not a value run.sh writes");
  EXPECT_EQ(with("engine=docker", "engine=./rm -rf"),
            "logs/train-1.status:10:8: 'engine' is './rm -rf', not a value run.sh writes");
  EXPECT_EQ(with("state=running", "state=done"),
            "logs/train-1.status:2:7: 'state' is 'done', not a value run.sh writes");
  EXPECT_EQ(with("reason=exit 3", "reason=\x1b]0;owned\x07"),
            "logs/train-1.status:16:8: 'reason' holds an escape character");
  EXPECT_EQ(with("reason=exit 3",
                 "reason=\xe2\x80\xae"
                 "3 tixe"),
            "logs/train-1.status:16:8: 'reason' holds the bidirectional control U+202E");
  EXPECT_EQ(with("host=gpu-7", "host=\xff"), "logs/train-1.status:9:6: 'host' holds the byte 0xff, which is not UTF-8");
  EXPECT_EQ(with("node=0/1", "node=0/x"), "logs/train-1.status:14:6: 'node' is '0/x', not a value run.sh writes");
  EXPECT_EQ(with("checkpoints=/srv", "checkpoints=srv"),
            "logs/train-1.status:13:13: 'checkpoints' is 'srv/ckpt/train-1', not a value run.sh writes");
  EXPECT_EQ(with("node=0/1\n", "node=0/1\nargs=set -- x\n"),
            "logs/train-1.status:15:1: 'args' is not a key of a job's status");
  EXPECT_EQ(with("node=0/1\n", "node=0/1\nstate=exited\n"),
            "logs/train-1.status:15:1: 'state' appears twice in the job's status");
  EXPECT_EQ(with("node=0/1\n", "node=0/1\n\n"),
            "logs/train-1.status:15:1: a line of the job's status is not key=value");
  EXPECT_EQ(with("job=train-1", "job=other"), "logs/train-1.status:1:1: the status names job 'other', not 'train-1'");
  EXPECT_EQ(with("restarts=0", "restarts=" + std::string(40, '9')),
            "logs/train-1.status:4:10: 'restarts' is '" + std::string(40, '9') + "', not a value run.sh writes");
}

TEST(JobStatus, NoProcessIsTakenForTheSupervisorByItsPidAlone) {
  // This test's own process: alive, with a start time, but not the project's run.sh.
  const std::string start = process_start(static_cast<int>(::getpid()));
  ASSERT_FALSE(start.empty());
  EXPECT_EQ(process_start(static_cast<int>(::getpid())), start);
  EXPECT_EQ(process_start(0), "");
  EXPECT_EQ(process_start(999999999), "");
  Project p;
  p.run_script = "/nonexistent/.envpin/run.sh";
  EXPECT_FALSE(is_supervisor(p, static_cast<int>(::getpid()), start));
  EXPECT_FALSE(is_supervisor(p, 1, process_start(1)));
  Status s = {{"state", "running"}, {"pid", std::to_string(::getpid())}, {"pid_start", start}};
  EXPECT_FALSE(supervisor_alive(p, s));
  EXPECT_EQ(shown_state(p, s), "lost");
  EXPECT_FALSE(signal_supervisor(p, s, 0));
}

}  // namespace
}  // namespace envpin::jobs

namespace envpin::jobs {
namespace {

// run.sh --detach records the supervisor as soon as it is started: `setsid sh run.sh ...`, which
// for a moment is setsid itself (same pid, same start). resume-check read that moment as a job
// that had ended ("job good-kill ended lost", under load). Here a process whose argv is exactly
// that stays so: /bin/sh named setsid, running the file "sh" of its directory.
TEST(JobStatus, TheSupervisorIsKnownWhileSetsidStartsIt) {
  char tmpl[] = "/tmp/envpin-setsid-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  std::filesystem::create_directories(dir / ".envpin");
  std::ofstream(dir / ".envpin/run.sh") << "exit 0\n";
  std::ofstream(dir / "sh") << "sleep 30\n";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Its own process group, killed whole, and none of the test's output: ctest waits for every
    // process that holds it open (the `sleep 30` too) before it reports (this test took 30 s).
    ::setpgid(0, 0);
    const int null = ::open("/dev/null", O_RDWR);
    for (int fd : {0, 1, 2}) ::dup2(null, fd);
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    char* const argv[] = {const_cast<char*>("setsid"), const_cast<char*>("sh"), const_cast<char*>(".envpin/run.sh"),
                          nullptr};
    ::execv("/bin/sh", argv);
    ::_exit(127);
  }
  std::string start;
  for (int i = 0; i < 200; ++i) {  // until the exec happened
    std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
    std::string text((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (text.starts_with(std::string("setsid\0sh\0", 10))) {
      start = process_start(pid);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Project p;
  p.run_script = dir / ".envpin/run.sh";
  const bool known = !start.empty() && is_supervisor(p, pid, start);
  Project other;
  other.run_script = dir / "other/run.sh";
  const bool other_known = !start.empty() && is_supervisor(other, pid, start);
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(start.empty());
  EXPECT_TRUE(known);
  EXPECT_FALSE(other_known);
}

// Issue 32, 4: a job whose supervisor is gone or on another node is what Slurm says of it. What
// scontrol and sacct print is data: read by its words, anything else is no answer.
TEST(SlurmTruth, ScontrolAndSacctAreReadAsData) {
  const auto sc = parse_scontrol_job(
      "JobId=42 JobName=job.sbatch UserId=me(1000) JobState=CANCELLED Reason=None Dependency=(null) "
      "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:9 RunTime=00:00:07\n");
  ASSERT_TRUE(sc.has_value());
  EXPECT_EQ(sc->state, "CANCELLED");
  EXPECT_EQ(sc->exit, "0:9");
  EXPECT_TRUE(sc->ended());
  const auto running = parse_scontrol_job("JobId=43 JobState=RUNNING ExitCode=0:0\n");
  ASSERT_TRUE(running.has_value());
  EXPECT_FALSE(running->ended());
  const auto sa = parse_sacct_job("CANCELLED by 0|0:15\n");
  ASSERT_TRUE(sa.has_value());
  EXPECT_EQ(sa->state, "CANCELLED");
  EXPECT_EQ(sa->exit, "0:15");
  EXPECT_EQ(parse_sacct_job("COMPLETED|0:0\n")->state, "COMPLETED");
  for (const char* bad :
       {"", "slurm_load_jobs error: Invalid job id specified\n", "JobState=RUN\x1b[2JNING ExitCode=0:0",
        "JobState=COMPLETED ExitCode=0", "JobState=COMPLETED ExitCode=99999:0", "JobState= ExitCode=0:0"})
    EXPECT_FALSE(parse_scontrol_job(bad).has_value()) << bad;
  for (const char* bad : {"", "COMPLETED", "completed|0:0", "COMPLETED|0:0; rm -rf /", "|0:0"})
    EXPECT_FALSE(parse_sacct_job(bad).has_value()) << bad;
  // Not a job number: Slurm is not asked.
  EXPECT_FALSE(slurm_job_state("1; id").has_value());
}

}  // namespace
}  // namespace envpin::jobs

// SPDX-License-Identifier: Apache-2.0
// Removing finished jobs: `envpin rm`, `envpin jobs prune`, the listing's cap (`envpin jobs`,
// `--all`) and jobs::remove_job, which resume-check calls for its own jobs.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "cli/cli_fixture.hpp"
#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "jobs/cleanup.hpp"
#include "jobs/project.hpp"

namespace envpin {
namespace {

constexpr const char* kManifest =
    "envpin: 1\nname: demo\nbase: 127.0.0.1:5000/envpin/bookworm:12\nos: debian12\n"
    "jobs: {checkpoints: {path: /checkpoints, host: ckpt}, logs: logs}\n";

class JobCleanup : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    write("envpin.yaml", kManifest);
  }
  void TearDown() override {
    for (int pid : started_) ::kill(pid, SIGKILL);
    Cli::TearDown();
  }
  jobs::Project project() { return jobs::load_project((dir_ / "envpin.yaml").string()); }
  // A finished job as run.sh leaves it: status, arguments, log and a checkpoint.
  void finished(const std::string& id, const std::string& state = "exited", const std::string& exit = "0") {
    write("logs/" + id + ".status", "job=" + id + "\nstate=" + state + "\nexit=" + exit +
                                        "\nrestarts=0\nstarted=2026-11-30T06:00:00Z\nreason=\n");
    write("logs/" + id + ".args", "envpin-args 1\npython\ntrain.py\n");
    write("logs/" + id + ".log", "step 1\nstep 2\n");
    write("ckpt/" + id + "/model.pt", std::string(100, 'w'));
  }
  // A job whose supervisor runs: a stand-in for run.sh started as `sh <project>/.envpin/run.sh`.
  void running(const std::string& id) {
    write(".envpin/run.sh", "while :; do sleep 0.1; done\n");
    const std::string pid =
        shell("cd " + sh_quote(dir_.string()) + " && { sh " + sh_quote((dir_ / ".envpin/run.sh").string()) +
              " >/dev/null 2>&1 </dev/null & echo $!; }");
    started_.push_back(std::stoi(pid));  // (the output ends in a newline)
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    for (int i = 0; i < 50 && jobs::process_start(started_.back()).empty(); ++i) ::usleep(20000);
    write("logs/" + id + ".status",
          "job=" + id + "\nstate=running\nexit=\nrestarts=0\npid=" + std::to_string(started_.back()) +
              "\npid_start=" + jobs::process_start(started_.back()) + "\nhost=" + host + "\nreason=\n");
    write("logs/" + id + ".log", "step 1\n");
  }
  std::uintmax_t bytes(const std::vector<std::string>& rels) {
    std::uintmax_t n = 0;
    for (const auto& rel : rels) n += fs::file_size(dir_ / rel);
    return n;
  }
  std::vector<std::string> three(const std::string& id) {
    return {"logs/" + id + ".status", "logs/" + id + ".args", "logs/" + id + ".log"};
  }
  bool has(const std::string& rel) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(dir_ / rel, ec));
  }
  std::vector<int> started_;
};

TEST_F(JobCleanup, RmRemovesStatusArgsAndLogButNotCheckpoints) {
  finished("a");
  finished("b");
  write("logs/.a.idle-stop", "");
  write("logs/a.node1.status", "job=a\nstate=exited\nexit=0\nnode=1/2\n");
  write("logs/a.node1.log", "node 1\n");
  write("logs/build.log", "built\n");
  std::vector<std::string> files = three("a");
  files.insert(files.end(), {"logs/a.node1.status", "logs/a.node1.log"});
  const std::uintmax_t size = bytes(files);
  const Result r = run("rm a");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "removed job a (status and logs, " + std::to_string(size) + " B)\n");
  for (const char* gone :
       {"logs/a.status", "logs/a.args", "logs/a.log", "logs/.a.idle-stop", "logs/a.node1.status", "logs/a.node1.log"})
    EXPECT_FALSE(has(gone)) << gone;
  for (const char* kept : {"ckpt/a/model.pt", "logs/b.status", "logs/b.args", "logs/b.log", "logs/build.log"})
    EXPECT_TRUE(has(kept)) << kept;
  // A job that is gone is named as such.
  const Result again = run("rm a");
  EXPECT_EQ(again.code, 1);
  EXPECT_EQ(again.err,
            "envpin: error: there is no job 'a' (nothing of it in logs)\n"
            "envpin: hint: list the jobs with: envpin jobs --all\n");
}

TEST_F(JobCleanup, CheckpointsOnlyWhenAsked) {
  finished("a");
  finished("b");
  const jobs::Project p = project();
  // 100 bytes of checkpoint with the three files (measured before they go: the operands of ==
  // are evaluated in either order, and clang removed them first).
  const std::uintmax_t expected = 100u + bytes(three("a"));
  EXPECT_EQ(jobs::remove_job(p, "a", true), expected);
  EXPECT_FALSE(has("ckpt/a"));
  EXPECT_FALSE(has("logs/a.status"));
  EXPECT_TRUE(has("ckpt/b/model.pt"));
  const std::uintmax_t size = 100u + bytes(three("b"));
  const Result r = run("rm --checkpoints b");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "removed job b (status, logs and checkpoints, " + std::to_string(size) + " B)\n");
  EXPECT_FALSE(has("ckpt/b"));
  EXPECT_TRUE(has("ckpt"));
}

TEST_F(JobCleanup, RunningJobRefusedAndNothingRemoved) {
  finished("done");
  running("busy");
  const Result r = run("rm done busy");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "envpin: error: job 'busy' is still running; nothing was removed\n"
            "envpin: hint: stop it first: envpin stop busy\n");
  for (const char* kept : {"logs/done.status", "logs/done.args", "logs/done.log", "logs/busy.status", "logs/busy.log"})
    EXPECT_TRUE(has(kept)) << kept;
  EXPECT_THROW(jobs::remove_job(project(), "busy", false), diag::Error);
  EXPECT_TRUE(has("logs/busy.status"));
  // prune leaves it too.
  const Result pruned = run("jobs prune");
  ASSERT_EQ(pruned.code, 0) << pruned.err;
  EXPECT_FALSE(has("logs/done.status"));
  EXPECT_TRUE(has("logs/busy.status"));
}

TEST_F(JobCleanup, NamesOutsideTheLogsAreRefused) {
  finished("a");
  write("x.status", "job=x\nstate=exited\n");
  write("x.log", "outside\n");
  write("logs/.hidden.status", "state=exited\n");
  for (const char* name : {"../x", "..", ".hidden", "logs/../x", "a/b", "-a"}) {
    const Result r = run(std::string("rm -- ") + sh_quote(name));
    EXPECT_EQ(r.code, 1) << name;
    EXPECT_EQ(r.err, "envpin: error: invalid job id '" + std::string(name) +
                         "'\nenvpin: hint: use letters, digits, '.', '_' and '-', starting with a letter or digit\n")
        << name;
  }
  // One bad name among good ones: nothing removed.
  EXPECT_EQ(run("rm a ../x").code, 1);
  for (const char* kept : {"x.status", "x.log", "logs/.hidden.status", "logs/a.status", "logs/a.log"})
    EXPECT_TRUE(has(kept)) << kept;
  EXPECT_THROW(jobs::remove_job(project(), "../x", false), diag::Error);
}

TEST_F(JobCleanup, LinksAreRemovedNotFollowed) {
  write("outside/target.txt", "keep me\n");
  write("outside/dir/file", "keep me too\n");
  fs::create_directories(dir_ / "logs");
  fs::create_symlink(dir_ / "outside/target.txt", dir_ / "logs/l.status");
  fs::create_symlink(dir_ / "outside/dir", dir_ / "logs/l.log");
  fs::create_directories(dir_ / "ckpt");
  fs::create_symlink(dir_ / "outside/dir", dir_ / "ckpt/l");
  // `envpin jobs` shows the link as unreadable, never what it points to.
  const Result listed = run("jobs");
  EXPECT_NE(listed.out.find("unreadable"), std::string::npos) << listed.out;
  const Result r = run("rm --checkpoints l");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "removed job l (status, logs and checkpoints, 0 B)\n");
  EXPECT_FALSE(has("logs/l.status"));
  EXPECT_FALSE(has("logs/l.log"));
  EXPECT_FALSE(has("ckpt/l"));
  EXPECT_EQ(io::read_file(dir_ / "outside/target.txt"), "keep me\n");
  EXPECT_EQ(io::read_file(dir_ / "outside/dir/file"), "keep me too\n");
  // prune keeps an unreadable status and says so; rm is the way to remove it.
  fs::create_symlink(dir_ / "outside/target.txt", dir_ / "logs/m.status");
  const Result pruned = run("jobs prune");
  ASSERT_EQ(pruned.code, 0) << pruned.err;
  EXPECT_TRUE(has("logs/m.status"));
  EXPECT_NE(pruned.err.find("envpin: note: kept m.status: "), std::string::npos) << pruned.err;
  EXPECT_TRUE(has("outside/target.txt"));
}

TEST_F(JobCleanup, PruneOlderThanKeepsNewerJobs) {
  finished("old");
  finished("new");
  const auto ten_days = std::chrono::hours(24 * 10);
  for (const char* f : {"logs/old.status", "logs/old.args", "logs/old.log"})
    fs::last_write_time(dir_ / f, fs::last_write_time(dir_ / f) - ten_days);
  const std::string old_size = std::to_string(bytes(three("old"))) + " B";
  const std::string new_size = std::to_string(100u + bytes(three("new"))) + " B";
  Result r = run("jobs prune --older-than 7d");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "removed job old (status and logs, " + old_size + ")\npruned 1 job finished more than 7d ago, " +
                       old_size + " freed\n");
  EXPECT_FALSE(has("logs/old.status"));
  EXPECT_TRUE(has("ckpt/old/model.pt"));
  EXPECT_TRUE(has("logs/new.status"));
  r = run("jobs prune --older-than 7d");
  EXPECT_EQ(r.out, "no jobs finished more than 7d ago to remove in logs\n");
  r = run("jobs prune --older-than 7x");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: --older-than '7x' is not an age\n"
            "envpin: hint: write a number with a unit: 30m, 12h, 7d (s, m, h, d)\n");
  r = run("jobs --older-than 7d");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: --older-than is for 'envpin jobs prune'\n"
            "envpin: hint: envpin jobs prune --older-than 7d\n");
  r = run("jobs prune --checkpoints");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "removed job new (status, logs and checkpoints, " + new_size + ")\npruned 1 job finished, " +
                       new_size + " freed\n");
  EXPECT_FALSE(has("ckpt/new"));
  EXPECT_TRUE(has("ckpt/old/model.pt"));
}

TEST_F(JobCleanup, AgesHaveUnits) {
  EXPECT_EQ(jobs::parse_age("30m", "--older-than"), 1800);
  EXPECT_EQ(jobs::parse_age("12h", "--older-than"), 43200);
  EXPECT_EQ(jobs::parse_age("7d", "--older-than"), 604800);
  EXPECT_EQ(jobs::parse_age("45s", "--older-than"), 45);
  for (const char* bad : {"", "7", "d", "-1d", "1.5h", "7dd", "123456789d"})
    EXPECT_THROW(jobs::parse_age(bad, "--older-than"), diag::Error) << bad;
}

TEST_F(JobCleanup, ListingShowsTheNewestTwentyFinished) {
  // 25 finished jobs, job-00 the oldest.
  const auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 25; ++i) {
    const std::string id = std::string("job-") + (i < 10 ? "0" : "") + std::to_string(i);
    finished(id);
    fs::last_write_time(dir_ / ("logs/" + id + ".status"), now - std::chrono::minutes(100 - i));
  }
  Result r = run("jobs");
  ASSERT_EQ(r.code, 0) << r.err;
  for (int i = 0; i < 25; ++i) {
    const std::string id = std::string("job-") + (i < 10 ? "0" : "") + std::to_string(i) + " ";
    EXPECT_EQ(r.out.find(id) != std::string::npos, i >= 5) << id << r.out;
  }
  EXPECT_TRUE(r.out.ends_with(
      "5 older finished jobs left out (envpin jobs --all shows them; envpin jobs prune removes them)\n"))
      << r.out;
  r = run("jobs --all");
  ASSERT_EQ(r.code, 0) << r.err;
  for (int i = 0; i < 25; ++i)
    EXPECT_NE(r.out.find(std::string("job-") + (i < 10 ? "0" : "") + std::to_string(i) + " "), std::string::npos);
  EXPECT_EQ(r.out.find("left out"), std::string::npos);
  // JSON lists every job.
  EXPECT_EQ(nlohmann::json::parse(run("jobs --json").out).size(), 25u);
}

TEST(JobListing, ActiveJobsAreAlwaysShown) {
  std::vector<jobs::Listed> list;
  for (int i = 0; i < 30; ++i) list.push_back({i % 10 == 0, i});
  const auto kept = jobs::shown_in_list(list, 20);
  // 3 active (0, 10, 20) and the 20 finished written last (8 to 29, less the active 10 and 20).
  EXPECT_EQ(kept.size(), 23u);
  EXPECT_EQ(kept.front(), 0u);
  EXPECT_EQ(std::count(kept.begin(), kept.end(), 7u), 0);
  EXPECT_EQ(std::count(kept.begin(), kept.end(), 8u), 1);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
}

}  // namespace
}  // namespace envpin

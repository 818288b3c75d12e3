// SPDX-License-Identifier: Apache-2.0
// resume-check's parts that need no engine: --kill-at and --compare, the checkpoint watch, the
// last complete checkpoint (a sidecar that does not match is skipped), and the verdict.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "diag/error.hpp"
#include "jobs/checkpoints.hpp"
#include "jobs/resume_check.hpp"
#include "pin/sha256.hpp"
#include "test_dir.hpp"

namespace envpin::jobs {
namespace {

namespace fs = std::filesystem;

class CheckpointDir : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir("ckpt-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& bytes) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  // A checkpoint and its sidecar as envpin_ckpt.py writes them; `recorded` is what the sidecar says.
  void checkpoint(const std::string& name, const std::string& bytes, const std::string& recorded) {
    write(name, bytes);
    write(name + ".sha256", pin::sha256_hex(recorded) + "  " + name + "\n");
  }
  // Later modification times for later files, whatever the file system's granularity.
  void age(const std::string& name, int seconds_ago) {
    fs::last_write_time(dir_ / name, fs::file_time_type::clock::now() - std::chrono::seconds(seconds_ago));
  }
  fs::path dir_;
};

TEST(KillAt, AutoSecondsOrText) {
  EXPECT_EQ(parse_kill_at("auto").kind, KillAt::Kind::automatic);
  const KillAt s = parse_kill_at("2.5");
  EXPECT_EQ(s.kind, KillAt::Kind::seconds);
  EXPECT_DOUBLE_EQ(s.seconds, 2.5);
  const KillAt p = parse_kill_at("step 40");
  EXPECT_EQ(p.kind, KillAt::Kind::pattern);
  EXPECT_EQ(p.pattern, "step 40");
  for (const char* bad : {"", "0", "0.0", "a\nb", "\x1b[31m"}) EXPECT_THROW(parse_kill_at(bad), diag::Error) << bad;
}

TEST(Compare, ProjectPathsAndLines) {
  const CompareItem f = parse_compare("outputs/final.pt");
  EXPECT_FALSE(f.is_line);
  EXPECT_EQ(f.path_or_prefix, "outputs/final.pt");
  const CompareItem l = parse_compare("line:final digest");
  EXPECT_TRUE(l.is_line);
  EXPECT_EQ(l.path_or_prefix, "final digest");
  for (const char* bad : {"/etc/passwd", "../secrets", "a/../../b", "line:", "", "a\nb"})
    EXPECT_THROW(parse_compare(bad), diag::Error) << bad;
}

// A sidecar is data: sha256sum's line, of which only the digest's bytes are read.
TEST_F(CheckpointDir, SidecarsAreReadAsSha256sumLinesOnly) {
  const std::string hex = pin::sha256_hex("a");
  write("a.pt", "a");
  write("a.pt.sha256", hex);  // no name: fine
  write("b.pt", "b");
  write("b.pt.sha256", pin::sha256_hex("b") + std::string(1 << 20, 'f'));  // 1 MiB glued on: not a digest
  write("c.pt", "c");
  write("c.pt.sha256", pin::sha256_hex("c").substr(0, 63) + "X  c.pt\n");
  write("d.pt", "d");
  write("d.pt.sha256", "\x1b]0;x\x07" + pin::sha256_hex("d"));
  const auto files = list_checkpoints(dir_);
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].sidecar_sha256, hex);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_TRUE(files[i].has_sidecar);
    EXPECT_EQ(files[i].sidecar_sha256, "") << files[i].name;
    EXPECT_FALSE(sidecar_matches(dir_, files[i])) << files[i].name;
  }
}

TEST_F(CheckpointDir, LastCompleteSkipsACheckpointCutOffMidWrite) {
  checkpoint("ckpt-10.pt", "ten", "ten");
  age("ckpt-10.pt", 20);
  checkpoint("ckpt-20.pt", "twen", "twenty");  // cut off: the sidecar names the whole file
  age("ckpt-20.pt", 10);
  write(".envpin-tmp-ckpt-30.pt", "thirty, being written");
  std::vector<std::string> skipped;
  const auto last = last_complete(dir_, &skipped);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->name, "ckpt-10.pt");
  EXPECT_EQ(skipped, std::vector<std::string>{"ckpt-20.pt"});
  // Without sidecars the newest file counts; temporaries never do.
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  write("a.pt", "a");
  age("a.pt", 20);
  write("b.pt", "b");
  age("b.pt", 10);
  write("c.pt.tmp", "c");
  EXPECT_EQ(last_complete(dir_)->name, "b.pt");
  fs::remove_all(dir_);
  EXPECT_FALSE(last_complete(dir_).has_value());
}

TEST_F(CheckpointDir, WatchRecordsACheckpointOnceComplete) {
  CheckpointWatch watch(dir_);
  // Without a sidecar: complete once unchanged between two polls.
  write("step-5", "five");
  EXPECT_TRUE(watch.poll().empty());
  EXPECT_EQ(watch.poll(), std::vector<std::string>{"step-5"});
  EXPECT_TRUE(watch.poll().empty());  // recorded once
  // With a sidecar: complete as soon as it matches; never while it does not.
  checkpoint("step-10", "te", "ten");
  EXPECT_TRUE(watch.poll().empty());
  EXPECT_TRUE(watch.poll().empty());
  checkpoint("step-10", "ten", "ten");
  EXPECT_EQ(watch.poll(), std::vector<std::string>{"step-10"});
  ASSERT_EQ(watch.completed().size(), 2u);
  EXPECT_EQ(watch.completed()[1].second, pin::sha256_hex("ten"));
  // Rewritten under the same name: a new version. Removed (a keep-N prune): still in the history.
  write("step-5", "five again");
  fs::last_write_time(dir_ / "step-5", fs::file_time_type::clock::now() + std::chrono::seconds(5));
  watch.poll();
  EXPECT_EQ(watch.poll(), std::vector<std::string>{"step-5"});
  fs::remove(dir_ / "step-10");
  watch.poll();
  ASSERT_EQ(watch.completed().size(), 3u);
  EXPECT_EQ(watch.completed()[2], std::make_pair(std::string("step-5"), pin::sha256_hex("five again")));
}

TEST_F(CheckpointDir, OutputsAreFilesDirectoriesLinesOrTheFinalCheckpoints) {
  const fs::path project = dir_ / "project";
  const fs::path ckpt = dir_ / "ckpt";
  write("project/outputs/final.pt", "weights");
  write("project/outputs/metrics/loss.txt", "0.25");
  write("ckpt/step-10", "ten");
  write("ckpt/step-10.sha256", pin::sha256_hex("ten") + "  step-10\n");
  write("job.log", "envpin run: job x: attempt 1\nfinal digest 1234\nfinal digest 5678\n");
  const Outputs out =
      collect_outputs({parse_compare("outputs"), parse_compare("line:final digest")}, project, ckpt, dir_ / "job.log");
  EXPECT_EQ(out.at("outputs/final.pt"), pin::sha256_hex("weights"));
  EXPECT_EQ(out.at("outputs/metrics/loss.txt"), pin::sha256_hex("0.25"));
  EXPECT_EQ(out.at("line:final digest"), "final digest 5678");
  EXPECT_EQ(out.size(), 3u);
  const Outputs checkpoints = collect_outputs({}, project, ckpt, dir_ / "job.log");
  EXPECT_EQ(checkpoints, (Outputs{{"checkpoint step-10", pin::sha256_hex("ten")}}));
  EXPECT_THROW(collect_outputs({parse_compare("outputs/missing.pt")}, project, ckpt, dir_ / "job.log"), diag::Error);
  // No checkpoint left and nothing named: not "0 items, identical".
  fs::remove_all(ckpt);
  EXPECT_THROW(collect_outputs({}, project, ckpt, dir_ / "job.log"), diag::Error);
  EXPECT_THROW(collect_outputs({parse_compare("line:loss")}, project, ckpt, dir_ / "job.log"), diag::Error);
}

RunRecord record(const std::string& job, const std::string& final_digest,
                 std::vector<std::pair<std::string, std::string>> checkpoints) {
  return {job, {{"outputs/final.pt", final_digest}}, std::move(checkpoints), 1.0};
}

TEST(Verdict, IdenticalRunsPass) {
  const RunRecord ref = record("t-ref", "aa", {{"c5", "1"}, {"c10", "2"}});
  const RunRecord killed = record("t-kill", "aa", {{"c5", "1"}, {"c10", "2"}});
  const Verdict v = judge(ref, killed, {{3.2, "c5", 1}}, std::nullopt);
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.lines[0],
            "identical: 1 compared item of t-kill (1 kill at 3.2 s (after c5), resumed each time) equal those of the "
            "uninterrupted t-ref");
  EXPECT_EQ(v.lines[1], "  outputs/final.pt  sha256:aa");
}

TEST(Verdict, NamesTheFirstCheckpointAfterTheKillThatDiffers) {
  const RunRecord ref = record("t-ref", "aa", {{"c5", "1"}, {"c10", "2"}, {"c15", "3"}, {"c20", "4"}});
  const RunRecord killed = record("t-kill", "bb", {{"c5", "1"}, {"c10", "2"}, {"c15", "X"}, {"c20", "Y"}});
  const RunRecord ref2 = record("t-ref2", "aa", {});
  const Verdict v = judge(ref, killed, {{2.0, "c5", 1}, {4.0, "c10", 2}}, ref2);
  EXPECT_EQ(v.exit_code, 1);
  ASSERT_GE(v.lines.size(), 3u);
  EXPECT_EQ(v.lines[0],
            "differs: t-kill (2 kills at 2.0 s (after c5), 4.0 s (after c10), resumed each time) and the "
            "uninterrupted t-ref differ in outputs/final.pt");
  EXPECT_EQ(v.lines[1],
            "  the runs diverged at checkpoint c15, written after kill 2 (4.0 s, resumed from c10); every "
            "checkpoint before it is identical");
  // One file overwritten at each checkpoint: its versions are compared in order.
  const RunRecord one = record("t-ref", "aa", {{"checkpoint", "1"}, {"checkpoint", "2"}, {"checkpoint", "3"}});
  const RunRecord one_killed = record("t-kill", "bb", {{"checkpoint", "1"}, {"checkpoint", "2"}, {"checkpoint", "X"}});
  const Verdict w = judge(one, one_killed, {{2.0, "checkpoint", 2}}, ref2);
  EXPECT_EQ(w.lines[1],
            "  the runs diverged at checkpoint checkpoint, written after kill 1 (2.0 s, resumed from "
            "checkpoint); every checkpoint before it is identical");
  EXPECT_NE(v.lines[2].find("RNG states of Python, NumPy, torch and CUDA"), std::string::npos) << v.lines[2];
}

TEST(Verdict, TwoUninterruptedRunsThatDifferAreNotDeterministic) {
  const RunRecord ref = record("t-ref", "aa", {{"c5", "1"}});
  const RunRecord killed = record("t-kill", "bb", {{"c5", "2"}});
  const RunRecord ref2 = record("t-ref2", "cc", {{"c5", "3"}});
  const Verdict v = judge(ref, killed, {{1.0, "c5", 1}}, ref2);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.lines[0],
            "not deterministic even without interruption: two uninterrupted runs (t-ref, t-ref2) differ in "
            "outputs/final.pt");
}

TEST(Verdict, SameCheckpointsDifferentResults) {
  const RunRecord ref = record("t-ref", "aa", {{"c5", "1"}, {"c10", "2"}});
  const RunRecord killed = record("t-kill", "bb", {{"c5", "1"}, {"c10", "2"}});
  const Verdict v = judge(ref, killed, {{1.0, "c5", 1}}, record("t-ref2", "aa", {}));
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_NE(v.lines[1].find("every checkpoint both runs wrote is identical"), std::string::npos) << v.lines[1];
  // A checkpoint the interrupted run never wrote: resumed from another step.
  const RunRecord skipped = record("t-kill", "bb", {{"c5", "1"}});
  const Verdict w = judge(ref, skipped, {{1.0, "c5", 1}}, record("t-ref2", "aa", {}));
  EXPECT_NE(w.lines[1].find("never wrote checkpoint c10"), std::string::npos) << w.lines[1];
}

}  // namespace
}  // namespace envpin::jobs

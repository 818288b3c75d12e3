// SPDX-License-Identifier: Apache-2.0
// resume-check's parts that need no engine: --kill-at and --compare, the checkpoint watch, the
// last complete checkpoint (a sidecar that does not match is skipped), and the verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "jobs/checkpoints.hpp"
#include "pin/sha256.hpp"
#include "resume_check/verdict.hpp"
#include "test_dir.hpp"

namespace envpin::resume_check {

using jobs::is_checkpoint_name;
using jobs::last_complete;
using jobs::list_checkpoints;
using jobs::sidecar_matches;
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

// A resumed program that saves again, byte for byte, what it loaded made --kill-at auto kill again
// at once, though the job had made no progress (issue 50): the version is recorded, not returned.
TEST_F(CheckpointDir, AByteIdenticalResaveIsRecordedButIsNoProgress) {
  CheckpointWatch watch(dir_);
  checkpoint("ckpt.pt", "step 10", "step 10");
  EXPECT_EQ(watch.poll(), std::vector<std::string>{"ckpt.pt"});
  age("ckpt.pt", 5);  // the same bytes written again: another mtime
  checkpoint("ckpt.pt", "step 10", "step 10");
  EXPECT_TRUE(watch.poll().empty());
  EXPECT_EQ(watch.completed().size(), 2u);
  checkpoint("ckpt.pt", "step 20", "step 20");
  EXPECT_EQ(watch.poll(), std::vector<std::string>{"ckpt.pt"});
  ASSERT_EQ(watch.completed().size(), 3u);
  EXPECT_EQ(watch.completed()[2].sha256, pin::sha256_hex("step 20"));
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
  EXPECT_EQ(watch.completed()[1].sha256, pin::sha256_hex("ten"));
  // Once the program writes sidecars, a file without one is not a checkpoint (any more).
  write("step-15", "fifteen");
  watch.poll();
  EXPECT_TRUE(watch.poll().empty());
  // Rewritten under the same name: a new version. Removed (a keep-N prune): still in the history.
  checkpoint("step-10", "ten again", "ten again");
  fs::last_write_time(dir_ / "step-10", fs::file_time_type::clock::now() + std::chrono::seconds(5));
  EXPECT_EQ(watch.poll(), std::vector<std::string>{"step-10"});
  fs::remove(dir_ / "step-10");
  watch.poll();
  ASSERT_EQ(watch.completed().size(), 3u);
  EXPECT_EQ(watch.completed()[2].name, "step-10");
  EXPECT_EQ(watch.completed()[2].sha256, pin::sha256_hex("ten again"));
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

// Issue 49, class 2: a compared path the job made a link out of the project (to a host file or
// directory) is refused, never read; inside the project a link is followed; a compared directory's
// links are not.
TEST_F(CheckpointDir, ComparedPathsAreReadOnlyInsideTheProject) {
  const fs::path project = dir_ / "project";
  const fs::path ckpt = dir_ / "ckpt";
  write("project/outputs/final.pt", "weights");
  write("host/.ssh/id_ed25519", "PRIVATE KEY");
  write("job.log", "done\n");
  fs::create_symlink(dir_ / "host/.ssh/id_ed25519", project / "outputs/key.pt");
  fs::create_directory_symlink(dir_ / "host/.ssh", project / "ssh");
  fs::create_symlink("final.pt", project / "outputs/alias.pt");
  for (const std::string path : {"outputs/key.pt", "ssh", "ssh/id_ed25519"}) {
    try {
      collect_outputs({parse_compare(path)}, project, ckpt, dir_ / "job.log");
      ADD_FAILURE() << "read " << path << " through a link out of the project";
    } catch (const diag::Error& e) {
      EXPECT_NE(e.message().find("is a link out of the project"), std::string::npos) << e.message();
    }
  }
  EXPECT_EQ(collect_outputs({parse_compare("outputs/alias.pt")}, project, ckpt, dir_ / "job.log"),
            (Outputs{{"outputs/alias.pt", pin::sha256_hex("weights")}}));
  // The directory's own files only: its links (in or out of the project) are not followed.
  const Outputs tree = collect_outputs({parse_compare("outputs")}, project, ckpt, dir_ / "job.log");
  EXPECT_EQ(tree, (Outputs{{"outputs/final.pt", pin::sha256_hex("weights")}}));
  // The log replaced by a link is not the job's log.
  fs::remove(dir_ / "job.log");
  fs::create_symlink(dir_ / "host/.ssh/id_ed25519", dir_ / "job.log");
  EXPECT_THROW(collect_outputs({parse_compare("line:PRIVATE")}, project, ckpt, dir_ / "job.log"), diag::Error);
}

RunRecord record(const std::string& job, const std::string& final_digest,
                 const std::vector<std::pair<std::string, std::string>>& checkpoints,
                 const std::vector<long long>& steps = {}) {
  RunRecord r;
  r.job = job;
  r.outputs = {{"outputs/final.pt", final_digest}};
  r.files = {{"outputs/final.pt", job + "/final.pt"}};
  for (std::size_t i = 0; i < checkpoints.size(); ++i)
    r.checkpoints.push_back({checkpoints[i].first, checkpoints[i].second,
                             i < steps.size() ? std::optional<long long>(steps[i]) : std::nullopt,
                             job + "/" + std::to_string(i)});
  r.seconds = 1.0;
  return r;
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

// Issue 49, class 4: names and lines are the job's: no escape sequence, CR or bidirectional
// control reaches the terminal raw, and a 50 MB line is cut.
TEST(Verdict, TheJobsNamesAndLinesArePrintedSafely) {
  RunRecord ref = record("t-ref", "aa", {{"c5\x1b]0;owned\x07", "1"}});
  RunRecord killed = record("t-kill", "aa", {{"c5\x1b]0;owned\x07", "1"}});
  ref.outputs = killed.outputs = {{"line:final", "final \r\xe2\x80\xae" + std::string(50'000'000, 'x')}};
  const Verdict same = judge(ref, killed, {{3.2, "c5\x1b[2J", 1}}, std::nullopt);
  // Invalid bytes print four times as wide ("\xff"): the cut counts what is printed (found by
  // tests/fuzz/state_fuzz.cpp: a 1,800-byte line).
  killed.outputs = {{"line:final", "final \x1b[31mred" + std::string(600, '\xff')}};
  const Verdict differs = judge(ref, killed, {{3.2, "c5\x1b[2J", 1}}, ref);
  EXPECT_EQ(same.exit_code, 0);
  EXPECT_EQ(differs.exit_code, 1);
  for (const Verdict* v : {&same, &differs})
    for (const std::string& line : v->lines) {
      EXPECT_EQ(line.find_first_of("\x1b\r\n\x07"), std::string::npos) << diag::printable(line);
      EXPECT_EQ(line.find("\xe2\x80\xae"), std::string::npos);
      EXPECT_LE(line.size(), 1000u);
    }
  EXPECT_NE(same.lines[0].find("(after c5\\x1b[2J)"), std::string::npos) << same.lines[0];
  EXPECT_NE(same.lines[1].find("final \\r\\u202e"), std::string::npos) << same.lines[1];
  EXPECT_NE(same.lines[1].find("(50000010 bytes)"), std::string::npos) << same.lines[1].substr(0, 400);
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
            "  the runs diverged at checkpoint c15, written after kill 2 (4.0 s, resumed from c10): their bytes "
            "differ; every checkpoint before it is identical");
  // One file overwritten at each checkpoint: its versions are compared in order.
  const RunRecord one = record("t-ref", "aa", {{"checkpoint", "1"}, {"checkpoint", "2"}, {"checkpoint", "3"}});
  const RunRecord one_killed = record("t-kill", "bb", {{"checkpoint", "1"}, {"checkpoint", "2"}, {"checkpoint", "X"}});
  const Verdict w = judge(one, one_killed, {{2.0, "checkpoint", 2}}, ref2);
  EXPECT_EQ(w.lines[1],
            "  the runs diverged at checkpoint checkpoint (version 3 of 3), written after kill 1 (2.0 s, resumed "
            "from checkpoint (version 2 of 3)): their bytes differ; every checkpoint before it is identical");
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
  EXPECT_NE(v.lines[1].find("every checkpoint both runs wrote has the same state"), std::string::npos) << v.lines[1];
  // A checkpoint the interrupted run never wrote: resumed from another step.
  const RunRecord skipped = record("t-kill", "bb", {{"c5", "1"}});
  const Verdict w = judge(ref, skipped, {{1.0, "c5", 1}}, record("t-ref2", "aa", {}));
  EXPECT_NE(w.lines[1].find("the interrupted run wrote 1 checkpoint, the uninterrupted run 2"), std::string::npos)
      << w.lines[1];
}

// What envpin_compare.py answers for one pair (its JSON, as parse_semantics reads it).
Semantics semantic(const std::string& id, const std::string& result) {
  return parse_semantics(R"({"torch": "1.13.1", "results": [{"id": ")" + id + R"(", )" + result + "}]}");
}

// Issue 32, 1: a pickled config entry recording how the run started differs in bytes, not in
// state: "identical state", never "did not restore all of its state".
TEST(Verdict, MetadataThatDiffersIsNotState) {
  const RunRecord ref = record("t-ref", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}});
  const RunRecord killed = record("t-kill", "bb", {{"ckpt.pt", "1"}, {"ckpt.pt", "3"}});
  const Semantics sem = semantic("out:outputs/final.pt", R"("how": "torch", "equal": false, "state": [],
      "metadata": [{"key": "config.init_from", "what": "x", "a": "'scratch'", "b": "'resume'"}],
      "tolerated": [], "counts": {"state": 0, "metadata": 1, "tolerated": 0})");
  EXPECT_TRUE(results_match(ref, killed, sem, ""));
  const Verdict v = judge(ref, killed, {{2.0, "ckpt.pt", 1}}, std::nullopt, sem);
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.lines[0],
            "identical state: 1 compared item of t-kill (1 kill at 2.0 s (after ckpt.pt), resumed each time) equal "
            "those of the uninterrupted t-ref as the program loads them");
  EXPECT_EQ(v.lines[1],
            "  outputs/final.pt  state identical (torch), metadata differs: config.init_from: 'scratch' vs 'resume'");
  // Without the comparison (no engine, no torch): bytes differ, and that is all it can say.
  EXPECT_FALSE(results_match(ref, killed, {}, ""));
}

TEST(Verdict, StateThatDiffersIsNamedKeyByKey) {
  const RunRecord ref = record("t-ref", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}}, {100, 200});
  const RunRecord killed = record("t-kill", "bb", {{"ckpt.pt", "1"}, {"ckpt.pt", "3"}}, {100, 200});
  Semantics sem = semantic("out:outputs/final.pt", R"("how": "torch", "equal": false,
      "state": [{"key": "model.layers.3.weight", "what": "1,024 of 4,096 elements differ, max |d| 0.0003"}],
      "metadata": [], "tolerated": [], "counts": {"state": 1, "metadata": 0, "tolerated": 0})");
  sem.merge(semantic("ver:1:1", R"("how": "torch", "equal": false,
      "state": [{"key": "optimizer.state.0.exp_avg", "what": "12 of 64 elements differ, max |d| 1e-05"}],
      "metadata": [], "tolerated": [], "counts": {"state": 1, "metadata": 0, "tolerated": 0})"));
  const Verdict v = judge(ref, killed, {{2.0, "ckpt.pt", 1}}, record("t-ref2", "aa", {}), sem);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.lines[1],
            "  outputs/final.pt: state differs (torch): model.layers.3.weight: 1,024 of 4,096 elements differ, max "
            "|d| 0.0003");
  // A single file overwritten in place: compared version by version, named by step.
  EXPECT_EQ(v.lines[2],
            "  the runs diverged at checkpoint ckpt.pt (step 200, version 2), written after kill 1 (2.0 s, resumed "
            "from ckpt.pt (step 100, version 1)): optimizer.state.0.exp_avg: 12 of 64 elements differ, max |d| 1e-05; "
            "every checkpoint before it is identical");
}

TEST(Verdict, ToleranceIsReportedAsSuch) {
  const RunRecord ref = record("t-ref", "aa", {{"c5", "1"}});
  const RunRecord killed = record("t-kill", "bb", {{"c5", "1"}});
  const Semantics sem = semantic("out:outputs/final.pt", R"("how": "torch", "equal": false, "state": [],
      "metadata": [], "tolerated": [{"key": "w", "what": "3 of 10 elements differ, max |d| 2e-07"}],
      "counts": {"state": 0, "metadata": 0, "tolerated": 3})");
  const Verdict v = judge(ref, killed, {{1.0, "c5", 1}}, std::nullopt, sem, parse_tolerance("1e-5,1e-8"));
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_TRUE(v.lines[0].starts_with("identical within --tolerance (not bit for bit): ")) << v.lines[0];
  EXPECT_EQ(v.lines[1], "  outputs/final.pt  within rtol 1e-05, atol 1e-08: w: 3 of 10 elements differ, max |d| 2e-07");
  for (const char* bad : {"x", "-1", "1,", ",1", "1,2,3", "nan", "inf", "1e999"})
    EXPECT_THROW(parse_tolerance(bad), diag::Error) << bad;
  EXPECT_DOUBLE_EQ(parse_tolerance("0.001").rtol, 0.001);
}

// Unequal with nothing named, or a result that is not envpin_compare.py's: never "same state".
TEST(Verdict, SemanticsAreReadAsData) {
  const Semantics odd = semantic("out:x", R"("how": "torch", "equal": false)");
  ASSERT_EQ(odd.count("out:x"), 1u);
  EXPECT_FALSE(odd.at("out:x").same_state());
  EXPECT_THROW(parse_semantics("not json"), diag::Error);
  EXPECT_THROW(parse_semantics(std::string(100, '[') + std::string(100, ']')), diag::Error);
  EXPECT_TRUE(parse_semantics(R"({"results": [{"id": 3, "equal": true}, {"equal": true}]})").empty());
}

TEST(Verdict, LinesThatDifferArePrintedBoth) {
  RunRecord ref = record("t-ref", "aa", {{"c5", "1"}});
  RunRecord killed = record("t-kill", "aa", {{"c5", "1"}});
  ref.outputs["line:final weights"] = "final weights 1234";
  killed.outputs["line:final weights"] = "final weights 99\x1b[2J";
  const Verdict v = judge(ref, killed, {{1.0, "c5", 1}}, ref);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.lines[1], "  t-ref: final weights 1234");
  EXPECT_EQ(v.lines[2].find('\x1b'), std::string::npos) << v.lines[2];
  EXPECT_TRUE(v.lines[2].starts_with("  t-kill: final weights 99")) << v.lines[2];
}

// A single ckpt.pt without steps in its name, and a program that saves again what it loaded
// (nanoGPT at the step it resumed at): found on nanoGPT, the versions matched by order compared
// the reference's step 100 with the re-save of step 50. The steps read inside the files
// (iter_num) match them by step.
TEST(Verdict, StepsReadInsideTheFilesMatchTheVersions) {
  RunRecord ref = record("t-ref", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}, {"ckpt.pt", "3"}});
  RunRecord killed = record("t-kill", "bb", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}, {"ckpt.pt", "2b"}, {"ckpt.pt", "4"}});
  const std::map<std::string, long long> steps = parse_steps(
      R"({"results": [], "steps": {"step:r:0": 50, "step:r:1": 100, "step:r:2": 150, "step:k:0": 50,
          "step:k:1": 100, "step:k:2": 100, "step:k:3": 150, "step:k:9": -4, "step:x": "1; rm -rf /"}})");
  EXPECT_EQ(steps.size(), 7u);
  ASSERT_TRUE(apply_inner_steps(ref.checkpoints, killed.checkpoints, steps));
  Semantics sem = semantic("ver:1:2", R"("how": "torch", "equal": false, "state": [],
      "metadata": [{"key": "config.init_from", "what": "'scratch' vs 'resume'", "a": "'scratch'", "b": "'resume'"}],
      "tolerated": [], "counts": {"state": 0, "metadata": 1, "tolerated": 0})");
  sem.merge(semantic("ver:2:3", R"("how": "torch", "equal": false,
      "state": [{"key": "model.wte.weight", "what": "672 of 672 elements differ, max |d| 0.01"}],
      "metadata": [], "tolerated": [], "counts": {"state": 1, "metadata": 0, "tolerated": 0})"));
  const std::vector<Pair> pairs = pairs_to_compare(ref, killed, "");
  std::vector<std::string> ids;
  for (const Pair& p : pairs) ids.push_back(p.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"out:outputs/final.pt", "ver:1:2", "ver:2:3"}));
  const Verdict v = judge(ref, killed, {{2.0, "ckpt.pt", 2}}, record("t-ref2", "aa", {}), sem);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.lines[1],
            "  the runs diverged at checkpoint ckpt.pt (step 150, version 4), written after kill 1 (2.0 s, resumed "
            "from ckpt.pt (step 100, version 2)): model.wte.weight: 672 of 672 elements differ, max |d| 0.01; every "
            "checkpoint before it is identical");
  // Steps that do not rise in the uninterrupted run (an epoch 0 saved each iteration) say nothing.
  RunRecord flat = record("t-ref", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}});
  RunRecord other = record("t-kill", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}});
  EXPECT_FALSE(apply_inner_steps(flat.checkpoints, other.checkpoints,
                                 {{"step:r:0", 0}, {"step:r:1", 0}, {"step:k:0", 0}, {"step:k:1", 0}}));
  EXPECT_FALSE(flat.checkpoints[0].step.has_value());
  // Some version without one: none is given.
  EXPECT_FALSE(apply_inner_steps(flat.checkpoints, other.checkpoints, {{"step:r:0", 1}, {"step:r:1", 2}}));
  // Name by name: a final.pt without a step leaves ckpt.pt's steps in place.
  RunRecord with_final = record("t-ref", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}, {"final.pt", "f"}});
  RunRecord other_final = record("t-kill", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}, {"final.pt", "f"}});
  EXPECT_TRUE(apply_inner_steps(with_final.checkpoints, other_final.checkpoints,
                                {{"step:r:0", 5}, {"step:r:1", 10}, {"step:k:0", 5}, {"step:k:1", 10}}));
  EXPECT_EQ(with_final.checkpoints[1].step, 10);
  EXPECT_EQ(other_final.checkpoints[0].step, 5);
  EXPECT_FALSE(with_final.checkpoints[2].step.has_value());
}

// Found on pytorch/examples dcgan with --kill-at '[1/3][0/': resumed from netG_epoch_0.pth, it
// wrote netG_epoch_0.pth again, trained a second time (its epoch loop starts at 0). The same step
// with other weights is no save again of what it loaded (nanoGPT's re-save differs only in a
// loss): "did not resume", not "resumed each time".
TEST(Verdict, TheSameStepWithOtherWeightsWasTrainedAgain) {
  const RunRecord ref = record("t-ref", "aa", {{"netG_epoch_0.pth", "g0"}, {"netG_epoch_1.pth", "g1"}}, {0, 1});
  const RunRecord killed =
      record("t-kill", "bb", {{"netG_epoch_0.pth", "g0"}, {"netG_epoch_0.pth", "g0b"}, {"netG_epoch_1.pth", "g1b"}},
             {0, 0, 1});
  const std::vector<KillPoint> kills = {{9.7, "netG_epoch_0.pth", 1}};
  std::vector<std::string> ids;
  for (const Pair& p : pairs_to_compare(ref, killed, "", kills)) ids.push_back(p.id);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "same:0:1"), ids.end());
  const Semantics weights = semantic("same:0:1", R"("how": "torch", "equal": false,
      "state": [{"key": "main.0.weight", "what": "16,384 of 16,384 elements differ, max |d| 0.00373", "elements": 16384}],
      "metadata": [], "tolerated": [], "counts": {"state": 1, "metadata": 0, "tolerated": 0})");
  const Verdict v = judge(ref, killed, kills, record("t-ref2", "aa", {}), weights);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_TRUE(v.lines[0].starts_with("differs: t-kill (1 kill at 9.7 s (after netG_epoch_0.pth)) did not resume"))
      << v.lines[0];
  EXPECT_EQ(v.lines[1],
            "  the job did not resume after kill 1: it wrote netG_epoch_0.pth (step 0, version 2) with other weights "
            "than netG_epoch_0.pth (step 0, version 1), written at the same step before the kill: it trained that step "
            "again, its step or epoch counter not restored (main.0.weight: 16,384 of 16,384 elements differ, max |d| "
            "0.00373)");
  // Only a loss differs (one element): a save again of what it loaded; judged as usual.
  const Semantics loss = semantic("same:0:1", R"("how": "torch", "equal": false,
      "state": [{"key": "best_val_loss", "what": "1 of 1 elements differ, max |d| 0.0175", "elements": 1}],
      "metadata": [], "tolerated": [], "counts": {"state": 1, "metadata": 0, "tolerated": 0})");
  EXPECT_TRUE(resume_failures(ref, killed, kills, loss).empty());
  // A step that names several saves in the uninterrupted run (last.pt each N iterations, its
  // epoch as the step): a later save of the same epoch after the resume has other weights rightly.
  const RunRecord by_epoch = record(
      "t-ref", "aa", {{"netG_epoch_0.pth", "g0"}, {"netG_epoch_0.pth", "g0x"}, {"netG_epoch_1.pth", "g1"}}, {0, 0, 1});
  EXPECT_TRUE(resume_failures(by_epoch, killed, kills, weights).empty());
  // Compared by bytes only (no torch in the image): not claimed either way.
  EXPECT_TRUE(resume_failures(ref, killed, kills, semantic("same:0:1", R"("how": "bytes", "equal": false)")).empty());
}

// Found on pytorch/examples: word_language_model has no resume option (no jobs.resume), dcgan
// was given '--netG {checkpoint}' and loaded it, yet started at epoch 0 again. The cause says which,
// from what the attempt after the kill printed; what the log does not tell is left out (issue 50).
TEST(Verdict, TheCauseOfAStartOverComesFromTheLog) {
  const RunRecord ref = record("t-ref", "aa", {{"m.pt", "1"}, {"m.pt", "2"}, {"m.pt", "3"}});
  RunRecord killed =
      record("t-kill", "aa", {{"m.pt", "1"}, {"m.pt", "2"}, {"m.pt", "1"}, {"m.pt", "2"}, {"m.pt", "3"}});
  const std::vector<KillPoint> kills = {{2.0, "m.pt", 2}};
  Verdict v = judge(ref, killed, kills, std::nullopt);
  ASSERT_EQ(v.lines.size(), 3u);
  EXPECT_TRUE(
      v.lines[2].starts_with("  likely cause: the manifest has no jobs.resume, so each restart ran the "
                             "original command again and nothing shows"))
      << v.lines[2];
  // Words given, the log unknown: no cause is guessed.
  killed.resume_words = "--netG {checkpoint}";
  v = judge(ref, killed, kills, std::nullopt);
  EXPECT_EQ(v.lines.size(), 2u) << v.lines.back();
  // Passed in and loaded (the program says so), yet started over: the counter, not the option.
  const std::string first = "envpin run: job t-kill: attempt 1 in envpin-t-kill-1\nepoch 0 loss 1.5\n";
  const std::string second =
      "envpin run: job t-kill: attempt 2 in envpin-t-kill-2, resuming from .envpin/ckpt/t-kill (m.pt)\n"
      "=> loading checkpoint '/ckpt/m.pt'\nepoch 0 loss 1.5\n";
  killed.attempts = split_attempts("stray\n" + first + second, "t-kill");
  ASSERT_EQ(killed.attempts.size(), 2u);
  EXPECT_EQ(killed.attempts[0], first);
  v = judge(ref, killed, kills, std::nullopt);
  ASSERT_EQ(v.lines.size(), 3u);
  EXPECT_EQ(v.lines[2],
            "  likely cause: the resume words (--netG {checkpoint}) were passed with the checkpoint (attempt 2: "
            "'resuming from .envpin/ckpt/t-kill (m.pt)') and attempt 2 printed '=> loading checkpoint "
            "'/ckpt/m.pt'', yet it started over: its step or epoch counter was not restored from the checkpoint, "
            "nor with it (most likely) the data position, the optimizer and LR scheduler state and the RNG states: "
            "restore them all before the next step (see \"Checkpoint contract\" in envpin's docs/jobs.md)");
  // Passed in, nothing says it was loaded: the option is ignored (or another file loaded).
  killed.attempts = split_attempts(first +
                                       "envpin run: job t-kill: attempt 2 in envpin-t-kill-2, resuming from "
                                       ".envpin/ckpt/t-kill (m.pt)\nepoch 0 loss 1.5\n",
                                   "t-kill");
  v = judge(ref, killed, kills, std::nullopt);
  ASSERT_EQ(v.lines.size(), 3u);
  EXPECT_TRUE(v.lines[2].ends_with(
      "and nothing attempt 2 printed shows it loaded it: the program ignores that option or loads another file"))
      << v.lines[2];
  // No jobs.resume, yet envpin_ckpt's journal records a load: it found the checkpoint itself.
  killed.resume_words.clear();
  killed.journal.loaded.push_back({std::nullopt, "2"});
  v = judge(ref, killed, kills, std::nullopt);
  ASSERT_EQ(v.lines.size(), 3u);
  EXPECT_TRUE(
      v.lines[2].starts_with("  likely cause: it found a checkpoint by itself (envpin_ckpt.load_latest() "
                             "loaded it), yet it started over: its step or epoch counter"))
      << v.lines[2];
}

// The job owns its log: an attempt's text is cut at 64 KiB, and an escape sequence the program
// printed reaches the verdict as text.
TEST(Verdict, AnAttemptsOutputIsData) {
  const std::string note = "envpin run: job j: attempt 1 in c\n";
  const auto big = split_attempts(note + std::string(200000, 'x'), "j");
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].size(), 64u * 1024);
  // Another job's notes do not cut this one's attempts.
  EXPECT_EQ(split_attempts(note + "envpin run: job k: attempt 2 in c\n", "j").size(), 1u);
  EXPECT_TRUE(split_attempts("no notes at all\n", "j").empty());
  const RunRecord ref = record("t-ref", "aa", {{"m.pt", "1"}, {"m.pt", "2"}, {"m.pt", "3"}});
  RunRecord killed =
      record("t-kill", "aa", {{"m.pt", "1"}, {"m.pt", "2"}, {"m.pt", "1"}, {"m.pt", "2"}, {"m.pt", "3"}});
  killed.resume_words = "--resume {checkpoint}";
  killed.attempts = split_attempts(
      "envpin run: job t-kill: attempt 1 in c\nenvpin run: job t-kill: attempt 2 in c, "
      "resuming from d (m.pt)\n\x1b]0;owned\x07 loaded m.pt\n",
      "t-kill");
  const Verdict v = judge(ref, killed, {{2.0, "m.pt", 2}}, std::nullopt);
  ASSERT_EQ(v.lines.size(), 3u);
  EXPECT_EQ(v.lines[2].find('\x1b'), std::string::npos) << v.lines[2];
  EXPECT_NE(v.lines[2].find("\\x1b]0;owned\\x07 loaded m.pt"), std::string::npos) << v.lines[2];
}

// Issue 32, 2: a segment that started over writes its first checkpoint again; its results
// equal the uninterrupted run's only because it ran again. Never "identical".
TEST(Verdict, ARunThatStartedOverDidNotResume) {
  const RunRecord ref =
      record("t-ref", "aa", {{"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}, {"ckpt-30.pt", "3"}}, {10, 20, 30});
  const RunRecord again =
      record("t-kill", "aa",
             {{"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}, {"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}, {"ckpt-30.pt", "3"}},
             {10, 20, 10, 20, 30});
  const Verdict v = judge(ref, again, {{2.0, "ckpt-20.pt", 2}}, std::nullopt);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_TRUE(
      v.lines[0].starts_with("differs: t-kill (1 kill at 2.0 s (after ckpt-20.pt)) did not resume: its "
                             "results equal those of the uninterrupted t-ref only because it ran again"))
      << v.lines[0];
  EXPECT_EQ(v.lines[1],
            "  the job did not resume after kill 1: it started again from step 0 (its first checkpoint after the kill "
            "is ckpt-10.pt (step 10, version 2); the kill came after ckpt-20.pt (step 20, version 1))");
  // Without steps: the first checkpoint after the kill has the bytes of one written before it.
  const RunRecord plain = record(
      "t-kill", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}, {"ckpt.pt", "1"}, {"ckpt.pt", "2"}, {"ckpt.pt", "3"}});
  const RunRecord plain_ref = record("t-ref", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}, {"ckpt.pt", "3"}});
  const Verdict w = judge(plain_ref, plain, {{2.0, "ckpt.pt", 2}}, std::nullopt);
  EXPECT_EQ(w.exit_code, 1);
  EXPECT_NE(w.lines[1].find("it started again: its first checkpoint after the kill, ckpt.pt (version 3 of 5), has "
                            "the bytes of ckpt.pt (version 1 of 5)"),
            std::string::npos)
      << w.lines[1];
  // A program that resumes and first saves again what it loaded (nanoGPT saves at the step it
  // resumed at) did resume: by bytes, and by steps.
  const RunRecord resaved =
      record("t-kill", "aa", {{"ckpt.pt", "1"}, {"ckpt.pt", "2"}, {"ckpt.pt", "2"}, {"ckpt.pt", "3"}});
  EXPECT_EQ(judge(plain_ref, resaved, {{2.0, "ckpt.pt", 2}}, std::nullopt).exit_code, 0);
  const RunRecord resaved_steps =
      record("t-kill", "aa", {{"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}, {"ckpt-20.pt", "2b"}, {"ckpt-30.pt", "3"}},
             {10, 20, 20, 30});
  EXPECT_EQ(judge(ref, resaved_steps, {{2.0, "ckpt-20.pt", 2}}, std::nullopt).exit_code, 0);
  // envpin_ckpt's journal: saves, and no load after the kill.
  RunRecord journaled = record("t-kill", "aa", {{"a.pt", "1"}, {"b.pt", "2"}});
  journaled.journal = parse_journal("saved 1 " + std::string(64, 'a') + " a.pt\n");
  EXPECT_EQ(judge(record("t-ref", "aa", {{"a.pt", "1"}, {"b.pt", "2"}}), journaled, {{1.0, "a.pt", 1}}, std::nullopt)
                .exit_code,
            1);
  journaled.journal =
      parse_journal("saved 1 " + std::string(64, 'a') + " a.pt\nloaded 1 " + std::string(64, 'a') + " a.pt\n");
  EXPECT_EQ(judge(record("t-ref", "aa", {{"a.pt", "1"}, {"b.pt", "2"}}), journaled, {{1.0, "a.pt", 1}}, std::nullopt)
                .exit_code,
            0);
}

// Issue 50: a program with no resume at all, killed after its first checkpoint (--kill-at auto),
// starts over and writes that checkpoint again byte for byte: "saved again what it loaded" was
// taken as a resume and the verdict said identical. The same bytes written again are no
// evidence: without a load in envpin_ckpt's journal it did not resume, and the line says why.
TEST(Verdict, TheFirstCheckpointWrittenAgainIsNoEvidenceOfAResume) {
  const RunRecord ref =
      record("t-ref", "aa", {{"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}, {"ckpt-30.pt", "3"}}, {10, 20, 30});
  const RunRecord over =
      record("t-kill", "aa", {{"ckpt-10.pt", "1"}, {"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}, {"ckpt-30.pt", "3"}},
             {10, 10, 20, 30});
  const Verdict v = judge(ref, over, {{1.0, "ckpt-10.pt", 1}}, std::nullopt);
  EXPECT_EQ(v.exit_code, 1);
  ASSERT_GE(v.lines.size(), 2u);
  EXPECT_EQ(v.lines[1],
            "  the job did not resume after kill 1: nothing shows it loaded a checkpoint: its first write after the "
            "kill, ckpt-10.pt (step 10, version 2), has the bytes of the run's first checkpoint, ckpt-10.pt (step 10, "
            "version 1), which a run that starts over writes first (envpin_ckpt.load_latest() records a load)");
  // Two kills, each right after that first checkpoint again (auto chose a copy as "new").
  const RunRecord twice =
      record("t-kill", "aa",
             {{"ckpt-10.pt", "1"}, {"ckpt-10.pt", "1"}, {"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}, {"ckpt-30.pt", "3"}},
             {10, 10, 10, 20, 30});
  EXPECT_EQ(judge(ref, twice, {{1.0, "ckpt-10.pt", 1}, {2.0, "ckpt-10.pt", 2}}, std::nullopt).exit_code, 1);
  // With the load in the journal, the same sequence is a resume that saved again what it loaded.
  RunRecord loaded = over;
  loaded.journal = parse_journal("saved 10 " + std::string(64, 'a') + " ckpt-10.pt\nloaded 10 " + std::string(64, 'a') +
                                 " ckpt-10.pt\n");
  EXPECT_EQ(judge(ref, loaded, {{1.0, "ckpt-10.pt", 1}}, std::nullopt).exit_code, 0);
  // A config.json written at each start (no step, once in the uninterrupted run) is written again
  // by a run that resumes too: no verdict from it.
  const RunRecord cfg_ref =
      record("t-ref", "aa", {{"config.json", "c"}, {"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}}, {-1, 10, 20});
  RunRecord cfg =
      record("t-kill", "aa", {{"config.json", "c"}, {"config.json", "c"}, {"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}});
  cfg.checkpoints[2].step = 10;
  cfg.checkpoints[3].step = 20;
  RunRecord cfg_ref_unstepped = cfg_ref;
  cfg_ref_unstepped.checkpoints[0].step.reset();
  EXPECT_EQ(judge(cfg_ref_unstepped, cfg, {{1.0, "config.json", 1}}, std::nullopt).exit_code, 0);
}

// A kill after the last checkpoint: the segment after it writes none, so it tests no resume;
// the verdict says so instead of counting it.
// Found by e2e.jobs (train.sh config): without steps, a config.json written again at the resumed
// segment's start was taken as its first checkpoint and, having the bytes of the one before the
// kill, as proof that it started over.
TEST(Verdict, AConfigWrittenAtEachStartIsNoCheckpointWithoutStepsEither) {
  const RunRecord ref =
      record("t-ref", "aa", {{"config.json", "c"}, {"checkpoint", "1"}, {"checkpoint", "2"}, {"checkpoint", "3"}});
  const RunRecord killed = record(
      "t-kill", "aa",
      {{"config.json", "c"}, {"checkpoint", "1"}, {"config.json", "c"}, {"checkpoint", "2"}, {"checkpoint", "3"}});
  const Verdict v = judge(ref, killed, {{1.0, "checkpoint", 2}}, std::nullopt);
  EXPECT_EQ(v.exit_code, 0) << v.lines[0] << "\n" << (v.lines.size() > 1 ? v.lines[1] : "");
  // A program that starts over still does not pass, killed after its second checkpoint (as auto
  // does, the config not counted) or after its first (the config passed over, it wrote the
  // run's first checkpoint again with no load recorded).
  const RunRecord second = record("t-kill", "aa",
                                  {{"config.json", "c"},
                                   {"checkpoint", "1"},
                                   {"checkpoint", "2"},
                                   {"config.json", "c"},
                                   {"checkpoint", "1"},
                                   {"checkpoint", "2"},
                                   {"checkpoint", "3"}});
  EXPECT_EQ(judge(ref, second, {{1.0, "checkpoint", 3}}, std::nullopt).exit_code, 1);
  const RunRecord first = record("t-kill", "aa",
                                 {{"config.json", "c"},
                                  {"checkpoint", "1"},
                                  {"config.json", "c"},
                                  {"checkpoint", "1"},
                                  {"checkpoint", "2"},
                                  {"checkpoint", "3"}});
  const Verdict f = judge(ref, first, {{1.0, "checkpoint", 2}}, std::nullopt);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_GE(f.lines.size(), 2u);
  EXPECT_TRUE(f.lines[1].find("has the bytes of the run's first checkpoint, checkpoint (version 1 of 4)") !=
              std::string::npos)
      << f.lines[1];
}

TEST(Verdict, AKillAfterTheLastCheckpointTestsNothing) {
  const RunRecord ref = record("t-ref", "aa", {{"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}}, {10, 20});
  const RunRecord killed = record("t-kill", "aa", {{"ckpt-10.pt", "1"}, {"ckpt-20.pt", "2"}}, {10, 20});
  const Verdict v = judge(ref, killed, {{1.0, "ckpt-10.pt", 1}, {3.0, "ckpt-20.pt", 2}}, std::nullopt);
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(std::find(v.lines.begin(), v.lines.end(),
                      "  kill 2 (after ckpt-20.pt) came after the last checkpoint: the run after it wrote none, so it "
                      "tests no resume"),
            v.lines.end())
      << v.lines.back();
}

TEST(Journal, IsReadWithAGrammar) {
  const std::string a(64, 'a'), b(64, 'b');
  const Journal j = parse_journal("saved 10 " + a + " ckpt-10.pt\nsaved - " + b + " x.pt\nloaded 10 " + a +
                                  " ckpt-10.pt\nsaved 99999999999999999999 " + b + " y\nsaved 5 " +
                                  std::string(64, 'G') + " z\nrm -rf /\n\x1b[2J\nloaded - " + b + " x.pt\n");
  EXPECT_EQ(j.saved_step, (std::map<std::string, long long>{{a, 10}}));
  ASSERT_EQ(j.loaded.size(), 2u);
  EXPECT_EQ(j.loaded[0].first, 10);
  EXPECT_FALSE(j.loaded[1].first.has_value());
}

// Issue 32, 2 and 3: sample images beside the model are not checkpoints; a pattern says which
// files are; steps come from the journal, else from numbers in names that change.
TEST_F(CheckpointDir, OnlyCheckpointsCountAndCarryTheirSteps) {
  write("real_samples.png", "png");
  write("events.out.tfevents.1700000000.host", "tb");
  write("train.log", "log");
  write("netG_epoch_0.pth", "g0");
  write("netD_epoch_0.pth", "d0");
  // In the order they were written, as run.sh picks the newest for {checkpoint} (dcgan writes
  // netD just after netG): the kill is reported after the file the resume gets.
  const auto now = std::filesystem::file_time_type::clock::now();
  std::filesystem::last_write_time(dir_ / "netG_epoch_0.pth", now - std::chrono::seconds(2));
  std::filesystem::last_write_time(dir_ / "netD_epoch_0.pth", now - std::chrono::seconds(1));
  CheckpointWatch watch(dir_);
  watch.poll();
  watch.poll();
  std::vector<std::string> names;
  for (const Version& v : watch.completed()) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"netG_epoch_0.pth", "netD_epoch_0.pth"}));
  EXPECT_FALSE(is_checkpoint_name("fake_samples_epoch_000.PNG"));
  EXPECT_TRUE(is_checkpoint_name("checkpoint"));
  EXPECT_TRUE(is_checkpoint_name("ckpt.pt", {"*.pt"}));
  EXPECT_FALSE(is_checkpoint_name("netG_epoch_0.pth", {"*.pt"}));
  EXPECT_FALSE(is_checkpoint_name("sub/ckpt.pt", {"*.pt"}));  // '*' does not cross '/'
  // Steps: one number in the names that changes; a constant one ("v2") is no step.
  write("netG_epoch_1.pth", "g1");
  write("netD_epoch_1.pth", "d1");
  watch.poll();
  watch.poll();
  watch.resolve_steps({});
  ASSERT_EQ(watch.completed().size(), 4u);
  EXPECT_EQ(watch.completed()[3].step, 1);
  CheckpointWatch constant(dir_, {"model-v2*"});
  write("model-v2.pt", "x");
  constant.poll();
  constant.poll();
  constant.resolve_steps({});
  ASSERT_EQ(constant.completed().size(), 1u);
  EXPECT_FALSE(constant.completed()[0].step.has_value());
  Journal j;
  j.saved_step[pin::sha256_hex("x")] = 300;
  constant.resolve_steps(j);
  EXPECT_EQ(constant.completed()[0].step, 300);
}

// A single file overwritten in place: each version is kept (a snapshot) to compare later.
TEST_F(CheckpointDir, EachVersionIsSnapshotted) {
  const fs::path snaps = dir_ / "snaps";
  CheckpointWatch watch(dir_ / "c", {}, snaps, 1 << 20);
  write("c/ckpt.pt", "one");
  watch.poll();
  watch.poll();
  write("c/ckpt.pt", "two!");
  fs::last_write_time(dir_ / "c/ckpt.pt", fs::file_time_type::clock::now() + std::chrono::seconds(5));
  watch.poll();
  watch.poll();
  ASSERT_EQ(watch.completed().size(), 2u);
  EXPECT_EQ(pin::sha256_file(watch.completed()[0].copy), pin::sha256_hex("one"));
  EXPECT_EQ(pin::sha256_file(watch.completed()[1].copy), pin::sha256_hex("two!"));
  // Past the budget: recorded, not copied.
  CheckpointWatch small(dir_ / "c", {}, dir_ / "snaps2", 2);
  small.poll();
  small.poll();
  ASSERT_EQ(small.completed().size(), 1u);
  EXPECT_TRUE(small.completed()[0].copy.empty());
}

}  // namespace
}  // namespace envpin::resume_check

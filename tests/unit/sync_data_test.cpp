// SPDX-License-Identifier: Apache-2.0
// The data a project's jobs need on the server: manifest::data_paths (paths: in the project and
// jobs.data), what envpin sync leaves out of it and the warning that says so, `sync --data`'s
// rules (secrets still stay), and the POSIX sh check `run --host` makes there.
#include <gtest/gtest.h>

#include "cli/cli_fixture.hpp"
#include "diag/error.hpp"
#include "diag/text.hpp"
#include "manifest/data.hpp"
#include "manifest/load.hpp"
#include "scan/send_set.hpp"
#include "sync/data.hpp"

namespace envpin {
namespace {

manifest::Manifest parse(const std::string& text, const fs::path& dir = ".") {
  return manifest::parse(text, "envpin.yaml", dir);
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const diag::Error& e) {
    return diag::format(e);
  }
  return "";
}

TEST(SyncData, PathsInTheProjectAndJobsData) {
  const auto m = parse(
      "envpin: 1\nname: x\nenv: {DATA_DIR: /workspace/data/train}\n"
      "paths: {train: '${DATA_DIR}', cache: /cache, root: /workspace, weights: /workspace/weights/}\n"
      "jobs: {data: [data/train/, ./extra/./set, models/base.pt]}\n");
  std::vector<std::string> got;
  for (const auto& d : manifest::data_paths(m)) got.push_back(d.value);
  EXPECT_EQ(got, (std::vector<std::string>{"data/train", "extra/set", "models/base.pt", "weights"}));
  // Each at the line that names it first.
  EXPECT_EQ(manifest::data_paths(m).front().where.line, 4);
  EXPECT_EQ(manifest::data_paths(m)[1].where.line, 5);
  EXPECT_TRUE(manifest::data_paths(parse("envpin: 1\nname: x\n")).empty());
}

TEST(SyncData, JobsDataIsCheckedLikeOtherPaths) {
  EXPECT_EQ(error_of("envpin: 1\nname: x\njobs: {data: [../outside]}\n"),
            "envpin: error: envpin.yaml:3:15: jobs.data '../outside' is not inside the project\n"
            "envpin: hint: name a directory or file under the project, e.g. 'data/train'\n");
  EXPECT_EQ(error_of("envpin: 1\nname: x\njobs: {data: [a/../../b]}\n"),
            "envpin: error: envpin.yaml:3:15: jobs.data 'a/../../b' is not inside the project\n"
            "envpin: hint: name a directory or file under the project, e.g. 'data/train'\n");
  EXPECT_EQ(error_of("envpin: 1\nname: x\njobs: {data: [/srv/data]}\n"),
            "envpin: error: envpin.yaml:3:15: jobs.data '/srv/data' must be relative to the project\n"
            "envpin: hint: name it as the project holds it, e.g. 'data/train' (the job sees it under the workdir)\n");
  EXPECT_EQ(error_of("envpin: 1\nname: x\njobs: {data: ['my data']}\n"),
            "envpin: error: envpin.yaml:3:15: 'jobs.data' 'my data' has characters other than letters, digits and "
            "._-+@/\n"
            "envpin: hint: rename it with those characters only; paths reach shell scripts and the Dockerfile\n");
  EXPECT_EQ(error_of("envpin: 1\nname: x\njobs: {data: [d, d/]}\n"),
            "envpin: error: envpin.yaml:3:18: jobs.data lists 'd' twice\nenvpin: hint: keep one of them\n");
  EXPECT_NE(error_of("envpin: 1\nname: x\njobs: {data: .}\n"), "");
  EXPECT_EQ(error_of("envpin: 1\nname: x\njobs: {data: [data/train]}\n"), "");
}

class SyncDataDir : public Cli {};

TEST_F(SyncDataDir, IgnoredDataIsNamedWithItsSizeAndTheFix) {
  write("data/train/a.bin", std::string(1024, 'a'));
  write("data/train/b.bin", std::string(512, 'b'));
  write("data/train/.env", "TOKEN=1\n");
  write("data/sent/c.txt", "c\n");
  write("weights.pt", std::string(3 * 1024 * 1024, 'w'));
  write("train.py", "print(1)\n");
  const auto m = parse("envpin: 1\nname: x\njobs:\n  data: [data/train, data/sent, weights.pt, data/absent]\n", dir_);
  scan::IgnoreRules rules;
  rules.add("data/train");
  rules.add("*.pt");
  const auto left = sync::data_left_out(dir_, manifest::data_paths(m), rules);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].path, "data/train");
  EXPECT_TRUE(left[0].directory);
  EXPECT_EQ(left[0].bytes, 1024u + 512 + 8);
  EXPECT_EQ(sync::data_warning(left[0], "gpu1:proj"),
            "envpin: warning: envpin.yaml:4:10: data directory data/train (1.5 KiB) is ignored (.gitignore, "
            ".dockerignore) and not sent, but the job needs it: 'envpin sync --data gpu1:proj' sends it, or put it on "
            "the server another way\n");
  EXPECT_EQ(sync::data_warning(left[1], "gpu1:proj"),
            "envpin: warning: envpin.yaml:4:33: data file weights.pt (3.0 MiB) is ignored (.gitignore, .dockerignore) "
            "and not sent, but the job needs it: 'envpin sync --data gpu1:proj' sends it, or put it on the server "
            "another way\n");
  // --data: the data is sent, its secret file is not.
  const scan::IgnoreRules all = sync::with_data(rules, left);
  scan::SendRules send;
  send.rules = &all;
  const scan::SendSet set = scan::send_set(dir_, send, ".");
  const auto sent = [&](const std::string& p) {
    return std::find(set.paths.begin(), set.paths.end(), p) != set.paths.end();
  };
  EXPECT_TRUE(sent("data/train/a.bin"));
  EXPECT_TRUE(sent("data/train/b.bin"));
  EXPECT_TRUE(sent("weights.pt"));
  EXPECT_FALSE(sent("data/train/.env"));
  // Without --data none of it goes.
  send.rules = &rules;
  const scan::SendSet plain = scan::send_set(dir_, send, ".");
  EXPECT_EQ(std::count(plain.paths.begin(), plain.paths.end(), "data/train/a.bin"), 0);
  EXPECT_EQ(std::count(plain.paths.begin(), plain.paths.end(), "data/sent/c.txt"), 1);
}

TEST_F(SyncDataDir, TheServerCheckIsPosixShell) {
  write("data/full/x", "x");
  fs::create_directories(dir_ / "data/empty");
  write("data/zero", "");
  write("data/file", "1");
  const std::vector<std::string> paths = {"data/full", "data/empty", "data/zero", "data/file", "data/missing", "-n"};
  const std::string script = sync::data_check_script(paths);
  write("check.sh", "#!/bin/sh\n" + script + "\n");
  const std::string out = shell("cd " + sh_quote(dir_.string()) + " && dash check.sh 2>&1");
  EXPECT_EQ(out, "empty data/empty\nempty data/zero\nmissing data/missing\nmissing -n\n");
  EXPECT_EQ(sync::data_check_result("Welcome!\n" + out + "missing /etc\n", paths),
            (std::vector<std::pair<std::string, std::string>>{
                {"data/empty", "empty"}, {"data/zero", "empty"}, {"data/missing", "missing"}, {"-n", "missing"}}));
  if (!shell("command -v shellcheck").empty()) {
    EXPECT_EQ(shell("shellcheck -s sh " + sh_quote((dir_ / "check.sh").string()) + " 2>&1"), "");
  }
}

TEST(SyncData, HumanBytes) {
  EXPECT_EQ(diag::human_bytes(0), "0 B");
  EXPECT_EQ(diag::human_bytes(1023), "1023 B");
  EXPECT_EQ(diag::human_bytes(1024), "1.0 KiB");
  EXPECT_EQ(diag::human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(diag::human_bytes(1024 * 1024 - 1), "1.0 MiB");
  EXPECT_EQ(diag::human_bytes(5ull << 30), "5.0 GiB");
}

}  // namespace
}  // namespace envpin

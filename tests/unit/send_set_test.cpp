// SPDX-License-Identifier: Apache-2.0
// What a project sends (build context and sync): one rule set, and the rsync excludes that
// leave out exactly what it leaves out.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "diag/error.hpp"
#include "scan/send_set.hpp"
#include "test_dir.hpp"

namespace envpin::scan {
namespace {

namespace fs = std::filesystem;

class SendSetTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir("send-set-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text = "x\n") {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << text;
  }
  fs::path dir_;
};

TEST_F(SendSetTest, OneRuleSetAndTheFewestExcludes) {
  write("src/train.py");
  write("data/shard-0.bin");
  write("data/sub/shard-1.bin");
  write(".env");
  write("src/.ENV.local");
  write(".ssh/id_ed25519");
  write(".envpin/run.sh");
  write(".envpin/state/x");
  write("we[ir]d*.log");
  ASSERT_EQ(::link((dir_ / ".env").c_str(), (dir_ / "src/config.txt").c_str()), 0);
  IgnoreRules rules;
  rules.add("data");
  rules.add(".envpin");
  rules.add("!.envpin/run.sh");
  rules.add("*.log");
  SendRules r;
  r.rules = &rules;
  r.carrier = "sync would send";
  const SendSet s = send_set(dir_, r, ".");
  EXPECT_EQ(s.paths, (std::vector<std::string>{".envpin/run.sh", "src", "src/train.py"}));
  std::vector<std::string> why;
  for (const LeftOut& l : s.left_out) why.push_back(l.path + (l.directory ? "/" : "") + " " + l.why);
  // An excluded directory that no "!" rule reaches into is not walked: data/ and .envpin/state/
  // are one entry each; .envpin/ is walked for its run.sh.
  EXPECT_EQ(why,
            (std::vector<std::string>{".env a secret file", ".envpin/ .dockerignore", ".envpin/state/ .dockerignore",
                                      ".ssh/ a secret file", ".ssh/id_ed25519 a secret file", "data/ .dockerignore",
                                      "src/.ENV.local a secret file", "src/config.txt a hard link to a secret file",
                                      "we[ir]d*.log .dockerignore"}));
  // .envpin stays (run.sh is sent); what is under it that is not sent goes by name; data whole.
  EXPECT_EQ(rsync_excludes(s), (std::vector<std::string>{"/.env", "/.envpin/state", "/.ssh", "/data", "/src/.ENV.local",
                                                         "/src/config.txt", "/we?ir]d?.log"}));
}

TEST_F(SendSetTest, ACredentialInAFileIsRefusedWithItsPlace) {
  write("src/conf.py",
        "A = 1\nTOKEN = 'hf_"
        "abcdefghijklmnopqrstuvwxyzABCDEFGH'\n");
  SendRules r;
  r.carrier = "envpin sync would send to gpu1";
  r.hint = "remove it";
  try {
    send_set(dir_, r, "proj");
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "a credential is written in this file, which envpin sync would send to gpu1");
    EXPECT_EQ(e.where()->file, "proj/src/conf.py");
    EXPECT_EQ(e.where()->line, 2);
    EXPECT_EQ(e.where()->column, 10);
  }
}

// Issue 61: Kaggle's, PostgreSQL's, Vault's and rclone's credential files, a pip.conf with a
// password in its index URL and a vendored repository's .git/config with a token all went into a
// pushed image. Each is left out, at any depth, by its name or by what it holds (and a hard link
// to one too); the same configuration files without a credential go.
TEST_F(SendSetTest, CredentialFilesLeftOutByNameOrContent) {
  write("train.py");
  write(".kaggle/kaggle.json", "{\"username\": \"u\", \"key\": \"k\"}\n");
  write("db/.pgpass", "db:5432:*:u:p\n");
  write("ops/.vault-token", "s.x\n");
  write("conf/rclone.conf", "[s3]\ntype = s3\nsecret_access_key = x\n");
  write("pip.conf", "[global]\nindex-url = https://alice:s3cret@pypi.example.com/simple\n");
  write("tools/pip.conf", "[global]\nindex-url = https://pypi.example.com/simple\n");
  write("vendor/lib/.git/config", "[remote \"origin\"]\n\turl = https://oauth2:tok@gitlab.example.com/o/r.git\n");
  write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
  write("vendor/other/.git/config", "[remote \"origin\"]\n\turl = git@github.com:o/r.git\n");
  ASSERT_EQ(::link((dir_ / "pip.conf").c_str(), (dir_ / "notes.txt").c_str()), 0);
  SendRules r;
  r.carrier = "the pushed image would carry";
  const SendSet s = send_set(dir_, r, ".");
  EXPECT_EQ(s.paths, (std::vector<std::string>{".kaggle", "conf", "db", "ops", "tools", "tools/pip.conf", "train.py",
                                               "vendor", "vendor/lib", "vendor/lib/.git", "vendor/lib/.git/HEAD",
                                               "vendor/other", "vendor/other/.git", "vendor/other/.git/config"}));
  std::vector<std::string> why;
  for (const LeftOut& l : s.left_out) why.push_back(l.path + " " + l.why);
  EXPECT_EQ(why,
            (std::vector<std::string>{".kaggle/kaggle.json a secret file", "conf/rclone.conf a secret file",
                                      "db/.pgpass a secret file", "notes.txt a hard link to a secret file",
                                      "ops/.vault-token a secret file", "pip.conf a secret file (credentials in it)",
                                      "vendor/lib/.git/config a secret file (credentials in it)"}));
  // context.allow_secrets lets one through.
  r.allow_secrets = {"pip.conf"};
  const std::vector<std::string> allowed = send_set(dir_, r, ".").paths;
  EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), std::string("pip.conf")));
}

TEST_F(SendSetTest, EverythingUnderASentDirectoryLeftOut) {
  // .gitignore's "data/" becomes .dockerignore's "**/data/**": the directory goes, nothing in
  // it; on the server, what is in data/ is left alone.
  write("data/a.bin");
  write("data/sub/b.bin");
  write("src/keep.py");
  write("src/skip.log");
  IgnoreRules rules;
  rules.add("**/data/**");
  rules.add("**/*.log");
  SendRules r;
  r.rules = &rules;
  const SendSet s = send_set(dir_, r, ".");
  EXPECT_EQ(s.paths, (std::vector<std::string>{"data", "src", "src/keep.py"}));
  EXPECT_EQ(rsync_excludes(s), (std::vector<std::string>{"/data/**", "/src/skip.log"}));
}

}  // namespace
}  // namespace envpin::scan

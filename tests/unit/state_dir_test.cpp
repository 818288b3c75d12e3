// SPDX-License-Identifier: Apache-2.0
// envpin's own state (io/state_dir): the directories are this user's alone, a link is never
// followed, and a held file is exactly the bytes given, read-only, replaced whole.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "io/state_dir.hpp"
#include "test_dir.hpp"

namespace envpin::io {
namespace {

namespace fs = std::filesystem;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode & 07777;
}

class StateDir : public testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  fs::path dir_ = test_dir("state-dir");
};

TEST_F(StateDir, HeldFilesAreTheBytesGivenReadOnlyInPrivateDirectories) {
  const fs::path state = dir_ / "a" / "b" / "projects" / "p";
  const fs::path held = hold_file(state, "run.sh", "echo one\n");
  EXPECT_EQ(held, state / "run.sh");
  EXPECT_EQ(read_file(held), "echo one\n");
  EXPECT_EQ(mode_of(held), 0500u);
  for (const fs::path& d : {state, state.parent_path(), dir_ / "a"}) EXPECT_EQ(mode_of(d), 0700u) << d;
  // Other bytes replace it whole (a new file: a shell reading the old one keeps its bytes).
  struct stat before {};
  ::stat(held.c_str(), &before);
  hold_file(state, "run.sh", "echo two\n");
  struct stat after {};
  ::stat(held.c_str(), &after);
  EXPECT_EQ(read_file(held), "echo two\n");
  EXPECT_NE(before.st_ino, after.st_ino);
  // The same bytes leave it as it is; a copy made writable is made again.
  hold_file(state, "run.sh", "echo two\n");
  struct stat same {};
  ::stat(held.c_str(), &same);
  EXPECT_EQ(same.st_ino, after.st_ino);
  ::chmod(held.c_str(), 0700);
  hold_file(state, "run.sh", "echo two\n");
  EXPECT_EQ(mode_of(held), 0500u);
}

TEST_F(StateDir, ALinkOrAnOpenDirectoryIsNeverTrusted) {
  fs::create_directories(dir_ / "elsewhere");
  fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "linked");
  EXPECT_THROW(hold_file(dir_ / "linked", "dev.sh", "x"), diag::Error);
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere" / "dev.sh"));
  // A directory of this user's open to others is narrowed before anything is written in it.
  fs::create_directories(dir_ / "open");
  ::chmod((dir_ / "open").c_str(), 0777);
  hold_file(dir_ / "open", "dev.sh", "x");
  EXPECT_EQ(mode_of(dir_ / "open"), 0700u);
  // A link planted at the file itself is replaced, never written through.
  fs::create_directories(dir_ / "s");
  ::chmod((dir_ / "s").c_str(), 0700);
  fs::create_symlink(dir_ / "target", dir_ / "s" / "run.sh");
  hold_file(dir_ / "s", "run.sh", "mine\n");
  EXPECT_FALSE(fs::is_symlink(dir_ / "s" / "run.sh"));
  EXPECT_FALSE(fs::exists(dir_ / "target"));
}

TEST(StatePaths, OneKeyPerProjectWhateverItsSpelling) {
  EXPECT_EQ(project_path("/work/p/"), "/work/p");
  EXPECT_EQ(project_path("/work/p/."), "/work/p");
  EXPECT_EQ(project_path("/work/q/../p"), "/work/p");
  EXPECT_EQ(project_path("/"), "/");
  EXPECT_EQ(project_state("/work/p/"), project_state("/work/p"));
  EXPECT_NE(project_state("/work/p"), project_state("/work/q"));
  const char* was = std::getenv("XDG_STATE_HOME");
  const std::string before = was ? was : "";
  ::setenv("XDG_STATE_HOME", "relative/state", 1);  // not absolute: ignored, as XDG says
  EXPECT_NE(state_root().generic_string().find("/.local/state/envpin"), std::string::npos);
  ::setenv("XDG_STATE_HOME", "/srv/state", 1);
  EXPECT_EQ(state_root(), fs::path("/srv/state/envpin"));
  if (was)
    ::setenv("XDG_STATE_HOME", before.c_str(), 1);
  else
    ::unsetenv("XDG_STATE_HOME");
}

}  // namespace
}  // namespace envpin::io

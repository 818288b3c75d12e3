// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "test_dir.hpp"

namespace envpin::io {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFile, WritesReplacesAndLeavesNoTemporaries) {
  const fs::path dir = test_dir("atomic-test");
  fs::remove_all(dir);
  write_atomic(dir / "sub" / "a.sh", "one\n", true);
  EXPECT_EQ(read_file(dir / "sub" / "a.sh"), "one\n");
  EXPECT_TRUE(is_executable(dir / "sub" / "a.sh"));
  write_atomic(dir / "sub" / "a.sh", "two\n", false);
  EXPECT_EQ(read_file(dir / "sub" / "a.sh"), "two\n");
  EXPECT_FALSE(is_executable(dir / "sub" / "a.sh"));
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir / "sub")) ++entries;
  EXPECT_EQ(entries, 1);
  EXPECT_FALSE(read_file(dir / "missing"));
  fs::remove_all(dir);
}

// A crash after the commit point leaves a journal; the next call finishes it, from any directory.
TEST(AtomicFile, JournalFinishesACommitAndRefusesForeignRecords) {
  const fs::path dir = fs::absolute(test_dir("journal-test"));
  fs::remove_all(dir);
  fs::create_directories(dir / "p/.envpin");
  fs::create_directories(dir / "outside");
  const fs::path journal = dir / "p/.envpin/.commit.envpin-journal";
  write_atomic(dir / "p/a", "old a\n", false);
  write_atomic(dir / "p/b", "old b\n", false);
  // What write_all_atomic leaves when killed between its renames: a renamed, b's temporary waiting.
  write_atomic(dir / "p/a", "new a\n", false);
  write_atomic(dir / "p/.b.envpin-AAAAAA", "new b\n", false);
  // And records a journal must not be trusted with: a file outside the project, a temporary
  // that is not envpin's, a relative path.
  write_atomic(dir / "outside/.victim.envpin-BBBBBB", "planted\n", false);
  write_atomic(dir / "outside/victim", "mine\n", false);
  write_atomic(dir / "p/notes", "planted\n", false);
  write_atomic(dir / "p/keep", "mine\n", false);
  const auto rec = [](const fs::path& from, const fs::path& to) { return from.string() + '\0' + to.string() + '\0'; };
  write_atomic(journal,
               rec(dir / "p/.a.envpin-CCCCCC", dir / "p/a") + rec(dir / "p/.b.envpin-AAAAAA", dir / "p/b") +
                   rec(dir / "outside/.victim.envpin-BBBBBB", dir / "outside/victim") +
                   rec(dir / "p/notes", dir / "p/keep") + rec("p/.x.envpin-DDDDDD", "p/x"),
               false);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir / "outside");
  recover_commit(journal);
  fs::current_path(cwd);
  EXPECT_EQ(read_file(dir / "p/a"), "new a\n");
  EXPECT_EQ(read_file(dir / "p/b"), "new b\n");
  EXPECT_EQ(read_file(dir / "outside/victim"), "mine\n");
  EXPECT_EQ(read_file(dir / "p/keep"), "mine\n");
  EXPECT_FALSE(fs::exists(journal));
  // write_all_atomic: every file, and a journal that names them absolutely.
  fs::current_path(dir);
  write_all_atomic({{"p/a", "third a\n", false}, {"p/c", "c\n", true}}, "p/.envpin/.commit.envpin-journal");
  fs::current_path(cwd);
  EXPECT_EQ(read_file(dir / "p/a"), "third a\n");
  EXPECT_EQ(read_file(dir / "p/c"), "c\n");
  EXPECT_TRUE(is_executable(dir / "p/c"));
  EXPECT_FALSE(fs::exists(journal));
  fs::remove_all(dir);
}

TEST(AtomicFile, FileInPlaceOfDirectoryIsAnError) {
  const fs::path dir = test_dir("atomic-test2");
  fs::remove_all(dir);
  write_atomic(dir / "blocker", "x", false);
  EXPECT_THROW(write_atomic(dir / "blocker" / "y", "x", false), diag::Error);
  fs::remove_all(dir);
}

// Issue 49, class 1: a directory envpin owns under a tree a job can write is made by envpin or
// refused when a link is there; a copy never follows a link at either end.
TEST(OwnedFiles, ALinkWhereEnvpinWritesIsRefusedNeverFollowed) {
  const fs::path dir = test_dir("owned-test");
  fs::remove_all(dir);
  fs::create_directories(dir / "outside");
  owned_directory(dir / "apt");
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(dir / "apt")));
  owned_directory(dir / "apt");  // there already: accepted
  fs::create_directory_symlink(dir / "outside", dir / "wheels");
  try {
    owned_directory(dir / "wheels");
    FAIL() << "accepted a link";
  } catch (const diag::Error& e) {
    EXPECT_NE(e.message().find("is a symbolic link"), std::string::npos) << e.message();
    EXPECT_NE(e.hint().find("remove"), std::string::npos);
  }
  std::ofstream(dir / "file") << "x";
  EXPECT_THROW(owned_directory(dir / "file"), diag::Error);
  EXPECT_THROW(owned_directory(dir / "missing" / "deeper"), diag::Error);  // the parent is not made

  std::ofstream(dir / "outside" / "secret") << "host file";
  std::ofstream(dir / "data") << "checkpoint";
  fs::create_symlink(dir / "outside" / "secret", dir / "link");
  EXPECT_FALSE(copy_regular(dir / "link", dir / "copy", 1 << 20)) << "read through a link";
  EXPECT_FALSE(fs::exists(dir / "copy"));
  fs::create_symlink(dir / "outside" / "target", dir / "planted");
  EXPECT_FALSE(copy_regular(dir / "data", dir / "planted", 1 << 20)) << "wrote through a link";
  EXPECT_FALSE(fs::exists(dir / "outside" / "target"));
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(copy_regular(dir / "fifo", dir / "copy", 1 << 20)) << "a FIFO is not waited on";
  EXPECT_FALSE(copy_regular(dir / "data", dir / "copy", 3)) << "over the cap";
  EXPECT_FALSE(fs::exists(dir / "copy"));
  EXPECT_TRUE(copy_regular(dir / "data", dir / "copy", 1 << 20));
  EXPECT_EQ(read_file(dir / "copy"), "checkpoint");
  fs::remove_all(dir);
}

// Issue 61: with .envpin a link to a directory outside the project, generate and push wrote there.
// Every set written through write_all_atomic (generate, lock, ci, mirror) and every single file
// written with owned_path checked is refused when a link stands where envpin writes, before
// anything is written.
TEST(OwnedFiles, NoWriteGoesThroughALinkInTheProject) {
  const fs::path dir = test_dir("owned-path-test");
  fs::remove_all(dir);
  const fs::path root = dir / "project", outside = dir / "outside";
  fs::create_directories(root);
  fs::create_directories(outside);
  fs::create_directory_symlink(outside, root / ".envpin");
  const fs::path journal = root / ".envpin" / ".commit.envpin-journal";
  const auto message = [](const auto& write) {
    try {
      write();
    } catch (const diag::Error& e) {
      return e.message() + " | " + e.hint();
    }
    return std::string("written");
  };
  EXPECT_EQ(message([&] {
              write_all_atomic({{root / "Dockerfile", "FROM x\n"}}, journal);
            }),
            "'" + (root / ".envpin").generic_string() +
                "' is a symbolic link; envpin writes into its own files and directories in a project, never through "
                "a link | remove '" +
                (root / ".envpin").generic_string() + "' (envpin creates it again) and run the command again");
  EXPECT_NE(message([&] { recover_commit(journal); }), "written");
  EXPECT_NE(message([&] { owned_path(root, root / ".envpin" / "push.json"); }), "written");
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_FALSE(fs::exists(root / "Dockerfile"));
  fs::remove(root / ".envpin");

  // A link at an output's directory, or at the output itself; a relative root names it relatively.
  fs::create_directory_symlink(outside, root / "docker");
  EXPECT_NE(
      message([&] {
        write_all_atomic({{root / "Dockerfile", "FROM x\n"}, {root / "docker" / "Dockerfile", "FROM y\n"}}, journal);
      }).find("' is a symbolic link"),
      std::string::npos);
  EXPECT_FALSE(fs::exists(root / "Dockerfile"));
  fs::create_symlink(outside / "file", root / "out.txt");
  EXPECT_NE(message([&] { owned_path(root, root / "out.txt"); }), "written");
  EXPECT_TRUE(fs::is_empty(outside));
  const fs::path here = fs::current_path();
  fs::current_path(root);
  EXPECT_EQ(message([&] { owned_path(".", "docker/Dockerfile"); }).substr(0, 9), "'docker' ");
  fs::current_path(here);
  // Links above the project, and paths outside it, are not envpin's to judge.
  fs::create_directory_symlink(root, dir / "via-link");
  fs::remove(root / "docker");
  fs::remove(root / "out.txt");
  write_all_atomic({{dir / "via-link" / "Dockerfile", "FROM x\n"}}, dir / "via-link" / ".envpin" / "j");
  EXPECT_EQ(read_file(root / "Dockerfile"), "FROM x\n");
  owned_path(root, outside / "elsewhere");
  fs::remove_all(dir);
}

TEST(OwnedFiles, APrivateDirectoryIsThisUsersAlone) {
  const fs::path a = private_directory("envpin-test-private");
  const fs::path b = private_directory("envpin-test-private");
  EXPECT_NE(a, b);
  struct stat st {};
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, ::getuid());
  EXPECT_EQ(a.filename().string().rfind("envpin-test-private-", 0), 0u);
  fs::remove_all(a);
  fs::remove_all(b);
}

}  // namespace
}  // namespace envpin::io

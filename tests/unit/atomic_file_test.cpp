// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>

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

}  // namespace
}  // namespace envpin::io

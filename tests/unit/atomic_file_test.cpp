// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"

namespace envpin::io {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFile, WritesReplacesAndLeavesNoTemporaries) {
  const fs::path dir = fs::path(testing::TempDir()) / "envpin-atomic-test";
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

TEST(AtomicFile, FileInPlaceOfDirectoryIsAnError) {
  const fs::path dir = fs::path(testing::TempDir()) / "envpin-atomic-test2";
  fs::remove_all(dir);
  write_atomic(dir / "blocker", "x", false);
  EXPECT_THROW(write_atomic(dir / "blocker" / "y", "x", false), diag::Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace envpin::io

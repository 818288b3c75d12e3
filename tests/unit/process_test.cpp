// SPDX-License-Identifier: Apache-2.0
// run_process from two threads at once (envpin lock resolves pip beside apt): a child started by
// one thread must not inherit the pipes of the other's child.
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>

#include "io/process.hpp"

namespace envpin::io {
namespace {

// The descriptors a child sees, as ls lists /proc/self/fd (its own directory handle included).
std::string child_fds() { return run_process({"sh", "-c", "ls /proc/self/fd | wc -l"}, "").out; }

TEST(RunProcess, AChildDoesNotInheritAnotherThreadsPipes) {
  const std::string alone = child_fds();
  ASSERT_FALSE(alone.empty());
  // Another thread's child holds its pipes open for a second (stdin fed, so all three exist).
  auto other = std::async(std::launch::async, [] { return run_process({"sh", "-c", "sleep 1; cat >/dev/null"}, "x"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(child_fds(), alone) << "a child inherited the pipes of a process started on another thread";
  EXPECT_EQ(other.get().exit_code, 0);
}

// Another machine's answer is read bounded (issue 61: a server's endless answer took 1.18 GB): past
// the limit the process is ended, its output cut there.
TEST(RunProcess, AnAnswerPastTheLimitEndsIt) {
  const ProcessResult r = run_process({"sh", "-c", "yes"}, "", 65536);
  EXPECT_TRUE(r.over_limit);
  EXPECT_EQ(r.out.size(), 65536u);
  EXPECT_EQ(r.exit_code, -1);
  const ProcessResult small = run_process({"sh", "-c", "echo fine"}, "", 65536);
  EXPECT_FALSE(small.over_limit);
  EXPECT_EQ(small.out, "fine\n");
}

}  // namespace
}  // namespace envpin::io

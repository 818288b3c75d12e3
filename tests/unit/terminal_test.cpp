// SPDX-License-Identifier: Apache-2.0
// Progress and colour as each kind of stderr gets them (tests/e2e/terminal.sh runs envpin under a
// real pseudo-terminal).
#include <gtest/gtest.h>
#include <pty.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "diag/terminal.hpp"

namespace envpin::diag {
namespace {

using std::chrono::milliseconds;
constexpr Terminal kTty{true, true};
constexpr Terminal kTtyNoColor{true, false};
constexpr Terminal kPipe{false, false};

TEST(Progress, OnATerminalOneLineRedrawnThenErased) {
  std::ostringstream err;
  {
    Progress p(err, kTty, false, milliseconds(0));
    p.step("resolving the image");
    p.step("resolving the apt closure");
  }
  EXPECT_EQ(err.str(), "\r\033[Kenvpin: resolving the image\r\033[Kenvpin: resolving the apt closure\r\033[K");
}

TEST(Progress, InALogPlainLinesAndNoEscapes) {
  std::ostringstream err;
  {
    Progress p(err, kPipe, false, milliseconds(0));
    p.step("resolving the image");
    p.update("hashing: 1 of 2 files, 0 MB");
    p.update("hashing: 2 of 2 files, 0 MB");  // within 5 s of the last counter line: not printed
  }
  EXPECT_EQ(err.str(), "envpin: resolving the image\nenvpin: hashing: 1 of 2 files, 0 MB\n");
}

TEST(Progress, QuietPrintsNothing) {
  for (const Terminal t : {kTty, kPipe}) {
    std::ostringstream err;
    {
      Progress p(err, t, true, milliseconds(0));
      p.step("resolving");
      p.update("hashing: 1 of 1 files, 0 MB");
    }
    EXPECT_EQ(err.str(), "");
  }
}

TEST(Progress, CountersWaitForTheThreshold) {
  std::ostringstream err;
  Progress p(err, kTty, false, milliseconds(300));
  p.update("hashing: 1 of 3 files, 0 MB");  // quick work shows nothing
  EXPECT_EQ(err.str(), "");
  std::this_thread::sleep_for(milliseconds(350));
  p.update("hashing: 2 of 3 files, 0 MB");
  EXPECT_EQ(err.str(), "\r\033[Kenvpin: hashing: 2 of 3 files, 0 MB");
  p.update("hashing: 3 of 3 files, 0 MB");  // within 100 ms of the last draw
  p.done();
  EXPECT_EQ(err.str(), "\r\033[Kenvpin: hashing: 2 of 3 files, 0 MB\r\033[K");
}

TEST(Paint, OnlyTheWordsAndOnlyWithColour) {
  const std::string diagnostic = "envpin: error: f.yaml:1:2: bad\nenvpin: hint: fix it\n";
  EXPECT_EQ(paint_diagnostic(kTty, diagnostic),
            "envpin: \033[1;31merror\033[0m: f.yaml:1:2: bad\nenvpin: hint: fix it\n");
  EXPECT_EQ(paint_diagnostic(kTty, "envpin: warning: w\n"), "envpin: \033[1;33mwarning\033[0m: w\n");
  EXPECT_EQ(paint_diagnostic(kTtyNoColor, diagnostic), diagnostic);
  EXPECT_EQ(paint_diagnostic(kPipe, diagnostic), diagnostic);
  // A message that quotes the word elsewhere is left alone.
  EXPECT_EQ(paint_diagnostic(kTty, "envpin: hint: an error: here\n"), "envpin: hint: an error: here\n");
  EXPECT_EQ(paint_verdict(kTty, "ok"), "\033[32mok\033[0m");
  EXPECT_EQ(paint_verdict(kTty, "MISMATCH"), "\033[1;31mMISMATCH\033[0m");
  EXPECT_EQ(paint_verdict(kTty, "skip"), "skip");
  EXPECT_EQ(paint_verdict(kPipe, "MISMATCH"), "MISMATCH");
}

TEST(TerminalFor, APseudoTerminalNoColorAndDumb) {
  int leader = -1, follower = -1;
  ASSERT_EQ(::openpty(&leader, &follower, nullptr, nullptr, nullptr), 0);
  const char* term = std::getenv("TERM");
  const std::string saved_term = term ? term : "";
  ::setenv("TERM", "xterm-256color", 1);
  ::unsetenv("NO_COLOR");
  EXPECT_TRUE(terminal_for(follower).tty);
  EXPECT_TRUE(terminal_for(follower).color);
  ::setenv("NO_COLOR", "1", 1);
  EXPECT_TRUE(terminal_for(follower).tty);
  EXPECT_FALSE(terminal_for(follower).color);
  ::setenv("NO_COLOR", "", 1);  // no-color.org: present and not empty
  EXPECT_TRUE(terminal_for(follower).color);
  ::unsetenv("NO_COLOR");
  ::setenv("TERM", "dumb", 1);
  EXPECT_FALSE(terminal_for(follower).tty);
  EXPECT_FALSE(terminal_for(follower).color);
  // A pipe is no terminal, whatever the environment says.
  ::setenv("TERM", "xterm-256color", 1);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_FALSE(terminal_for(fds[1]).tty);
  EXPECT_FALSE(terminal_for(fds[1]).color);
  for (int fd : {leader, follower, fds[0], fds[1]}) ::close(fd);
  if (term)
    ::setenv("TERM", saved_term.c_str(), 1);
  else
    ::unsetenv("TERM");
}

}  // namespace
}  // namespace envpin::diag

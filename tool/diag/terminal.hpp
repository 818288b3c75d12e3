// SPDX-License-Identifier: Apache-2.0
// What envpin may do on the terminal a stream reaches: colour for the words a reader scans for
// (error, warning, MISMATCH, ok), and progress for work that takes more than about a second. Only
// on a TTY, never with NO_COLOR set (https://no-color.org: present and not empty) or TERM=dumb;
// piped output and logs get plain lines.
#pragma once

#include <chrono>
#include <iosfwd>
#include <mutex>
#include <string>
#include <string_view>

namespace envpin::diag {

struct Terminal {
  bool tty = false;    // a terminal: progress may redraw one line
  bool color = false;  // and colour is wanted
};

// The terminal on file descriptor `fd`, from isatty, TERM and NO_COLOR.
Terminal terminal_for(int fd);

enum class Color { kRed, kYellow, kGreen };
std::string paint(const Terminal& t, std::string_view text, Color c);

// Diagnostics as diag::format writes them, with "error" and "warning" after "envpin: " painted.
std::string paint_diagnostic(const Terminal& t, const std::string& text);
// A verdict word of the check table (ok green, MISMATCH/STALE red, others as they are).
std::string paint_verdict(const Terminal& t, const std::string& word);

// Progress on stderr. On a TTY: one line, redrawn in place ("\r", erase line) and erased when
// done; a step at once (a phase may be the long part), counters once the work has run for
// `after`, then at most every 100 ms. Elsewhere: steps as plain "envpin: ..." lines (a log shows
// what happened), counters after `after` and then every 5 s. Quiet: nothing. Thread-safe.
class Progress {
 public:
  Progress(std::ostream& err, Terminal t, bool quiet,
           std::chrono::milliseconds after = std::chrono::milliseconds(1000));
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // A new phase ("resolving the apt closure in the pinned image").
  void step(const std::string& text);
  // A counter within the work ("hashing: 812 of 10000 files, 403 MB").
  void update(const std::string& text);
  // Erases the line on a TTY; the destructor calls it.
  void done();

 private:
  using Clock = std::chrono::steady_clock;
  void draw(const std::string& text);

  std::ostream& err_;
  Terminal term_;
  bool quiet_;
  std::chrono::milliseconds after_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
  bool drawn_ = false;
  std::mutex mutex_;
};

}  // namespace envpin::diag

// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <iosfwd>

#include "diag/terminal.hpp"

namespace envpin::cli {

// Exit codes shared by every command (see README, "Exit codes").
enum Exit : int {
  kOk = 0,
  kError = 1,
  kUsage = 2,
  kStale = 3,  // generate --check: artifacts on disk differ from what the manifest gives
  kInterrupted = 130,
};

// Runs the envpin command line. Prints data to `out`, diagnostics to `err`; returns the exit code.
// `out_term` and `err_term` say whether they reach a terminal (main: standard output and error).
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err, diag::Terminal out_term = {},
        diag::Terminal err_term = {});

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

namespace envpin::io {

struct ProcessResult {
  int exit_code = -1;  // -1 when it could not start or was killed by a signal
  std::string out;
  std::string err;
  bool over_limit = false;  // an output passed max_output: the process was killed, out and err cut there
};

// Runs argv (argv[0] looked up on PATH) without a shell and collects stdout and stderr.
// `input` is written to its stdin. With `max_output`, an output longer than that many bytes ends
// it (SIGKILL): over_limit, exit_code -1. Another machine's answer is read bounded.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input = {},
                          std::size_t max_output = 0);

// Runs argv (looked up on PATH) with this process's stdin, stdout and stderr, with `env`
// (NAME=value words) added to the environment, and waits for it. SIGINT, SIGTERM and SIGHUP
// sent to this process are passed on to it. Returns its exit status (128 + the signal when one
// ended it), or -1 when it could not start.
// With `out`, its stdout is collected there instead (stdin and stderr stay this process's: a
// remote build's progress is seen as it comes, its result read).
// With `stdin_file`, its stdin is that file (a build context's tar); with `echo`, what it writes
// to stdout is also copied to this process's stderr as it comes (a push's progress, its digest read).
// With `err_as_data`, its stderr is read here and shown on this process's stderr a line at a time
// through diag::printable, each line at most 4 KiB: another machine's messages, shown as data.
int run_attached(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
                 std::string* out = nullptr, const std::string& stdin_file = {}, bool echo = false,
                 bool err_as_data = false);

// Starts argv (looked up on PATH) in a session of its own (setsid), its stdin /dev/null and its
// stdout and stderr appended to `log` (created mode 0600), and does not wait for it: a process
// that outlives this one (envpin dev's SSH forward). Returns its pid, or -1 when it could not start.
int spawn_detached(const std::vector<std::string>& argv, const std::string& log);

// The container engine to run: the value of the first of `variables` that is set ("none" when
// the user wants none), else docker, else podman when on PATH; empty when there is none.
std::string find_container_engine(std::initializer_list<const char*> variables);

// The first executable `name` in the ':'-separated `path` (default: $PATH), or empty.
std::string find_on_path(const std::string& name);
std::string find_on_path(const std::string& name, const std::string& path);

}  // namespace envpin::io

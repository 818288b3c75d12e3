// SPDX-License-Identifier: Apache-2.0
// The server side of the laptop -> server loop: where a project goes ([user@]host:path), the ssh
// command that reaches it (the real OpenSSH client, ~/.ssh/config honoured, ENVPIN_SSH for
// options), and ssh's and rsync's failures as one line with the fix.
#pragma once

#include <string>
#include <vector>

#include "diag/error.hpp"

namespace envpin::sync {

struct Target {
  std::string destination;  // "user@host" or "host" (an ssh config alias too)
  std::string host;         // "host"
  std::string path;         // "/srv/project", "project" (relative to the remote home), "~/p"; normalised
};

// Parses "[user@]host:path". Names and the path are restricted to characters that no shell,
// ssh or rsync reads specially (letters, digits and ._-+@/~; no leading '-'). The path is kept
// as the server reaches it ('//' and '.' dropped, '..' resolved) and refused when a '..' climbs
// above where it starts, or when it is a home ('~', '~name', '/home/name', the login directory:
// './', 'a/..'), the root or a top-level system directory. Throws diag::Error.
Target parse_target(const std::string& text);

// The ssh command: ENVPIN_SSH's words (default "ssh"), then a connect timeout
// (ENVPIN_SSH_TIMEOUT seconds, default 15) and keep-alives, which options given earlier override.
std::vector<std::string> ssh_words();

// `words` as one string for rsync's -e, each word quoted when it needs to be.
std::string rsync_shell(const std::vector<std::string>& words);

// `s` as one word for a POSIX shell (single quotes).
std::string sh_quote(const std::string& s);

// The target's directory as one word for the server's shell (a leading ~ left to it to expand).
std::string remote_dir(const Target& t);

// The ssh command line that runs the shell command `command` on the server.
std::vector<std::string> remote_sh_argv(const Target& t, const std::string& command);

// The ssh command line that runs envpin (ENVPIN_REMOTE_ENVPIN, default "envpin") with `args` on
// the server, in the target's directory; each argument is one quoted word there.
std::vector<std::string> remote_envpin_argv(const Target& t, const std::vector<std::string>& args);

// What failed, from ssh's or rsync's standard error and exit code, as an error with a fix.
diag::Error remote_error(const std::string& err, int code, const Target& t, const std::string& doing);

}  // namespace envpin::sync

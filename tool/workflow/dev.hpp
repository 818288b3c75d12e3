// SPDX-License-Identifier: Apache-2.0
// `envpin dev`'s work: the project's development container through its generated .envpin/dev.sh
// (which holds the engine's side: image, container, servers, token), after the same pinned check
// `envpin run` makes.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::workflow {

struct DevRequest {
  enum class Action { open, status, stop, url };
  std::string manifest = "envpin.yaml";
  Action action = Action::open;
  bool shell = true;                 // open: a shell in it afterwards (when the terminal is one)
  std::vector<std::string> command;  // open: one command in it instead of a shell
  std::string host;                  // [user@]host:path: the container on that server, through ssh
  bool dry_run = false;              // open: print the engine's and ssh's commands, run nothing that changes
};

// Runs dev.sh for the request with this process's terminal; returns its exit status. Throws
// diag::Error when the manifest has no dev section or the lock or artifacts are not current.
// With a host, dev_remote.
int dev(const DevRequest& r, std::ostream& out, std::ostream& err);

// The request on a server (workflow/dev_remote.cpp): the project synced there by envpin sync's
// rules, envpin dev run there, and the servers' ports forwarded to this machine's 127.0.0.1 by a
// detached ssh that reconnects after a lost connection; the URLs printed to `out` with this
// machine's ports. --stop ends the forward too; --status and --url add the forward's ports.
int dev_remote(const DevRequest& r, std::ostream& out, std::ostream& err);

// One line of `envpin dev --url` as the server's envpin prints it ("NAME http://127.0.0.1:PORT/REST"),
// read as data: none for any other shape, a port outside 1..65535, or a byte in REST that is not
// printable ASCII (the URL is printed here again).
struct DevUrl {
  std::string name;
  int port = 0;
  std::string rest;  // "/?token=..."
};
std::optional<DevUrl> parse_dev_url(std::string_view line);

}  // namespace envpin::workflow

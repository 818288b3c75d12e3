// SPDX-License-Identifier: Apache-2.0
// `envpin sync`'s work: the project to a server with rsync over ssh, leaving out what the build
// context leaves out (one rule set: the generated .dockerignore, the secret-file rules, files with
// credentials), resumable (--partial), checksummed, never deleting there without `remove`; and,
// before `envpin remote ... run`, the job's data checked there.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "scan/send_set.hpp"
#include "sync/remote.hpp"

namespace envpin::workflow {

struct SyncRequest {
  std::string target;  // [user@]host:path
  std::string manifest = "envpin.yaml";
  bool dry_run = false;
  bool remove = false;  // --delete
  bool data = false;    // --data: the jobs' data that the ignore rules leave out, sent too
  // envpin dev --host: what was made or changed there (a notebook, an edit in the container) is
  // the user's work: files only there are no refusal (listed in `deletions`, never deleted) and a
  // file newer there than here is not overwritten (rsync --update).
  bool keep_there = false;
};

// What a sync sent (or, dry, would send) and left out.
struct SyncResult {
  std::string from, destination;
  std::vector<std::string> data_sent;  // "data/ (1.2 MB)": the jobs' data sent with --data
  std::vector<std::string> changes;    // rsync's names of what differs there
  std::vector<std::string> deletions;  // there, not in the project
  std::vector<scan::LeftOut> left_out;
  std::string left;  // "3 (why), 1 (why)", or empty
  // After a real sync: rsync's --stats.
  std::uintmax_t files_sent = 0, files_total = 0, content_bytes = 0, wire_bytes = 0;
};

// Throws diag::Error before anything is sent when the project cannot go (no .dockerignore, a
// secret asked for, files there that only --delete would remove). Warnings (data the rules leave
// out) go to `warnings`.
SyncResult sync_project(const SyncRequest& request, std::ostream& warnings);

// Before `run` starts a job there: every data path the manifest named among `args` needs is there
// and not empty, else diag::Error with the fix (envpin sync --data TARGET).
void check_remote_data(const sync::Target& target, const std::string& shown_target,
                       const std::vector<std::string>& args);

// `envpin remote TARGET -- ARGS`: envpin ARGS on the server, in the synced project, attached to
// this terminal; its exit code. ssh's and the server's failures to start it (127, 255) are a
// diag::Error with the fix.
int run_remote(const std::string& target, const std::vector<std::string>& args);

// The exit status of envpin run over ssh on `target`, or the error it means: 127 (no envpin or no
// directory there), 255 (ssh failed; its message is above), -1 (no ssh here).
int remote_exit(int code, const sync::Target& target);

}  // namespace envpin::workflow

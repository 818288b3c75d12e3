// SPDX-License-Identifier: Apache-2.0
// `envpin sync [user@]host:path`: the project to a server with rsync over ssh, leaving out what
// the build context leaves out (one rule set: the generated .dockerignore, the secret-file rules,
// files with credentials), resumable (--partial), checksummed, never deleting there without
// --delete. `envpin remote [user@]host:path -- ARGS`: envpin run there, in that directory.
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/text.hpp"
#include "scan/send_set.hpp"
#include "workflow/sync.hpp"

namespace envpin::cli {
namespace {

struct SyncOptions {
  std::string target;
  std::string ssh;  // -e: the ssh command, as ENVPIN_SSH
  std::string manifest = "envpin.yaml";
  bool dry_run = false;
  bool remove = false;
  bool data = false;  // --data: the jobs' data that the ignore rules leave out, sent too
};

// -e CMD: the ssh command for this run, as ENVPIN_SSH would give it.
void use_ssh(const std::string& command) {
  if (!command.empty()) ::setenv("ENVPIN_SSH", command.c_str(), 1);
}

std::string with_commas(std::uintmax_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

int run_sync(const SyncOptions& o, Streams& io) {
  use_ssh(o.ssh);
  const workflow::SyncResult r = workflow::sync_project({o.target, o.manifest, o.dry_run, o.remove, o.data}, io.err);
  for (const std::string& d : r.data_sent) io.out << "sending data " << d << "\n";
  if (o.dry_run) {
    for (const std::string& c : r.changes) io.out << "send    " << diag::printable(c) << "\n";
    for (const std::string& d : r.deletions)
      io.out << (o.remove ? "delete  " : "extra   ") << diag::printable(d) << "\n";
    for (const scan::LeftOut& l : r.left_out)
      io.out << "skip    " << diag::printable(l.path) << (l.directory ? "/" : "") << "  (" << l.why << ")\n";
    io.out << "dry run: " << r.changes.size() << " to send to " << r.destination << ", " << r.deletions.size()
           << " there that the project does not have" << (o.remove ? " (to delete)" : "")
           << "; left out: " << (r.left.empty() ? "nothing" : r.left) << "\n";
    return kOk;
  }
  io.out << "synced " << r.from << " to " << r.destination << ": " << r.files_sent << " file(s) sent of "
         << r.files_total << ", " << with_commas(r.content_bytes) << " bytes of content (" << with_commas(r.wire_bytes)
         << " over the wire)"
         << (o.remove && !r.deletions.empty() ? ", " + std::to_string(r.deletions.size()) + " deleted" : "") << "\n";
  io.out << "left out: " << (r.left.empty() ? "nothing" : r.left) << " (envpin sync --dry-run lists them)\n";
  return kOk;
}

struct RemoteOptions {
  std::string target;
  std::string ssh;
  std::vector<std::string> args;
};

int run_remote(const RemoteOptions& o, Streams& io) {
  use_ssh(o.ssh);
  io.out.flush();
  return workflow::run_remote(o.target, o.args);
}

}  // namespace

Command sync_command() {
  return {"sync", "copy the project to a server with rsync over ssh, secrets and excluded files left out",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<SyncOptions>();
            app.add_option("target", o->target, "[user@]host:path on the server")->required();
            manifest_option(app, o->manifest);
            app.add_flag("-n,--dry-run", o->dry_run, "list what would be sent, left out and deleted; send nothing");
            app.add_flag("--data", o->data,
                         "send the jobs' data (jobs.data, paths: in the project) that .gitignore leaves out; "
                         "secret files still stay");
            app.add_flag("--delete", o->remove,
                         "delete files there that the project does not have (excluded ones stay)");
            ssh_option(app, o->ssh);
            return [o](Streams& io) { return run_sync(*o, io); };
          }};
}

Command remote_command() {
  return {"remote", "run an envpin command on a server, in the synced project directory, over ssh",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<RemoteOptions>();
            app.add_option("target", o->target, "[user@]host:path of the synced project")->required();
            ssh_option(app, o->ssh);
            app.add_option("args", o->args, "the envpin command and its arguments, after --");
            return [o](Streams& io) { return run_remote(*o, io); };
          }};
}

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
// `envpin sync [user@]host:path`: the project to a server with rsync over ssh, leaving out what
// the build context leaves out (one rule set: the generated .dockerignore, the secret-file rules,
// files with credentials), resumable (--partial), checksummed, never deleting there without
// --delete. `envpin remote [user@]host:path -- ARGS`: envpin run there, in that directory.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/text.hpp"
#include "io/process.hpp"
#include "scan/send_set.hpp"
#include "sync/remote.hpp"
#include "workflow/sync.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;
using diag::Error;

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
  const sync::Target target = sync::parse_target(o.target);
  if (o.args.empty())
    throw Error("no envpin command to run on " + target.host, std::nullopt,
                "e.g. envpin remote " + o.target + " -- check");
  if (o.args.front() == "run") workflow::check_remote_data(target, o.target, o.args);
  io.out.flush();
  const int code = io::run_attached(sync::remote_envpin_argv(target, o.args));
  if (code == 127)
    throw Error(
        "envpin is not installed on " + target.host + " (or the directory " + diag::quote(target.path) + " is missing)",
        std::nullopt,
        "install it there (the .deb, or a build of this version), set ENVPIN_REMOTE_ENVPIN to its path, or run the "
        "synced .envpin/run.sh there directly (it needs no envpin)");
  if (code == 255)
    throw Error("ssh to " + target.destination + " failed (exit 255); ssh's message is above", std::nullopt,
                "check the connection with 'ssh " + target.destination + " true'");
  if (code < 0)
    throw Error("cannot start ssh", std::nullopt, "install the OpenSSH client (apt-get install openssh-client)");
  return code;
}

}  // namespace

Command sync_command() {
  return {"sync", "copy the project to a server with rsync over ssh, secrets and excluded files left out",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<SyncOptions>();
            app.add_option("target", o->target, "[user@]host:path on the server")->required();
            app.add_option("-f,--manifest", o->manifest, "the manifest")->capture_default_str();
            app.add_flag("-n,--dry-run", o->dry_run, "list what would be sent, left out and deleted; send nothing");
            app.add_flag("--data", o->data,
                         "send the jobs' data (jobs.data, paths: in the project) that .gitignore leaves out; "
                         "secret files still stay");
            app.add_flag("--delete", o->remove,
                         "delete files there that the project does not have (excluded ones stay)");
            app.add_option("-e,--ssh", o->ssh, "the ssh command and its options (default: $ENVPIN_SSH, else ssh)");
            return [o](Streams& io) { return run_sync(*o, io); };
          }};
}

Command remote_command() {
  return {"remote", "run an envpin command on a server, in the synced project directory, over ssh",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<RemoteOptions>();
            app.add_option("target", o->target, "[user@]host:path of the synced project")->required();
            app.add_option("-e,--ssh", o->ssh, "the ssh command and its options (default: $ENVPIN_SSH, else ssh)");
            app.add_option("args", o->args, "the envpin command and its arguments, after --");
            return [o](Streams& io) { return run_remote(*o, io); };
          }};
}

}  // namespace envpin::cli

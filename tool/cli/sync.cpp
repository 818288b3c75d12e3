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
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "manifest/data.hpp"
#include "manifest/load.hpp"
#include "scan/ignore.hpp"
#include "scan/send_set.hpp"
#include "sync/data.hpp"
#include "sync/remote.hpp"

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

// A file in the temporary directory, removed when this goes out of scope.
struct TempFile {
  std::string path;
  TempFile() {
    const char* tmp = std::getenv("TMPDIR");
    path = std::string(tmp && *tmp ? tmp : "/tmp") + "/envpin-sync-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0)
      throw Error("cannot create a temporary file in " + fs::path(path).parent_path().string(), std::nullopt,
                  "set TMPDIR");
    ::close(fd);
  }
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

std::string with_commas(std::uintmax_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

// "Number of regular files transferred: 1,234" -> 1234
std::uintmax_t stat_of(const std::string& out, const std::string& label) {
  const auto at = out.find(label + ": ");
  if (at == std::string::npos) return 0;
  std::uintmax_t n = 0;
  for (std::size_t i = at + label.size() + 2;
       i < out.size() && (std::isdigit(static_cast<unsigned char>(out[i])) || out[i] == ','); ++i)
    if (out[i] != ',') n = n * 10 + static_cast<std::uintmax_t>(out[i] - '0');
  return n;
}

// -e CMD: the ssh command for this run, as ENVPIN_SSH would give it.
void use_ssh(const std::string& command) {
  if (!command.empty()) ::setenv("ENVPIN_SSH", command.c_str(), 1);
}

// "Number of files: 18 (reg: 13, dir: 5)" -> 13: the regular files in the project's copy.
std::uintmax_t files_in(const std::string& out) {
  const auto at = out.find("Number of files: ");
  if (at == std::string::npos) return 0;
  const std::string line = out.substr(at, out.find('\n', at) - at);
  const auto reg = line.find("reg: ");
  return reg == std::string::npos ? stat_of(line, "Number of files") : stat_of(line.substr(reg), "reg");
}

int run_sync(const SyncOptions& o, Streams& io) {
  use_ssh(o.ssh);
  const sync::Target target = sync::parse_target(o.target);
  const manifest::Manifest m = manifest::load(o.manifest);
  const fs::path root = m.project_dir;
  const fs::path dockerignore = root / m.outputs.dockerignore.value;
  if (!fs::is_regular_file(dockerignore))
    throw Error("there is no " + m.outputs.dockerignore.value + ": sync leaves out what it lists", std::nullopt,
                "run 'envpin generate -f " + o.manifest + "' first");
  // A secret file never goes to a server, whatever the build context may carry.
  if (!m.context_allow_secrets.empty())
    throw Error("context.allow_secrets names " + diag::quote(m.context_allow_secrets.front().value) +
                    ": envpin sync never sends a secret file",
                m.context_allow_secrets.front().where,
                "copy it to the server yourself (scp), or remove it from context.allow_secrets");
  const scan::IgnoreRules ignored = scan::IgnoreRules::from_file(dockerignore);
  // The jobs' data that the rules leave out: named (the job on the server would not find it),
  // or with --data taken back into what is sent, under the same secret rules.
  const std::vector<sync::LeftData> data = sync::data_left_out(root, manifest::data_paths(m), ignored);
  for (const sync::LeftData& d : data)
    if (o.data)
      io.out << "sending data " << d.path << (d.directory ? "/" : "") << " (" << diag::human_bytes(d.bytes) << ")\n";
    else
      io.err << sync::data_warning(d, o.target);
  const scan::IgnoreRules rules = o.data ? sync::with_data(ignored, data) : ignored;
  scan::SendRules send;
  send.rules = &rules;
  send.carrier = "envpin sync would send to " + target.host;
  send.hint = "remove it (and rotate it), or add the file to context.exclude in " + m.file;
  const scan::SendSet set = scan::send_set(root, send, m.project_dir.generic_string());

  TempFile excludes;
  std::string list;
  for (const std::string& p : scan::rsync_excludes(set)) list += p + '\0';
  io::write_atomic(excludes.path, list, false);

  const std::vector<std::string> ssh = sync::ssh_words();
  std::vector<std::string> argv = {"rsync",
                                   "-a",
                                   "--checksum",
                                   "--partial",
                                   "--mkpath",
                                   "--from0",
                                   "--exclude-from=" + excludes.path,
                                   "-e",
                                   sync::rsync_shell(ssh),
                                   "--itemize-changes"};
  // Absolute, so that a ':' in a directory name is never read by rsync as a host.
  const std::string source = fs::absolute(root.empty() ? fs::path(".") : root).lexically_normal().generic_string();
  const std::string from = source.ends_with("/") ? source : source + "/";
  const std::string destination = target.destination + ":" + target.path + "/";
  if (io::find_on_path("rsync").empty())
    throw Error("rsync is not installed here", std::nullopt, "install it (apt-get install rsync)");

  // What a sync would do, deletions included: a file there that the project does not have is
  // removed only with --delete (excluded files there, such as data, are never touched).
  std::vector<std::string> preview = argv;
  for (const char* a : {"--dry-run", "--delete"}) preview.emplace_back(a);
  preview.push_back(from);
  preview.push_back(destination);
  const io::ProcessResult dry = io::run_process(preview);
  if (dry.exit_code != 0) throw sync::remote_error(dry.err, dry.exit_code, target, "rsync to");
  std::vector<std::string> changes, deletions;
  std::istringstream lines(dry.out);
  for (std::string l; std::getline(lines, l);) {
    // --itemize-changes: "YXcstpoguax path"; '.' in the first column is an unchanged item.
    if (l.starts_with("*deleting ")) {
      if (const auto name = l.find_first_not_of(' ', 10); name != std::string::npos)
        deletions.push_back(l.substr(name));
    } else if (l.size() > 12 && l[0] != '.' && l[11] == ' ' && l.substr(12) != "./")
      changes.push_back(l.substr(12));
  }
  std::map<std::string, std::size_t> why;
  for (const scan::LeftOut& l : set.left_out) ++why[l.why];
  std::string left;
  for (const auto& [reason, count] : why)
    left += (left.empty() ? "" : ", ") + std::to_string(count) + " (" + reason + ")";

  if (o.dry_run) {
    for (const std::string& c : changes) io.out << "send    " << diag::printable(c) << "\n";
    for (const std::string& d : deletions) io.out << (o.remove ? "delete  " : "extra   ") << diag::printable(d) << "\n";
    for (const scan::LeftOut& l : set.left_out)
      io.out << "skip    " << diag::printable(l.path) << (l.directory ? "/" : "") << "  (" << l.why << ")\n";
    io.out << "dry run: " << changes.size() << " to send to " << destination << ", " << deletions.size()
           << " there that the project "
           << "does not have" << (o.remove ? " (to delete)" : "") << "; left out: " << (left.empty() ? "nothing" : left)
           << "\n";
    return kOk;
  }
  if (!deletions.empty() && !o.remove) {
    std::string names;
    for (std::size_t i = 0; i < deletions.size() && i < 5; ++i) names += (i ? ", " : "") + diag::quote(deletions[i]);
    if (deletions.size() > 5) names += " and " + std::to_string(deletions.size() - 5) + " more";
    throw Error(destination + " has " + std::to_string(deletions.size()) + " file" +
                    (deletions.size() == 1 ? "" : "s") + " this project does not: " + names,
                std::nullopt, "pass --delete to remove them there, or sync into another directory");
  }
  if (o.remove) argv.emplace_back("--delete");
  argv.emplace_back("--stats");
  argv.push_back(from);
  argv.push_back(destination);
  const io::ProcessResult r = io::run_process(argv);
  if (r.exit_code != 0) throw sync::remote_error(r.err, r.exit_code, target, "rsync to");
  io.out << "synced " << from << " to " << destination << ": " << stat_of(r.out, "Number of regular files transferred")
         << " file(s) sent of " << files_in(r.out) << ", " << with_commas(stat_of(r.out, "Total transferred file size"))
         << " bytes of content (" << with_commas(stat_of(r.out, "Total bytes sent")) << " over the wire)"
         << (o.remove && !deletions.empty() ? ", " + std::to_string(deletions.size()) + " deleted" : "") << "\n";
  io.out << "left out: " << (left.empty() ? "nothing" : left) << " (envpin sync --dry-run lists them)\n";
  return kOk;
}

struct RemoteOptions {
  std::string target;
  std::string ssh;
  std::vector<std::string> args;
};

// The manifest `envpin run` there reads (-f/--manifest among its arguments), as this copy of
// the project has it; none when it cannot be read here (the server's envpin then says why).
std::optional<manifest::Manifest> run_manifest(const std::vector<std::string>& args) {
  std::string file = "envpin.yaml";
  for (std::size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    if ((args[i] == "-f" || args[i] == "--manifest") && i + 1 < args.size()) file = args[i + 1];
    if (args[i].starts_with("--manifest=")) file = args[i].substr(11);
  }
  try {
    return manifest::load(file);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Before `run` starts a job there: every data path it needs is there and not empty.
void check_remote_data(const sync::Target& target, const std::string& shown_target,
                       const std::vector<std::string>& args) {
  const auto m = run_manifest(args);
  if (!m) return;
  std::vector<std::string> paths;
  for (const auto& d : manifest::data_paths(*m)) paths.push_back(d.value);
  if (paths.empty()) return;
  const std::string script =
      "cd " + sync::remote_dir(target) + " 2>/dev/null || exit 0; " + sync::data_check_script(paths);
  const io::ProcessResult r = io::run_process(sync::remote_sh_argv(target, script));
  if (r.exit_code != 0) throw sync::remote_error(r.err, r.exit_code, target, "checking the data on");
  const auto result = sync::data_check_result(r.out, paths);
  if (result.empty()) return;
  const auto& [path, what] = result.front();
  const bool directory = fs::is_directory(m->project_dir / path) || !fs::exists(m->project_dir / path);
  throw Error(std::string(directory ? "data directory " : "data file ") + path + " is " + what + " on " + target.host +
                  (result.size() > 1 ? " (and " + std::to_string(result.size() - 1) + " more of the job's data)" : ""),
              std::nullopt, "envpin sync --data " + shown_target);
}

int run_remote(const RemoteOptions& o, Streams& io) {
  use_ssh(o.ssh);
  const sync::Target target = sync::parse_target(o.target);
  if (o.args.empty())
    throw Error("no envpin command to run on " + target.host, std::nullopt,
                "e.g. envpin remote " + o.target + " -- check");
  if (o.args.front() == "run") check_remote_data(target, o.target, o.args);
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

// SPDX-License-Identifier: Apache-2.0
#include "workflow/sync.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "manifest/data.hpp"
#include "manifest/load.hpp"
#include "scan/ignore.hpp"
#include "sync/data.hpp"

namespace envpin::workflow {
namespace {

namespace fs = std::filesystem;
using diag::Error;

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

// "Number of files: 18 (reg: 13, dir: 5)" -> 13: the regular files in the project's copy.
std::uintmax_t files_in(const std::string& out) {
  const auto at = out.find("Number of files: ");
  if (at == std::string::npos) return 0;
  const std::string line = out.substr(at, out.find('\n', at) - at);
  const auto reg = line.find("reg: ");
  return reg == std::string::npos ? stat_of(line, "Number of files") : stat_of(line.substr(reg), "reg");
}

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

}  // namespace

SyncResult sync_project(const SyncRequest& o, std::ostream& warnings) {
  SyncResult out;
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
      out.data_sent.push_back(d.path + (d.directory ? "/" : "") + " (" + diag::human_bytes(d.bytes) + ")");
    else
      warnings << sync::data_warning(d, o.target);
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
  std::vector<std::string>& changes = out.changes;
  std::vector<std::string>& deletions = out.deletions;
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
  for (const auto& [reason, count] : why)
    out.left += (out.left.empty() ? "" : ", ") + std::to_string(count) + " (" + reason + ")";
  out.left_out = set.left_out;
  out.from = from;
  out.destination = destination;

  if (o.dry_run) return out;
  if (!deletions.empty() && !o.remove && !o.keep_there) {
    std::string names;
    for (std::size_t i = 0; i < deletions.size() && i < 5; ++i) names += (i ? ", " : "") + diag::quote(deletions[i]);
    if (deletions.size() > 5) names += " and " + std::to_string(deletions.size() - 5) + " more";
    throw Error(destination + " has " + std::to_string(deletions.size()) + " file" +
                    (deletions.size() == 1 ? "" : "s") + " this project does not: " + names,
                std::nullopt, "pass --delete to remove them there, or sync into another directory");
  }
  if (o.remove) argv.emplace_back("--delete");
  if (o.keep_there) argv.emplace_back("--update");
  argv.emplace_back("--stats");
  argv.push_back(from);
  argv.push_back(destination);
  const io::ProcessResult r = io::run_process(argv);
  if (r.exit_code != 0) throw sync::remote_error(r.err, r.exit_code, target, "rsync to");
  out.files_sent = stat_of(r.out, "Number of regular files transferred");
  out.files_total = files_in(r.out);
  out.content_bytes = stat_of(r.out, "Total transferred file size");
  out.wire_bytes = stat_of(r.out, "Total bytes sent");
  return out;
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

int run_remote(const std::string& target_text, const std::vector<std::string>& args) {
  const sync::Target target = sync::parse_target(target_text);
  if (args.empty())
    throw Error("no envpin command to run on " + target.host, std::nullopt,
                "e.g. envpin remote " + target_text + " -- check");
  if (args.front() == "run") check_remote_data(target, target_text, args);
  return remote_exit(io::run_attached(sync::remote_envpin_argv(target, args)), target);
}

int remote_exit(int code, const sync::Target& target) {
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

}  // namespace envpin::workflow

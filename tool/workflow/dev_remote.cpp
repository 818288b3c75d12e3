// SPDX-License-Identifier: Apache-2.0
// `envpin dev --host [user@]host:path`: the development container on a server. The project goes
// there by envpin sync's rules; envpin there starts (or finds) the container; the servers' ports
// come to this machine through one SSH local forward, kept by a small detached keeper that
// reconnects when ssh exits on a lost connection (255) and is replaced by the next `envpin dev
// --host`. Nothing here listens outside 127.0.0.1, and the token travels only on ssh's stdout:
// never in an argument, the keeper's log or its state.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "jobs/project.hpp"
#include "manifest/load.hpp"
#include "pin/sha256.hpp"
#include "render/quote.hpp"
#include "sync/remote.hpp"
#include "workflow/dev.hpp"
#include "workflow/sync.hpp"

namespace envpin::workflow {
namespace {

namespace fs = std::filesystem;
using diag::Error;

// The keeper: ssh again after a lost connection (exit 255) once the first connection was up ($1
// exists); any other end (killed, refused forward, auth) is final.
constexpr const char* kKeeper =
    "up=$1; shift; while :; do \"$@\"; rc=$?; [ \"$rc\" = 255 ] && [ -e \"$up\" ] || exit \"$rc\"; "
    "echo \"envpin-dev-forward: ssh exited 255 (the connection was lost): again in 3 s\"; sleep 3; done";
constexpr const char* kKeeperName = "envpin-dev-forward";

struct Forward {
  std::string name;
  int remote = 0, local = 0;
  std::string rest;  // the URL after host:port ("/?token=..." for Jupyter); never written to disk
};

struct Keeper {
  int pid = 0;
  std::string start;
  std::vector<Forward> ports;  // without `rest`
};

// One directory per server project: ${XDG_STATE_HOME:-~/.local/state}/envpin/forward/<hash>.
fs::path state_dir(const sync::Target& t) {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path root = xdg && *xdg ? fs::path(xdg) : fs::path(home && *home ? home : "/tmp") / ".local/state";
  return root / "envpin/forward" / pin::sha256_hex(t.destination + ":" + t.path).substr(0, 16);
}

std::optional<Keeper> read_keeper(const fs::path& dir) {
  std::ifstream in(dir / "state");
  Keeper k;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "pid") words >> k.pid;
    if (key == "start") words >> k.start;
    if (Forward f; key == "port" && words >> f.name >> f.remote >> f.local) k.ports.push_back(f);
  }
  if (k.pid <= 0 || k.start.empty()) return std::nullopt;
  return k;
}

// The recorded keeper still runs: the same process (start time) running the keeper's script.
bool keeper_alive(const Keeper& k) {
  if (jobs::process_start(k.pid) != k.start) return false;
  const auto args = jobs::process_args(k.pid, 4);
  return args.size() == 4 && args[3] == kKeeperName;
}

// A process's state letter from /proc/PID/stat ('Z' for a zombie), or 0 when there is none.
char process_state(const fs::path& stat_file) {
  std::ifstream in(stat_file);
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

// Whether a process other than `pgid` itself runs in process group `pgid`. With the group's
// leader gone (or a zombie its parent has not reaped yet), such a process can only be the
// leader's own (the kernel hands out no pid that is still a group's id): the forward's ssh left
// behind by a keeper killed alone.
bool group_left(int pgid) {
  std::error_code ec;
  const char leader = process_state(fs::path("/proc") / std::to_string(pgid) / "stat");
  if (leader != 0 && leader != 'Z') return false;  // the id is a live process's
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    std::string state;
    long ppid = 0, pgrp = 0;
    // A member that still runs: not the leader, not a zombie.
    if (fields >> state >> ppid >> pgrp && pgrp == pgid && name != std::to_string(pgid) && state != "Z") return true;
  }
  return false;
}

void stop_keeper(const fs::path& dir) {
  const auto k = read_keeper(dir);
  const auto group_runs = [&] { return keeper_alive(*k) || group_left(k->pid); };
  if (k && group_runs()) {
    ::kill(-k->pid, SIGTERM);  // its session's group: the keeper and its ssh, or the ssh it left
    for (int i = 0; i < 50 && group_runs(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (group_runs()) ::kill(-k->pid, SIGKILL);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// Whether 127.0.0.1:port can be bound (`bind`) or answers (`connect`).
template <typename Call>
bool on_port(int port, Call call, bool reuse) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int one = 1;
  if (reuse) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a = loopback(port);
  const bool ok = call(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}
bool port_free(int port) { return on_port(port, ::bind, true); }
bool port_answers(int port) { return on_port(port, ::connect, false); }

// Whether the forward on 127.0.0.1:port carries a request to the server and back within a second:
// a forward whose connection died (the laptop slept) still accepts here but never answers.
bool forward_answers(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a = loopback(port);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  constexpr std::string_view request = "HEAD / HTTP/1.0\r\n\r\n";
  ok = ok && ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
  pollfd p{fd, POLLIN, 0};
  char byte = 0;
  ok = ok && ::poll(&p, 1, 1000) == 1 && ::recv(fd, &byte, 1, 0) == 1;
  ::close(fd);
  return ok;
}

// What envpin reads of a server's answer (its URLs, its status, its plan): more is an error.
constexpr std::size_t kAnswerMax = std::size_t{1} << 20;

// A server's answer, bounded (kAnswerMax): a server that says more is not read further.
io::ProcessResult ask(const sync::Target& t, const std::vector<std::string>& args) {
  io::ProcessResult r = io::run_process(sync::remote_envpin_argv(t, args), {}, kAnswerMax);
  if (r.over_limit)
    throw Error("envpin on " + t.host + " answered more than 1 MiB to 'envpin " + args.front() + " " +
                    (args.size() > 1 ? args[1] : "") + "': not read further",
                std::nullopt, "run it there by hand to see why: ssh " + t.destination + " envpin dev --status");
  return r;
}

// The servers' URLs from what envpin dev prints there on stdout: "NAME http://127.0.0.1:PORT/REST",
// one for each of the manifest's servers and no other: the server's answer is data, and only the
// servers this manifest names are forwarded.
std::vector<Forward> urls_of(const std::string& text, const sync::Target& t, const manifest::Manifest& m) {
  std::vector<Forward> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto u = parse_dev_url(line);
    if (!u)
      throw Error("envpin on " + t.host + " printed a URL line envpin does not read: " + diag::quote(line),
                  std::nullopt, "use the same envpin version on both machines");
    const bool named = std::any_of(m.dev->servers.begin(), m.dev->servers.end(),
                                   [&](const manifest::DevServer& d) { return d.name.value == u->name; });
    const bool again = std::any_of(out.begin(), out.end(), [&](const Forward& f) { return f.name == u->name; });
    if (!named || again)
      throw Error("envpin on " + t.host + " named " + (again ? "twice " : "") + "a server " + diag::quote(u->name) +
                      (named ? "" : " that " + m.file + " does not have") + ": nothing is forwarded",
                  std::nullopt,
                  "use the same envpin version and manifest on both machines (envpin dev --host syncs it)");
    out.push_back({u->name, u->port, 0, u->rest});
  }
  return out;
}

// The servers' URLs as envpin dev --url prints them there.
std::vector<Forward> remote_urls(const sync::Target& t, const manifest::Manifest& m, std::ostream& err) {
  const io::ProcessResult r = ask(t, {"dev", "--url"});
  if (r.exit_code != 0) {
    if (r.exit_code == 255) throw sync::remote_error(r.err, 255, t, "asking");
    err << diag::printable(r.err) << "\n";
    remote_exit(r.exit_code, t);
    throw Error("envpin dev --url failed on " + t.host + " (exit " + std::to_string(r.exit_code) + ")", std::nullopt,
                "see its message above; envpin dev --host " + t.destination + ":" + t.path + " --status");
  }
  return urls_of(r.out, t, m);
}

// A local port for each server: the one the previous forward had (its URL stays the same; a
// forward killed a moment ago may hold it for a moment more: waited for up to 3 s), else its port
// on the server when free here, else the next free one.
void choose_local_ports(std::vector<Forward>& ports, const std::optional<Keeper>& before, std::ostream& err) {
  std::vector<int> taken;
  const auto usable = [&](int p) { return std::find(taken.begin(), taken.end(), p) == taken.end() && port_free(p); };
  for (Forward& f : ports) {
    int p = 0;
    for (const Forward& old : before ? before->ports : std::vector<Forward>{})
      if (old.name == f.name && old.remote == f.remote) {
        for (int i = 0; i < 30 && !usable(old.local); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (usable(old.local)) p = old.local;
      }
    if (p == 0) {
      p = f.remote;
      while (p < 65535 && !usable(p)) ++p;
      if (p >= 65535)
        throw Error("no free port on 127.0.0.1 from " + std::to_string(f.remote), std::nullopt,
                    "stop what holds them, then envpin dev --host again");
      if (p != f.remote)
        err << "envpin dev: port " << f.remote << " is taken on this machine: server " << f.name
            << " is forwarded from " << p << "\n";
    }
    f.local = p;
    taken.push_back(p);
  }
}

// The keeper started and its forward up (every local port answers), or an error with ssh's words.
// The forward's ssh: every server's port here to its port on the server, loopback at both ends.
std::vector<std::string> forward_argv(const sync::Target& t, std::vector<std::string> ssh,
                                      const std::vector<Forward>& ports) {
  ssh.insert(ssh.end(), {"-N", "-o", "ExitOnForwardFailure=yes", "-o", "BatchMode=yes"});
  for (const Forward& f : ports) {
    ssh.push_back("-L");
    ssh.push_back("127.0.0.1:" + std::to_string(f.local) + ":127.0.0.1:" + std::to_string(f.remote));
  }
  ssh.push_back(t.destination);
  return ssh;
}

Keeper start_keeper(const sync::Target& t, const fs::path& dir, std::vector<Forward> ports,
                    const std::vector<std::string>& ssh) {
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  std::vector<std::string> argv = {"sh", "-c", kKeeper, kKeeperName, (dir / "up").string()};
  for (const std::string& w : forward_argv(t, ssh, ports)) argv.push_back(w);
  const int pid = io::spawn_detached(argv, (dir / "forward.log").string());
  if (pid < 0) throw Error("cannot start the SSH forward (sh -c ssh ...)", std::nullopt, "is 'sh' on PATH?");
  Keeper k{pid, jobs::process_start(pid), ports};
  const auto all_up = [&] {
    return std::all_of(ports.begin(), ports.end(), [](const Forward& f) { return port_answers(f.local); });
  };
  // The connection's own timeout bounds the wait: ssh gives up first, and the keeper with it.
  int status = 0;
  bool ended = false;
  for (int i = 0; i < 600 && !all_up(); ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ended = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (ended || !all_up()) {
    if (!ended) ::kill(-pid, SIGKILL);
    std::ifstream in(dir / "forward.log");
    std::string said, line;
    while (std::getline(in, line))
      if (!line.empty()) said = line;
    std::error_code ec;
    fs::remove_all(dir, ec);
    throw Error("the SSH forward to " + t.destination + " did not come up" +
                    (said.empty() ? std::string() : ": " + diag::printable(said)),
                std::nullopt,
                "check 'ssh -N -L ... " + t.destination + "' by hand; ports: envpin dev --host ... --status");
  }
  std::ofstream(dir / "up").close();
  std::string state = "pid " + std::to_string(pid) + "\nstart " + k.start + "\n";
  for (const Forward& f : ports)
    state += "port " + f.name + " " + std::to_string(f.remote) + " " + std::to_string(f.local) + "\n";
  io::write_atomic(dir / "state", state, false);
  return k;
}

void print_urls(const std::vector<Forward>& ports, const Keeper& k, std::ostream& out) {
  for (const Forward& f : ports)
    for (const Forward& kept : k.ports)
      if (kept.name == f.name && kept.remote == f.remote)
        out << f.name << " http://127.0.0.1:" << kept.local << f.rest << "\n";
}

// One ssh connection for the commands of one `envpin dev --host` (OpenSSH's ControlMaster, its
// socket in the forward's private state directory): the first ssh or rsync call opens it, later
// ones go through it (ENVPIN_SSH carries the options while this object lives), and it is closed at
// the end. Were envpin killed first, OpenSSH ends it 10 s after its last use (ControlPersist); the
// master detaches from the caller's pipes itself. Where the socket's path is too long or holds a
// space ENVPIN_SSH cannot carry, each call connects on its own, as before.
class SshMaster {
 public:
  SshMaster(const sync::Target& t, const fs::path& dir) : destination_(t.destination) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    socket_ = (dir / "cm").string();
    if (ec || socket_.size() > 100 || socket_.find_first_of(" \t\n") != std::string::npos) return;
    const char* was = std::getenv("ENVPIN_SSH");
    previous_ = was ? std::optional<std::string>(was) : std::nullopt;
    const std::string words = (was && *was ? std::string(was) : std::string("ssh")) + " -o ControlPath=" + socket_ +
                              " -o ControlMaster=auto -o ControlPersist=10";
    ::setenv("ENVPIN_SSH", words.c_str(), 1);
    open_ = true;
  }
  ~SshMaster() {
    if (!open_) return;
    std::vector<std::string> argv = sync::ssh_words();
    argv.insert(argv.end(), {"-O", "exit", destination_});
    if (previous_)
      ::setenv("ENVPIN_SSH", previous_->c_str(), 1);
    else
      ::unsetenv("ENVPIN_SSH");
    std::error_code ec;
    if (fs::exists(socket_, ec)) io::run_process(argv);
  }
  SshMaster(const SshMaster&) = delete;
  SshMaster& operator=(const SshMaster&) = delete;

 private:
  std::string destination_, socket_;
  std::optional<std::string> previous_;
  bool open_ = false;
};

// The IDE's way into the container `container` on the server: the server's docker over ssh
// (docker's own ssh:// transport, through the same ~/.ssh/config).
std::string ide_way_in(const sync::Target& t, const std::string& container) {
  return "DOCKER_HOST=ssh://" + t.destination + " devcontainer exec --container-id " + container +
         " bash (VS Code: Dev Containers: Attach to Running Container, with docker.host ssh://" + t.destination + ")";
}

// The container's name from `envpin dev --status` there (a name of [A-Za-z0-9_.-] only), or "".
std::string remote_container(const sync::Target& t) {
  const io::ProcessResult st = ask(t, {"dev", "--status"});
  std::istringstream lines(st.out);
  for (std::string line; st.exit_code == 0 && std::getline(lines, line);)
    if (line.starts_with("container ") && line.size() > 10 &&
        line.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", 10) ==
            std::string::npos)
      return line.substr(10);
  return "";
}

// --dry-run with a host: the sync as rsync's own --dry-run reports it (read-only there), then each
// ssh command printed as it would run (the token travels on none of them: it stays in the
// server's state directory and reaches this machine on ssh's stdout only), and the server's
// envpin dev --dry-run for its engine's commands when the project is there already.
int dry_run(const DevRequest& r, const sync::Target& t, const manifest::Manifest& m, std::ostream& out,
            std::ostream& err) {
  const auto line = [&](const std::vector<std::string>& argv) {
    std::string s;
    for (const std::string& w : argv) s += (s.empty() ? "" : " ") + render::sh_word(w);
    out << s << "\n";
  };
  const SyncResult s = sync_project({r.host, r.manifest, true, false, false, true}, err);
  err << "envpin dev: the sync would change " << s.changes.size() << " item(s) at " << s.destination
      << " (rsync --dry-run; envpin sync --dry-run " << r.host << " lists them)\n";
  if (!r.command.empty()) {
    std::vector<std::string> args = {"dev", "--"};
    args.insert(args.end(), r.command.begin(), r.command.end());
    line(sync::remote_envpin_argv(t, args));
    return 0;
  }
  std::vector<std::string> up = sync::remote_envpin_argv(t, {"dev", "--no-shell"});
  line(up);
  std::vector<Forward> ports;
  for (const manifest::DevServer& d : m.dev->servers) ports.push_back({d.name.value, d.port.value, d.port.value, {}});
  line(forward_argv(t, sync::ssh_words(), ports));
  err << "envpin dev: a detached keeper runs the forward and starts it again after a lost connection; its ports are "
         "the server's as it chooses them, each on the same port here or the next free one\n";
  // The server's own plan: its engine's commands (read-only there).
  const io::ProcessResult plan = ask(t, {"dev", "--dry-run"});
  if (plan.exit_code == 0) {
    out << diag::printable(plan.out);
    if (!plan.out.empty() && plan.out.back() != '\n') out << "\n";
  } else {
    err << "envpin dev: the server's envpin dev --dry-run did not answer (the project is not there yet, or "
           "not generated): its engine's commands are decided there after the sync\n";
  }
  return 0;
}

}  // namespace

std::optional<DevUrl> parse_dev_url(std::string_view line) {
  constexpr std::string_view prefix = "http://127.0.0.1:";
  const auto space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  DevUrl u{std::string(line.substr(0, space)), 0, {}};
  const std::string_view url = line.substr(space + 1);
  const auto slash = url.find('/', prefix.size());
  if (!url.starts_with(prefix) || slash == std::string_view::npos) return std::nullopt;
  const std::string_view port = url.substr(prefix.size(), slash - prefix.size());
  const auto rest_ok = [](char c) { return c > ' ' && c < 0x7f; };  // printable ASCII, no space
  if (u.name.empty() ||
      u.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_.-") != std::string::npos ||
      port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
      !std::all_of(url.begin() + static_cast<std::ptrdiff_t>(slash), url.end(), rest_ok))
    return std::nullopt;
  u.port = std::stoi(std::string(port));
  if (u.port < 1 || u.port > 65535) return std::nullopt;
  u.rest = std::string(url.substr(slash));
  return u;
}

int dev_remote(const DevRequest& r, std::ostream& out, std::ostream& err) {
  const sync::Target t = sync::parse_target(r.host);
  const manifest::Manifest m = manifest::load(r.manifest);
  if (!m.dev)
    throw Error(m.file + " has no dev section", diag::Location{m.file, 0, 0},
                "add one, e.g. 'dev: {servers: [{name: notebook, kind: jupyter}]}', then run 'envpin generate'");
  const fs::path dir = state_dir(t);
  // Its messages shown as data, a line at a time; a command's (-- CMD) are the user's own.
  const auto there = [&](std::vector<std::string> args) {
    const bool data = args.front() != "--";
    args.insert(args.begin(), "dev");
    return remote_exit(io::run_attached(sync::remote_envpin_argv(t, args), {}, nullptr, {}, false, data), t);
  };
  switch (r.action) {
    case DevRequest::Action::stop:
      stop_keeper(dir);  // first: this machine's part ends even when the server cannot be reached
      return there({"--stop"});
    case DevRequest::Action::status: {
      const io::ProcessResult st = ask(t, {"dev", "--status"});
      if (st.exit_code != 0) {
        err << diag::printable(st.err) << "\n";
        return remote_exit(st.exit_code, t);
      }
      // Its lines as they came (each made printable); the container's name for the IDE's line.
      std::string container;
      std::istringstream lines(st.out);
      for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("ide ")) continue;  // the server's own link: not this machine's way in
        out << diag::printable(line) << "\n";
        if (line.starts_with("container ")) container = diag::printable(line.substr(10));
      }
      // An IDE reaches the same container through the server's docker over ssh (docker's own
      // ssh:// transport, through the same ~/.ssh/config).
      if (!container.empty()) out << "ide " << ide_way_in(t, container) << "\n";
      const auto k = read_keeper(dir);
      const bool alive = k && keeper_alive(*k);
      if (!alive) out << "forward none (envpin dev --host " << r.host << " starts it)\n";
      for (const Forward& f : alive ? k->ports : std::vector<Forward>{})
        out << "forward " << f.name << " 127.0.0.1:" << f.local << " -> " << t.host << " 127.0.0.1:" << f.remote
            << " (pid " << k->pid << ")\n";
      return 0;
    }
    case DevRequest::Action::url: {
      const auto k = read_keeper(dir);
      if (!k || !keeper_alive(*k))
        throw Error("no SSH forward to " + t.destination + " runs on this machine", std::nullopt,
                    "envpin dev --host " + r.host + " starts it (and the container, if it is not running)");
      print_urls(remote_urls(t, m, err), *k, out);
      return 0;
    }
    case DevRequest::Action::open:
      break;
  }
  if (r.dry_run) return dry_run(r, t, m, out, err);
  // The forward's ssh is its own connection (it outlives this command); the sync and the commands
  // there share one, opened once (a reattach made four connections, 1.9 s over loopback).
  const std::vector<std::string> own_ssh = sync::ssh_words();
  const SshMaster shared(t, dir);
  const SyncResult s = sync_project({r.host, r.manifest, false, false, false, true}, err);
  err << "envpin dev: synced to " << s.destination << " (" << s.files_sent << " file(s) sent)\n";
  if (!s.deletions.empty())
    err << "envpin dev: " << s.deletions.size() << " file(s) there that this project does not have (made there, e.g. "
        << diag::quote(s.deletions.front()) << ") stay there, and a file newer there than here is not overwritten; "
        << "envpin does not copy them back: rsync them home, or commit them there\n";
  if (!r.command.empty()) {
    std::vector<std::string> args = {"--"};
    args.insert(args.end(), r.command.begin(), r.command.end());
    return there(args);
  }
  // Started or found there: its URLs (the server's ports, not this machine's) read from its
  // stdout, its progress (an image build) shown as it comes.
  std::string printed;
  if (const int rc = remote_exit(
          io::run_attached(sync::remote_envpin_argv(t, {"dev", "--no-shell"}), {}, &printed, {}, false, true), t);
      rc != 0)
    return rc;
  std::vector<Forward> ports = urls_of(printed, t, m);
  const std::optional<Keeper> before = read_keeper(dir);
  // A forward that still carries every server's port both ways is kept (a reattach from another
  // terminal); a dropped or different one is replaced, its local ports reused.
  const bool keep = before && keeper_alive(*before) && before->ports.size() == ports.size() &&
                    std::all_of(ports.begin(), ports.end(), [&](const Forward& f) {
                      return std::any_of(before->ports.begin(), before->ports.end(), [&](const Forward& b) {
                        return b.name == f.name && b.remote == f.remote && forward_answers(b.local);
                      });
                    });
  if (!keep) {
    stop_keeper(dir);
    choose_local_ports(ports, before, err);
  }
  const Keeper k = keep ? *before : start_keeper(t, dir, ports, own_ssh);
  out.flush();
  print_urls(ports, k, out);
  out.flush();
  // The IDE's way in, next to the URLs (one more command through the shared connection).
  if (const std::string c = remote_container(t); !c.empty()) err << "envpin dev: IDE: " << ide_way_in(t, c) << "\n";
  err << "envpin dev: the forward " << (keep ? "still answers: kept" : "runs in the background") << " (pid " << k.pid
      << "), reconnecting by itself; envpin dev --host " << r.host << " --stop ends it and the container\n";
  if (!r.shell) return 0;
  std::vector<std::string> shell = sync::remote_envpin_argv(t, {"dev"});
  shell.insert(shell.begin() + 1, "-t");
  return remote_exit(io::run_attached(shell), t);
}

}  // namespace envpin::workflow

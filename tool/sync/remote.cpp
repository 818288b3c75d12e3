// SPDX-License-Identifier: Apache-2.0
#include "sync/remote.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "diag/text.hpp"

namespace envpin::sync {
namespace {

bool safe_char(char c, bool path) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
         (path && (c == '/' || c == '~' || c == '+' || c == '@'));
}

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

// Top-level directories that hold more than one project: syncing into one of them with --delete
// would remove what else is there.
constexpr std::string_view kSystemDirs[] = {"bin",    "boot",  "dev", "etc", "home", "lib",  "lib32", "lib64",
                                            "libx32", "media", "mnt", "opt", "proc", "root", "run",   "sbin",
                                            "srv",    "sys",   "tmp", "usr", "var",  "Users"};

// The remote path as the server reaches it, spelt one way: where it starts ("/"; "~" or "~name",
// which the remote shell expands; "" for the login directory, the home) and its names, with
// empty and '.' names dropped and '..' resolved. `climbs` is set when a '..' goes above the
// start: the server's symlinks decide where that leads, which is not known here.
struct RemotePath {
  std::string start;
  std::vector<std::string> names;
  bool climbs = false;

  std::string text() const {
    std::string out = start;
    for (const std::string& n : names) out += (out.empty() || out.back() == '/' ? "" : "/") + n;
    return out;
  }
};

RemotePath remote_path(const std::string& path) {
  RemotePath p;
  std::string_view rest = path;
  if (rest.starts_with("/")) {
    p.start = "/";
  } else if (rest.starts_with("~")) {
    p.start = std::string(rest.substr(0, rest.find('/')));
    rest.remove_prefix(p.start.size());
  }
  while (!rest.empty()) {
    const std::size_t slash = rest.find('/');
    const std::string_view name = rest.substr(0, slash);
    rest.remove_prefix(slash == std::string_view::npos ? rest.size() : slash + 1);
    if (name.empty() || name == ".") continue;
    if (name != "..")
      p.names.emplace_back(name);
    else if (p.names.empty())
      p.climbs = true;
    else
      p.names.pop_back();
  }
  return p;
}

}  // namespace

Target parse_target(const std::string& text) {
  const std::string hint = "write it as user@host:/path/to/project (an ssh config alias works as host)";
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0)
    throw diag::Error("the destination " + diag::quote(text) + " is not [user@]host:path", std::nullopt, hint);
  Target t;
  t.destination = text.substr(0, colon);
  t.path = text.substr(colon + 1);
  const auto at = t.destination.find('@');
  const std::string user = at == std::string::npos ? "" : t.destination.substr(0, at);
  t.host = at == std::string::npos ? t.destination : t.destination.substr(at + 1);
  const auto name_ok = [](const std::string& s) {
    return !s.empty() && s.front() != '-' &&
           std::all_of(s.begin(), s.end(), [](char c) { return safe_char(c, false); });
  };
  if (!name_ok(t.host) || (at != std::string::npos && !name_ok(user)))
    throw diag::Error(
        "the host in " + diag::quote(text) + " has characters other than letters, digits and ._- (or starts with '-')",
        std::nullopt, hint);
  const auto refuse = [&](const std::string& what, const std::string& fix) {
    throw diag::Error("the remote path " + diag::quote(t.path) + " " + what, std::nullopt, fix);
  };
  const std::string chars_hint = "choose a directory name of those characters (it reaches the remote shell)";
  const std::string what_chars = "is empty, starts with '-' or has characters other than letters, digits and ._-+@/~";
  if (t.path.empty() || t.path.front() == '-' ||
      !std::all_of(t.path.begin(), t.path.end(), [](char c) { return safe_char(c, true); }))
    refuse(what_chars, chars_hint);
  // rsync --delete empties what the path reaches: the check is made on the path as the server
  // reaches it ("./", "~//", "a/.." are the home), and that spelling is the one used.
  const RemotePath p = remote_path(t.path);
  if (p.climbs)
    refuse("climbs above where it starts with '..'",
           "write the directory without '..', e.g. " + t.destination + ":projects/name");
  const std::string own = "sync into a directory of its own, e.g. " + t.destination + ":projects/name";
  const bool absolute = p.start == "/";
  if (p.names.empty() || (absolute && p.names.size() == 1 && p.names[0] == "root") ||
      (absolute && p.names.size() == 2 && (p.names[0] == "home" || p.names[0] == "Users")))
    refuse("is a whole home or root directory", own);
  const std::string normal = p.text();
  if (normal.front() == '-') refuse(what_chars, chars_hint);
  if (absolute && p.names.size() == 1 &&
      std::find(std::begin(kSystemDirs), std::end(kSystemDirs), p.names[0]) != std::end(kSystemDirs))
    refuse("is a system directory", own);
  t.path = normal;
  return t;
}

std::vector<std::string> ssh_words() {
  std::vector<std::string> words;
  const char* custom = std::getenv("ENVPIN_SSH");
  std::istringstream in(custom && *custom ? custom : "ssh");
  for (std::string w; in >> w;) words.push_back(w);
  const char* timeout = std::getenv("ENVPIN_SSH_TIMEOUT");
  std::string seconds = timeout && *timeout ? timeout : "15";
  if (!std::all_of(seconds.begin(), seconds.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
      seconds.size() > 5)
    seconds = "15";
  for (const std::string& o :
       {"ConnectTimeout=" + seconds, std::string("ServerAliveInterval=15"), std::string("ServerAliveCountMax=4")}) {
    words.push_back("-o");
    words.push_back(o);
  }
  return words;
}

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string rsync_shell(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("._-+=/:@,%").find(c) != std::string_view::npos;
    });
    out += (out.empty() ? "" : " ") + (plain ? w : sh_quote(w));
  }
  return out;
}

std::string remote_dir(const Target& t) {
  // A leading ~ or ~user is the shell's to expand, as rsync's remote shell does for `sync`: it
  // stays outside the quotes (parse_target allows only letters, digits and ._-+@ in it).
  if (!t.path.starts_with("~")) return sh_quote(t.path);
  const std::size_t slash = t.path.find('/');
  return t.path.substr(0, slash) + (slash == std::string::npos ? "" : "/" + sh_quote(t.path.substr(slash + 1)));
}

std::vector<std::string> remote_sh_argv(const Target& t, const std::string& command) {
  std::vector<std::string> argv = ssh_words();
  argv.push_back(t.destination);
  argv.push_back(command);
  return argv;
}

std::vector<std::string> remote_envpin_argv(const Target& t, const std::vector<std::string>& args) {
  const char* bin = std::getenv("ENVPIN_REMOTE_ENVPIN");
  const std::string envpin = bin && *bin ? bin : "envpin";
  std::string command = "cd " + remote_dir(t) + " && exec " + sh_quote(envpin);
  for (const std::string& a : args) command += " " + sh_quote(a);
  return remote_sh_argv(t, command);
}

diag::Error remote_error(const std::string& err, int code, const Target& t, const std::string& doing) {
  // The line that says what happened: ssh's own, not rsync's summary of it nor ssh's banner.
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);) {
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
    if (!l.empty() && !l.starts_with("rsync error:") && !contains(l, "connection unexpectedly closed") &&
        !l.starts_with("@"))
      lines.push_back(l);
  }
  std::string line = lines.empty() ? "" : lines.back();
  for (std::string_view key :
       {"has changed", "Permission denied", "Connection refused", "Connection timed out", "Could not resolve",
        "No route to host", "host key is known", "Host key verification failed", "not found", "failed"}) {
    const auto it = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return contains(l, key); });
    if (it != lines.end()) {
      line = *it;
      break;
    }
  }
  line = diag::printable(line.empty() ? "exit " + std::to_string(code) : line);
  const std::string where = " (" + doing + " " + t.destination + ")";
  if (contains(err, "REMOTE HOST IDENTIFICATION HAS CHANGED") ||
      contains(err, "has changed and you have requested strict"))
    return diag::Error("ssh refused the server's host key: " + line + where, std::nullopt,
                       "if " + t.host +
                           " was reinstalled, check the new key's fingerprint with its admin, then run "
                           "'ssh-keygen -R " +
                           t.host + "' and connect again; otherwise do not connect");
  if (contains(err, "Host key verification failed") || (contains(err, "No ") && contains(err, "host key is known")))
    return diag::Error("ssh does not know the server's host key: " + line + where, std::nullopt,
                       "connect once with 'ssh " + t.destination + "', check the fingerprint, and accept it");
  if (contains(err, "Permission denied (publickey") || contains(err, "Permission denied (password"))
    return diag::Error(
        "ssh could not log in: " + line + where, std::nullopt,
        "check the user and key ('ssh -v " + t.destination + "'); name the key with IdentityFile in ~/.ssh/config");
  if (contains(err, "Connection timed out") || contains(err, "Connection refused") ||
      contains(err, "Could not resolve") || contains(err, "No route to host") ||
      contains(err, "Network is unreachable"))
    return diag::Error("cannot reach the server: " + line + where, std::nullopt,
                       "check the host name and port ('ssh -v " + t.destination + "') and that sshd runs there");
  // (Whatever rsync exits: 127 when it reaps ssh first, 12 when it reads the closed stream first.)
  if (contains(err, "rsync: command not found") || contains(err, "rsync: not found"))
    return diag::Error("rsync is not installed on " + t.host + where, std::nullopt,
                       "install it there (apt-get install rsync)");
  if (contains(err, "Permission denied"))
    return diag::Error("the server refused a write: " + line + where, std::nullopt,
                       "sync to a directory the remote user can write, e.g. one under its home");
  return diag::Error(doing + " " + t.destination + " failed (exit " + std::to_string(code) + "): " + line, std::nullopt,
                     "run it again with ENVPIN_SSH='ssh -v' to see what ssh does");
}

}  // namespace envpin::sync

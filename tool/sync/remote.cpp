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
  if (t.path.empty() || t.path.front() == '-' ||
      !std::all_of(t.path.begin(), t.path.end(), [](char c) { return safe_char(c, true); }))
    throw diag::Error("the remote path " + diag::quote(t.path) +
                          " is empty, starts with '-' or has characters other than letters, digits and ._-+@/~",
                      std::nullopt, "choose a directory name of those characters (it reaches the remote shell)");
  if (t.path == "/" || t.path == "~" || t.path == "~/" || t.path == ".")
    throw diag::Error("the remote path " + diag::quote(t.path) + " is a whole home or root directory", std::nullopt,
                      "sync into a directory of its own, e.g. " + t.destination + ":projects/name");
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

std::vector<std::string> remote_envpin_argv(const Target& t, const std::vector<std::string>& args) {
  const char* bin = std::getenv("ENVPIN_REMOTE_ENVPIN");
  const std::string envpin = bin && *bin ? bin : "envpin";
  std::string command = "cd " + sh_quote(t.path) + " && exec " + sh_quote(envpin);
  for (const std::string& a : args) command += " " + sh_quote(a);
  std::vector<std::string> argv = ssh_words();
  argv.push_back(t.destination);
  argv.push_back(command);
  return argv;
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

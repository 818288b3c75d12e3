// SPDX-License-Identifier: Apache-2.0
// The dev section of envpin.yaml: the servers of the development container (`envpin dev`).
// Every server listens on the host's 127.0.0.1 only, at an address and port envpin gives it: a
// value that would bind another address, take the port or the token out of envpin's hands, or
// hide a word envpin does not fill, is refused here, where it is written.
#include <algorithm>

#include "diag/text.hpp"
#include "manifest/keys.hpp"
#include "manifest/paths.hpp"

namespace envpin::manifest::detail {
namespace {

using diag::quote;

constexpr std::string_view kKinds[] = {"jupyter", "tensorboard", "command"};

// Options by which Jupyter or TensorBoard would choose its own address, port or token, or who may
// connect: envpin sets them (the token outside the command line). The command line wins over a
// config file, and .envpin/dev.sh checks after the start that nothing listens elsewhere.
constexpr std::string_view kJupyterFlags[] = {"--ip",   "--port",       "--port-retries",
                                              "--sock", "--no-browser", "--browser"};
constexpr std::string_view kJupyterClasses[] = {"--NotebookApp.", "--ServerApp.", "--IdentityProvider.",
                                                "--PasswordIdentityProvider."};
constexpr std::string_view kJupyterTraits[] = {"ip",
                                               "port",
                                               "port_retries",
                                               "sock",
                                               "token",
                                               "password",
                                               "hashed_password",
                                               "allow_remote_access",
                                               "allow_origin",
                                               "allow_origin_pat",
                                               "local_hostnames",
                                               "disable_check_xsrf",
                                               "open_browser"};
constexpr std::string_view kTensorboardFlags[] = {"--host", "--port", "--bind_all", "--logdir", "--logdir_spec"};

// `w` is FLAG or FLAG=VALUE.
bool is_flag(std::string_view w, std::string_view flag) {
  return w.starts_with(flag) && (w.size() == flag.size() || w[flag.size()] == '=');
}

// The option of `w` that envpin sets for a server of `kind`, or false.
bool owned_option(std::string_view kind, std::string_view w) {
  if (kind == "tensorboard")
    return std::any_of(std::begin(kTensorboardFlags), std::end(kTensorboardFlags),
                       [&](std::string_view f) { return is_flag(w, f); });
  if (std::any_of(std::begin(kJupyterFlags), std::end(kJupyterFlags),
                  [&](std::string_view f) { return is_flag(w, f); }))
    return true;
  // A config file can set anything, the token and the kernels' address included: refused as a
  // whole (the settings go on the command line, where they are checked).
  if (is_flag(w, "--config") || is_flag(w, "--config-file")) return true;
  // By rule, not by list: a trait of these names on any class (--KernelManager.ip as much as
  // --ServerApp.ip); a class is --Name. with a capital first letter.
  for (std::string_view c : kJupyterClasses)
    if (w.starts_with(c))
      for (std::string_view t : kJupyterTraits)
        if (is_flag(w.substr(c.size()), t)) return true;
  if (w.size() > 3 && w.starts_with("--") && w[2] >= 'A' && w[2] <= 'Z')
    if (const std::size_t dot = w.find('.'); dot != w.npos)
      for (std::string_view t : kJupyterTraits)
        if (is_flag(w.substr(dot + 1), t)) return true;
  return false;
}

// An address that is not loopback, written into a word: 0.0.0.0 (every interface), [::] or ::.
bool names_any_address(std::string_view w) { return w.find("0.0.0.0") != w.npos || w.find("::") != w.npos || w == "*"; }

// The {word}s of `w` are envpin's three; returns the first other one, or "".
std::string unknown_placeholder(std::string_view w) {
  for (std::size_t at = w.find('{'); at != w.npos; at = w.find('{', at + 1)) {
    const std::size_t end = w.find('}', at);
    const std::string_view p = w.substr(at, end == w.npos ? w.npos : end - at + 1);
    if (p != kDevHostWord && p != kDevPortWord && p != kDevTokenWord) return std::string(p);
  }
  if (const std::size_t close = w.find('}'); close != w.npos && w.rfind('{', close) == w.npos)
    return std::string(w.substr(0, close + 1));
  return "";
}

bool has_word(const std::vector<Located<std::string>>& words, std::string_view placeholder) {
  return std::any_of(words.begin(), words.end(),
                     [&](const auto& w) { return w.value.find(placeholder) != std::string::npos; });
}

void check_words(const DevServer& s) {
  const std::string key = "dev.servers " + quote(s.name.value) + " command";
  for (const auto& w : s.command) {
    if (names_any_address(w.value))
      throw Error(key + " binds " + quote(w.value) + ", another address than 127.0.0.1", w.where,
                  "leave the address to envpin (it binds 127.0.0.1; reach it from elsewhere through an SSH "
                  "forward); for kind command write {host}");
    if (const std::string p = unknown_placeholder(w.value); !p.empty())
      throw Error(key + " has " + quote(p) + ", which envpin does not fill", w.where,
                  "write {host}, {port} or {token_file}, or quote the braces another way");
    if (s.kind.value == "command") continue;
    if (owned_option(s.kind.value, w.value))
      throw Error(key + " sets " + quote(w.value) + ", which envpin sets for a " + s.kind.value + " server", w.where,
                  s.kind.value == "jupyter"
                      ? "remove it: envpin binds 127.0.0.1 on dev.servers.port and hands Jupyter a token of its own"
                      : "remove it: envpin binds 127.0.0.1 on dev.servers.port and passes dev.servers.logdir");
    if (w.value.find('{') != std::string::npos)
      throw Error(key + " has " + quote(w.value) + ": {host}, {port} and {token_file} are for kind command", w.where,
                  "remove it: envpin gives a " + s.kind.value + " server its address and port itself");
  }
  if (s.kind.value == "jupyter" && !s.command.empty()) {
    const std::string& first = s.command.front().value;
    const bool sub =
        first == "jupyter" && s.command.size() >= 2 &&
        (s.command[1].value == "notebook" || s.command[1].value == "lab" || s.command[1].value == "server");
    if (!sub && first != "jupyter-notebook" && first != "jupyter-lab" && first != "jupyter-server")
      throw Error(key + " starts with " + quote(first) + ", not a Jupyter server", s.command.front().where,
                  "write [jupyter, notebook], [jupyter, lab] or [jupyter-lab]; for another program use kind: command");
  }
  if (s.kind.value == "tensorboard" && !s.command.empty() && s.command.front().value != "tensorboard")
    throw Error(key + " starts with " + quote(s.command.front().value) + ", not tensorboard", s.command.front().where,
                "write [tensorboard, ...], or use kind: command for another program");
  if (s.kind.value == "command" && (!has_word(s.command, kDevHostWord) || !has_word(s.command, kDevPortWord)))
    throw Error(key + " does not name " + std::string(!has_word(s.command, kDevHostWord) ? "{host}" : "{port}") +
                    ": envpin could not make it listen on 127.0.0.1 at dev.servers.port",
                s.command.empty() ? s.name.where : s.command.front().where,
                "pass both to the program, e.g. [python3, -m, http.server, --bind, '{host}', '{port}']");
}

DevServer read_server(const Reader& r, const YAML::Node& node) {
  DevServer s;
  const Location at = r.at(node);
  bool has_name = false;
  std::optional<YAML::Node> port_node, kind_node;
  for (const auto& [key, k, v] : r.entries(node, "dev.servers item", keys_in("dev.servers"))) {
    if (key == "name") {
      s.name = r.string(v, "dev.servers.name");
      has_name = true;
      const std::string& n = s.name.value;
      if (n.size() > 32 || !only(n, "_-") || !only(n.substr(0, 1), ""))
        r.fail(v, "dev.servers.name " + quote(n) + " is not a name of letters, digits, '-' and '_'",
               "name it e.g. 'notebook' (at most 32 characters, starting with a letter or digit)");
    } else if (key == "kind") {
      s.kind = r.choice(v, "dev.servers.kind", kKinds);
      kind_node = v;
    } else if (key == "port") {
      s.port = r.integer(v, "dev.servers.port", 1024, 65535);
      port_node = v;
    } else if (key == "command") {
      s.command = r.word_list(v, "dev.servers.command");
    } else if (key == "logdir") {
      s.logdir = r.project_path(v, "dev.servers.logdir");
      check_path_chars(*s.logdir, "dev.servers.logdir");
    }
  }
  if (!has_name)
    throw Error("a dev.servers item has no name", at, "add 'name: notebook' (it names the server in envpin dev)");
  // No kind: the program's own when it is Jupyter or TensorBoard, else a command; no command: Jupyter.
  if (s.kind.value.empty()) {
    const std::string first = s.command.empty() ? "jupyter" : s.command.front().value;
    s.kind = {first == "jupyter" || first.starts_with("jupyter-") ? "jupyter"
              : first == "tensorboard"                            ? "tensorboard"
                                                                  : "command",
              at};
  }
  if (!port_node) {
    if (s.kind.value == "command")
      throw Error("dev.servers " + quote(s.name.value) + " has no port", at,
                  "add 'port: 8000' (the port its {port} word gets on the host's 127.0.0.1)");
    s.port = {s.kind.value == "jupyter" ? 8888 : 6006, at};
  }
  if (s.logdir && s.kind.value != "tensorboard")
    throw Error("dev.servers.logdir is for kind tensorboard, not " + s.kind.value, s.logdir->where,
                "remove it, or set kind: tensorboard");
  if (s.kind.value == "tensorboard" && !s.logdir) s.logdir = Located<std::string>{"runs", at};
  check_words(s);
  return s;
}

}  // namespace

void read_dev(const Reader& r, const YAML::Node& node, Manifest& m) {
  Dev d;
  d.where = r.at(node);
  if (!node.IsNull()) {
    for (const auto& [key, k, v] : r.entries(node, "dev", keys_in("dev"))) {
      if (key == "idle_stop") {
        d.idle_stop = duration(r, v, "dev.idle_stop", 1, 7 * 24 * 3600);
        continue;
      }
      if (key != "servers") continue;
      for (const YAML::Node& item : r.list(v, "dev.servers")) {
        DevServer s = read_server(r, item);
        for (const DevServer& o : d.servers) {
          if (o.name.value == s.name.value)
            throw Error("dev.servers has two servers named " + quote(s.name.value) + " (the first at line " +
                            std::to_string(o.name.where.line) + ")",
                        s.name.where, "rename one of them");
          if (o.port.value == s.port.value)
            throw Error("dev.servers " + quote(s.name.value) + " and " + quote(o.name.value) + " both take port " +
                            std::to_string(s.port.value),
                        s.port.where, "give each server its own port");
        }
        d.servers.push_back(std::move(s));
      }
    }
  }
  m.dev = std::move(d);
}

}  // namespace envpin::manifest::detail

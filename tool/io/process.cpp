// SPDX-License-Identifier: Apache-2.0
#include "io/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>
#include <vector>

#include "diag/text.hpp"

extern char** environ;

namespace envpin::io {

namespace {

volatile sig_atomic_t attached_child = 0;
// The handlers run_attached replaced, while it waits: a caller's own handler (resume-check notes
// a Ctrl-C to stop what it started) still hears the signal it passed on.
using SigAction = struct sigaction;  // (the struct shares its name with the function)
SigAction replaced_int{}, replaced_term{}, replaced_hup{};

void forward_signal(int signal) {
  if (attached_child > 0) ::kill(attached_child, signal);
  const SigAction& before = signal == SIGINT ? replaced_int : signal == SIGTERM ? replaced_term : replaced_hup;
  if (!(before.sa_flags & SA_SIGINFO) && before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN &&
      before.sa_handler != forward_signal)
    before.sa_handler(signal);
}

}  // namespace

int run_attached(const std::vector<std::string>& argv, const std::vector<std::string>& env, std::string* out,
                 const std::string& stdin_file, bool echo, bool err_as_data) {
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) environment.emplace_back(*e);
  for (const std::string& add : env) {
    const std::string name = add.substr(0, add.find('=') + 1);
    std::erase_if(environment, [&](const std::string& e) { return e.starts_with(name); });
    environment.push_back(add);
  }
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  SigAction forward{};
  forward.sa_handler = forward_signal;
  sigemptyset(&forward.sa_mask);
  pid_t pid = 0;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (out) {
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) return -1;
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  }
  if (err_as_data) {
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) return -1;
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  }
  if (!stdin_file.empty()) posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_file.c_str(), O_RDONLY, 0);
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (out) ::close(out_pipe[1]);
  if (err_as_data) ::close(err_pipe[1]);
  if (spawned != 0) {
    if (out) ::close(out_pipe[0]);
    if (err_as_data) ::close(err_pipe[0]);
    return -1;
  }
  attached_child = pid;
  sigaction(SIGINT, nullptr, &replaced_int);
  sigaction(SIGTERM, nullptr, &replaced_term);
  sigaction(SIGHUP, nullptr, &replaced_hup);
  sigaction(SIGINT, &forward, nullptr);
  sigaction(SIGTERM, &forward, nullptr);
  sigaction(SIGHUP, &forward, nullptr);
  // stdout collected (1 MiB at most, the rest drained), stderr shown a line at a time as data.
  std::string line;
  const auto show_line = [&] {
    const std::string shown = diag::printable(line) + "\n";
    if (::write(STDERR_FILENO, shown.data(), shown.size()) < 0) line.clear();
    line.clear();
  };
  bool out_open = out != nullptr, err_open = err_as_data;
  while (out_open || err_open) {
    std::vector<pollfd> fds;
    if (out_open) fds.push_back({out_pipe[0], POLLIN, 0});
    if (err_open) fds.push_back({err_pipe[0], POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (const pollfd& f : fds) {
      if (!(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = ::read(f.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        (f.fd == out_pipe[0] ? out_open : err_open) = false;
        continue;
      }
      const std::string_view got(buf, static_cast<std::size_t>(n));
      if (f.fd == out_pipe[0]) {
        if (out->size() < (std::size_t{1} << 20)) out->append(got);
        if (echo && ::write(STDERR_FILENO, buf, got.size()) < 0) echo = false;
        continue;
      }
      for (char c : got) {
        if (c == '\n') {
          show_line();
        } else if (line.size() < 4096) {
          line += c;  // the rest of a longer line is dropped
        }
      }
    }
  }
  if (!line.empty()) show_line();
  if (out) ::close(out_pipe[0]);
  if (err_as_data) ::close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  attached_child = 0;
  sigaction(SIGINT, &replaced_int, nullptr);
  sigaction(SIGTERM, &replaced_term, nullptr);
  sigaction(SIGHUP, &replaced_hup, nullptr);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input, std::size_t max_output) {
  ProcessResult r;
  int out_pipe[2], err_pipe[2], in_pipe[2];
  // Close-on-exec: a process another thread starts meanwhile (lock resolves pip beside apt)
  // must not inherit these ends, or this child's output would not end until that one exits.
  // The dup2 onto 0, 1 and 2 below gives the child its own copies without the flag.
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(in_pipe, O_CLOEXEC) != 0) {
    r.err = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
    posix_spawn_file_actions_addclose(&actions, fd);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawned != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    r.err = "cannot run " + argv[0] + ": " + std::strerror(spawned);
    return r;
  }
  // Feed stdin and drain both outputs without deadlocking on full pipes.
  std::size_t written = 0;
  if (input.empty()) {
    close(in_pipe[1]);
    in_pipe[1] = -1;
  } else {
    fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
  }
  std::array<char, 65536> buffer{};
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    std::vector<pollfd> fds;
    if (out_open) fds.push_back({out_pipe[0], POLLIN, 0});
    if (err_open) fds.push_back({err_pipe[0], POLLIN, 0});
    if (in_pipe[1] >= 0) fds.push_back({in_pipe[1], POLLOUT, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (const pollfd& p : fds) {
      if (p.fd == in_pipe[1] && (p.revents & (POLLOUT | POLLERR | POLLHUP))) {
        const ssize_t n = write(in_pipe[1], input.data() + written, input.size() - written);
        if (n > 0) written += static_cast<std::size_t>(n);
        if (n < 0 || written == input.size()) {
          close(in_pipe[1]);
          in_pipe[1] = -1;
        }
        continue;
      }
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(p.fd, buffer.data(), buffer.size());
      std::string& sink = p.fd == out_pipe[0] ? r.out : r.err;
      if (n > 0) {
        sink.append(buffer.data(), static_cast<std::size_t>(n));
        if (max_output != 0 && sink.size() > max_output && !r.over_limit) {
          // Said more than the caller reads: stopped, not read to the end.
          r.over_limit = true;
          ::kill(pid, SIGKILL);
          sink.resize(max_output);
          out_open = err_open = false;
        }
      } else {
        (p.fd == out_pipe[0] ? out_open : err_open) = false;
      }
    }
  }
  if (in_pipe[1] >= 0) close(in_pipe[1]);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

int spawn_detached(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return spawned == 0 ? pid : -1;
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  return find_on_path(name, path ? path : "");
}

std::string find_on_path(const std::string& name, const std::string& path) {
  std::istringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

std::string find_container_engine(std::initializer_list<const char*> variables) {
  for (const char* var : variables)
    if (const char* e = std::getenv(var); e && *e) return e;
  for (const char* name : {"docker", "podman"})
    if (!find_on_path(name).empty()) return name;
  return {};
}

}  // namespace envpin::io

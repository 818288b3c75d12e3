// SPDX-License-Identifier: Apache-2.0
// A job under Charliecloud's ch-run (templates/lib/run.sh, ch_wrapper): the session record in
// <logs>/<job>.ch-run read as data, whether the session still runs here, and stopping it. The same
// rules as run.sh's ch_read, ch_running and engine_stop (tests/unit/run_sh_rules_test.cpp).
#include <signal.h>
#include <sys/utsname.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "jobs/project.hpp"

namespace envpin::jobs {

namespace fs = std::filesystem;
using diag::Error;

std::optional<ChRecord> parse_ch_record(const std::string& text) {
  if (text.size() > 4096) return std::nullopt;
  ChRecord r;
  std::set<std::string> seen;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (!seen.insert(key).second) return std::nullopt;
    if (key == "pid" && diag::all_digits(value) && value.size() <= 9)
      r.pid = std::stoi(value);
    else if (key == "start" && diag::all_digits(value) && value.size() <= 20)
      r.start = value;
    else if (key == "host" && !value.empty() && value.size() <= 255 && diag::only_ascii(value, "._-"))
      r.host = value;
    else if (key == "exit" && diag::all_digits(value) && value.size() <= 3)
      r.exit = std::stoi(value);
    else
      return std::nullopt;
  }
  if (r.pid <= 1 || r.start.empty() || r.host.empty()) return std::nullopt;
  return r;
}

namespace {

// The live processes whose session is `leader`, the leader itself left out (run.sh's ch_members).
std::vector<int> session_members(int leader) {
  std::vector<int> members;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (!diag::all_digits(name) || name.size() > 9 || name == std::to_string(leader)) continue;
    std::optional<std::string> stat;
    try {
      stat = io::read_file(entry.path() / "stat");
    } catch (const Error&) {
      continue;  // it ended meanwhile
    }
    const auto paren = stat ? stat->rfind(") ") : std::string::npos;
    if (paren == std::string::npos) continue;
    std::istringstream in(stat->substr(paren + 2));
    std::string state, ppid, pgrp, session;
    if (in >> state >> ppid >> pgrp >> session && session == std::to_string(leader) && state != "Z")
      members.push_back(std::stoi(name));
  }
  return members;
}

}  // namespace

bool ch_session_alive(const ChRecord& r, const std::string& container) {
  utsname u{};
  ::uname(&u);
  if (r.exit || r.host != u.nodename) return false;
  std::error_code ec;
  const fs::path leader = "/proc/" + std::to_string(r.pid);
  if (fs::exists(leader, ec)) {
    if (process_start(r.pid) != r.start) return false;  // the pid names another process now
    // `sh -c SCRIPT envpin-ch-run CONTAINER ...`
    const std::vector<std::string> argv = process_args(r.pid, 5);
    return argv.size() == 5 && argv[3] == "envpin-ch-run" && argv[4] == container && process_start(r.pid) == r.start;
  }
  return !session_members(r.pid).empty();
}

namespace {

std::optional<ChRecord> ch_record(const Project& p, const std::string& id) {
  std::optional<std::string> text;
  try {
    check_job_id(id);
    const fs::path file = p.logs / (id + ".ch-run");
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec)) || fs::file_size(file, ec) > 4096) return std::nullopt;
    text = io::read_file(file);
  } catch (const Error&) {
    return std::nullopt;
  }
  return text ? parse_ch_record(*text) : std::nullopt;
}

}  // namespace

bool stop_ch_session(const Project& p, const std::string& id, int timeout_s) {
  const auto r = ch_record(p, id);
  const std::string container = container_name(p, id);
  if (!r || !ch_session_alive(*r, container)) return false;
  ::kill(-r->pid, SIGTERM);
  for (int i = 0; i < timeout_s * 10 && ch_session_alive(*r, container); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // All but the wrapper, which then records the exit status (137), as run.sh's engine_stop does.
  if (ch_session_alive(*r, container))
    for (const int pid : session_members(r->pid)) ::kill(pid, SIGKILL);
  return true;
}

std::optional<ContainerState> ch_container_state(const Project& p, const std::string& id) {
  const auto r = ch_record(p, id);
  if (!r) return std::nullopt;
  if (r->exit) return ContainerState{"exited", *r->exit};
  if (ch_session_alive(*r, container_name(p, id))) return ContainerState{"running", 0};
  return std::nullopt;
}

}  // namespace envpin::jobs

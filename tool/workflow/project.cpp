// SPDX-License-Identifier: Apache-2.0
#include "workflow/project.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/state_dir.hpp"
#include "lock/lock.hpp"
#include "render/render.hpp"
#include "report/smoke.hpp"
#include "resolve/environment.hpp"
#include "workflow/generate.hpp"

namespace envpin::workflow {

using diag::Error;
using diag::Location;
namespace fs = std::filesystem;

fs::path commit_journal(const fs::path& dir) { return dir / ".envpin" / ".commit.envpin-journal"; }

namespace {

// The directories this process holds, by canonical path: the open descriptor and how many
// ProjectLocks share it.
std::map<std::string, std::pair<int, int>>& held() {
  static std::map<std::string, std::pair<int, int>> locks;
  return locks;
}

// The pid holding an flock on the file with inode `inode`, from /proc/locks (lines such as
// "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"); empty when it cannot be told.
std::string lock_holder(ino_t inode) {
  std::optional<std::string> text;
  try {
    text = io::read_file("/proc/locks");
  } catch (const Error&) {
    return "";
  }
  std::istringstream lines(text.value_or(""));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; w.size() < 6 && words >> x;) w.push_back(x);
    if (w.size() < 6 || w[1] != "FLOCK" || w[3] != "WRITE") continue;
    const std::string& id = w[5];
    const auto colon = id.rfind(':');
    if (colon == std::string::npos || id.substr(colon + 1) != std::to_string(inode)) continue;
    if (!w[4].empty() && w[4].find_first_not_of("0123456789") == std::string::npos) return w[4];
  }
  return "";
}

long lock_wait_s() {
  const char* e = std::getenv("ENVPIN_LOCK_WAIT");
  if (!e || !*e) return 30;
  const std::string v = e;
  if (v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos)
    throw Error("ENVPIN_LOCK_WAIT must be a whole number of seconds from 0 to 9999, found " + diag::quote(v),
                std::nullopt, "set it like ENVPIN_LOCK_WAIT=120, or unset it for 30 s");
  return std::stol(v);
}

}  // namespace

ProjectLock::ProjectLock(const fs::path& dir, std::ostream* waiting_note) {
  std::error_code ec;
  const fs::path where = dir.empty() ? fs::path(".") : dir;
  key_ = fs::weakly_canonical(fs::absolute(where, ec), ec).string();
  if (auto it = held().find(key_); it != held().end()) {
    ++it->second.second;
    return;
  }
  const int fd = ::open(where.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    key_.clear();  // nothing to lock: the directory does not exist yet (its writer creates it)
    return;
  }
  const long wait_s = lock_wait_s();
  const auto start = std::chrono::steady_clock::now();
  bool noted = false;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) break;  // no flock here (some network file systems): unlocked
    struct stat st {};
    const std::string holder = ::fstat(fd, &st) == 0 ? lock_holder(st.st_ino) : "";
    const std::string who = "another envpin" + (holder.empty() ? std::string() : " (pid " + holder + ")");
    if (std::chrono::steady_clock::now() - start >= std::chrono::seconds(wait_s)) {
      ::close(fd);
      key_.clear();
      throw Error(
          who + " is writing this project (" + where.generic_string() + "); waited " + std::to_string(wait_s) + " s",
          std::nullopt, "let it finish and run this again (ENVPIN_LOCK_WAIT sets how long to wait)");
    }
    if (!noted && waiting_note) *waiting_note << "envpin: note: waiting for " << who << " writing this project\n";
    noted = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  held()[key_] = {fd, 1};
}

ProjectLock::~ProjectLock() {
  if (key_.empty()) return;
  auto it = held().find(key_);
  if (it == held().end() || --it->second.second > 0) return;
  ::close(it->second.first);  // releases the flock
  held().erase(it);
}

void recover_commit(const fs::path& dir) {
  const fs::path journal = commit_journal(dir);
  std::error_code ec;
  if (!fs::exists(journal, ec)) return;
  const ProjectLock lock(dir);
  io::recover_commit(journal);
}

fs::path shown_path(const fs::path& root, const std::string& rel) {
  return (root == "." ? fs::path(rel) : root / rel).lexically_normal();
}

namespace {

// The table header and name of the entry that holds `line` (1-based) of a lock text.
std::string entry_at(const std::string& text, int line) {
  std::istringstream lines(text);
  std::string l, header = "the top of the file", name;
  for (int n = 1; std::getline(lines, l) && n <= line; ++n) {
    if (l.starts_with("[")) {
      header = l;
      name.clear();
    } else if ((l.starts_with("name = ") || l.starts_with("path = ")) && header.starts_with("[[")) {
      name = l.substr(7);
    }
  }
  return header + (name.empty() ? "" : " " + name);
}

}  // namespace

LockState lock_state(const manifest::Manifest& m, const fs::path& path, const std::string& shown) {
  LockState s;
  const auto text = io::read_file(path);
  if (!text) return s;
  try {
    s.lock = lock::parse(*text, shown);
  } catch (const Error& e) {
    s.kind = LockState::Kind::unreadable;
    s.problem = e.message();
    if (e.where()) s.line = e.where()->line;
    s.unreadable = e;
    return s;
  }
  const lock::Lock& l = *s.lock;
  if (const std::string canonical = lock::to_toml(l); canonical != *text) {
    std::istringstream a(*text), b(canonical);
    std::string la, lb;
    int line = 1;
    while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
    s.kind = LockState::Kind::edited;
    s.line = line;
    s.problem = "not as envpin wrote it: " + entry_at(*text, line) + " was edited";
  } else if (const std::string digest = lock::compute_lock_digest(l); digest != l.lock_digest) {
    s.kind = LockState::Kind::digest;
    s.problem = "content does not match its lock-digest (" + l.lock_digest + " recorded, " + digest +
                " computed): a value was edited after envpin wrote it";
  } else if (std::string problem =
                 lock::requirements_lock_problem(l, io::read_file(path.parent_path() / "requirements.lock"));
             !problem.empty()) {
    s.kind = LockState::Kind::requirements;
    s.problem = std::move(problem) + " (pip installs from it)";
  } else if (l.inputs_digest != lock::inputs_digest(m)) {
    s.kind = LockState::Kind::stale;
    s.problem = m.file + " changed after it was locked";
  } else {
    s.kind = LockState::Kind::ok;
  }
  return s;
}

// envpin.lock next to the manifest, when there is one; it must belong to this manifest.
std::optional<lock::Lock> load_lock(const manifest::Manifest& m, const std::string& given) {
  const fs::path path = given.empty() ? m.project_dir / "envpin.lock" : fs::path(given);
  recover_commit(path.parent_path());
  const std::string shown = given.empty() ? shown_path(m.project_dir, "envpin.lock").generic_string() : given;
  LockState s = lock_state(m, path, shown);
  using Kind = LockState::Kind;
  switch (s.kind) {
    case Kind::absent:
      if (!given.empty())
        throw Error("cannot read the lock " + given, Location{given, 0, 0}, "run 'envpin lock' to create it");
      return std::nullopt;
    case Kind::unreadable:
      throw *s.unreadable;
    case Kind::edited:
    case Kind::digest:
      throw Error(shown + " does not match what envpin wrote: " + s.problem, Location{shown, s.line, s.line ? 1 : 0},
                  "run 'envpin verify' to see what changed, or 'envpin lock' to rewrite it");
    case Kind::requirements: {
      const fs::path req = path.parent_path() / "requirements.lock";
      throw Error(s.problem, Location{req.lexically_normal().generic_string(), 0, 0},
                  "run 'envpin lock' to write both again, or restore them from version control");
    }
    case Kind::stale:
      throw Error(shown + " is stale: " + s.problem, Location{shown, 0, 0},
                  "run 'envpin lock --manifest " + m.file + "' first");
    case Kind::ok:
      break;
  }
  resolve::check_locked_python(m, *s.lock);
  return std::move(s.lock);
}

void require_pinned(const jobs::Project& p) {
  const manifest::Manifest& m = p.m;
  const Plan pinned = plan(m);
  if (!pinned.env.lock)
    throw Error("there is no envpin.lock beside " + m.file + ": jobs run the pinned image", Location{m.file, 0, 0},
                "run 'envpin lock', then 'envpin generate'");
  for (const render::Artifact& a : pinned.artifacts) {
    if (a.names_push || a.path == m.outputs.record.value) continue;  // the push's files; generate's own record
    const auto current = io::read_file(m.project_dir / a.path);
    if (!current || *current != a.bytes)
      throw Error(shown_path(m.project_dir, a.path).generic_string() + " is " + (current ? "out of date" : "missing") +
                      " (it does not match " + m.file + " and envpin.lock)",
                  Location{m.file, 0, 0}, "run 'envpin generate --manifest " + m.file + "'");
  }
  hold_scripts(m, pinned.artifacts);
}

std::filesystem::path hold_scripts(const manifest::Manifest& m, const std::vector<render::Artifact>& planned) {
  const std::filesystem::path state = io::project_state(m.project_dir);
  std::filesystem::path dev;
  for (const render::Artifact& a : planned) {
    if (m.jobs && a.path == m.outputs.run.value) io::hold_file(state, "run.sh", a.bytes);
    if (m.dev && a.path == m.outputs.dev.value) dev = io::hold_file(state, "dev.sh", a.bytes);
  }
  return dev;
}

report::SmokeOptions smoke_options(const manifest::Manifest* m) {
  report::SmokeOptions o;
  o.run_kernel = !m || m->cuda.has_value();
  if (m && render::has_torch(*m)) {
    const fs::path script = m->project_dir / m->outputs.smoke_py.value;
    if (!fs::is_regular_file(script))
      throw diag::Error(shown_path(m->project_dir, m->outputs.smoke_py.value).generic_string() +
                            " is missing: the framework smoke is generated with the other artifacts",
                        diag::Location{m->file, 0, 0}, "run 'envpin generate --manifest " + m->file + "'");
    o.framework = script.string();
  }
  return o;
}

}  // namespace envpin::workflow

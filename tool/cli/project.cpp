// SPDX-License-Identifier: Apache-2.0
#include "cli/project.hpp"

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
#include "lock/lock.hpp"
#include "render/render.hpp"
#include "report/smoke.hpp"
#include "resolve/environment.hpp"

namespace envpin::cli {

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

// envpin.lock next to the manifest, when there is one; it must belong to this manifest.
std::optional<lock::Lock> load_lock(const manifest::Manifest& m, const std::string& given) {
  const fs::path path = given.empty() ? m.project_dir / "envpin.lock" : fs::path(given);
  recover_commit(path.parent_path());
  const auto text = io::read_file(path);
  const std::string shown = given.empty() ? shown_path(m.project_dir, "envpin.lock").generic_string() : given;
  if (!text && !given.empty())
    throw diag::Error("cannot read the lock " + given, diag::Location{given, 0, 0}, "run 'envpin lock' to create it");
  if (!text) return std::nullopt;
  lock::Lock l = lock::parse(*text, shown);
  if (l.inputs_digest != lock::inputs_digest(m))
    throw diag::Error(shown + " is stale: " + m.file + " changed after it was locked", diag::Location{shown, 0, 0},
                      "run 'envpin lock --manifest " + m.file + "' first");
  if (lock::compute_lock_digest(l) != l.lock_digest)
    throw diag::Error(shown + " does not match its lock-digest", diag::Location{shown, 0, 0},
                      "run 'envpin verify' to see what changed, or 'envpin lock' to rewrite it");
  check_requirements_lock(l, path);
  resolve::check_locked_python(m, l);
  return l;
}

void check_requirements_lock(const lock::Lock& l, const fs::path& lock_path) {
  // pip installs from requirements.lock: it must be exactly the lock's wheels.
  const fs::path req = lock_path.parent_path() / "requirements.lock";
  if (const std::string problem = lock::requirements_lock_problem(l, io::read_file(req)); !problem.empty())
    throw diag::Error(problem + " (pip installs from it)",
                      diag::Location{req.lexically_normal().generic_string(), 0, 0},
                      "run 'envpin lock' to write both again, or restore them from version control");
}

void require_pinned(const jobs::Project& p) {
  const manifest::Manifest& m = p.m;
  resolve::Environment env = resolve::resolve(m);
  env.lock = load_lock(m, "");
  if (!env.lock)
    throw Error("there is no envpin.lock beside " + m.file + ": jobs run the pinned image", Location{m.file, 0, 0},
                "run 'envpin lock', then 'envpin generate'");
  for (const render::Artifact& a : render::render_all(m, env)) {
    const auto current = io::read_file(m.project_dir / a.path);
    if (!current || *current != a.bytes)
      throw Error(shown_path(m.project_dir, a.path).generic_string() + " is " + (current ? "out of date" : "missing") +
                      " (it does not match " + m.file + " and envpin.lock)",
                  Location{m.file, 0, 0}, "run 'envpin generate --manifest " + m.file + "'");
  }
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

}  // namespace envpin::cli

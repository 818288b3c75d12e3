// SPDX-License-Identifier: Apache-2.0
#include "io/state_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "pin/sha256.hpp"

namespace envpin::io {
namespace {

namespace fs = std::filesystem;
using diag::Error;

[[noreturn]] void refuse(const fs::path& dir, const std::string& why) {
  throw Error("envpin's state directory '" + dir.generic_string() + "' " + why, std::nullopt,
              "remove it, or point XDG_STATE_HOME at a directory of your own (envpin creates it with mode 700)");
}

}  // namespace

fs::path state_root() {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  if (xdg && *xdg == '/') return fs::path(xdg) / "envpin";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".local/state/envpin";
}

std::string project_path(const fs::path& project_dir) {
  std::string path = fs::absolute(project_dir).lexically_normal().generic_string();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

fs::path project_state(const fs::path& project_dir) {
  return state_root() / "projects" / pin::sha256_hex(project_path(project_dir)).substr(0, 32);
}

void private_state_directory(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) refuse(dir, std::string("cannot be inspected: ") + std::strerror(errno));
    if (dir.has_parent_path() && dir.parent_path() != dir) {
      // The directories above are made as private as the state itself (XDG: 0700).
      std::error_code ec;
      if (!fs::exists(fs::symlink_status(dir.parent_path(), ec))) private_state_directory(dir.parent_path());
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      refuse(dir, std::string("cannot be created: ") + std::strerror(errno));
    if (::lstat(dir.c_str(), &st) != 0) refuse(dir, std::string("cannot be inspected: ") + std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) refuse(dir, "is a symbolic link; envpin keeps its state only in a directory it owns");
  if (!S_ISDIR(st.st_mode)) refuse(dir, "is not a directory");
  if (st.st_uid != ::geteuid()) refuse(dir, "belongs to another user (uid " + std::to_string(st.st_uid) + ")");
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0)
    refuse(dir, std::string("is open to others and cannot be made private: ") + std::strerror(errno));
}

fs::path hold_file(const fs::path& dir, const std::string& name, std::string_view bytes) {
  private_state_directory(dir);
  const fs::path file = dir / name;
  std::string held;
  struct stat st {};
  // Only a regular file of this user's, mode 0500, with exactly these bytes is kept as it is.
  if (read_regular(file, bytes.size(), held) == ReadStatus::ok && held == bytes && ::lstat(file.c_str(), &st) == 0 &&
      st.st_uid == ::geteuid() && (st.st_mode & 07777) == 0500)
    return file;
  const std::string templ = temporary_template(file).string();
  std::string path(templ);
  const int fd = ::mkstemp(path.data());
  if (fd < 0) refuse(dir, std::string("cannot hold '" + name + "': ") + std::strerror(errno));
  bool ok = true;
  for (std::size_t at = 0; ok && at < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) at += static_cast<std::size_t>(n);
  }
  ok = ok && ::fchmod(fd, 0500) == 0 && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(path.c_str(), file.c_str()) != 0) {
    const int e = errno;
    ::unlink(path.c_str());
    refuse(dir, "cannot hold '" + name + "': " + std::strerror(e));
  }
  return file;
}

}  // namespace envpin::io

// SPDX-License-Identifier: Apache-2.0
#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "diag/error.hpp"

namespace envpin::io {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw diag::Error("cannot " + what + " '" + path.generic_string() + "': " + std::strerror(err), std::nullopt,
                    "check that the directory exists and is writable");
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// envpin's temporaries for `target`: .NAME.envpin-XXXXXX beside it (mkstemp's six characters).
constexpr std::string_view kTempInfix = ".envpin-";
std::string temp_prefix(const fs::path& target) { return "." + target.filename().string() + std::string(kTempInfix); }
bool is_temp_of(const fs::path& tmp, const fs::path& target) {
  const std::string prefix = temp_prefix(target), name = tmp.filename().string();
  return tmp.parent_path() == target.parent_path() && name.size() == prefix.size() + 6 && name.starts_with(prefix);
}

// Creates `dir` and its missing parents, adding each directory it made to `made` (outermost
// first), so that a write that fails can take them away again.
void make_directories(const fs::path& dir, std::vector<fs::path>& made) {
  std::vector<fs::path> missing;
  struct stat st {};
  for (fs::path p = dir; !p.empty() && ::lstat(p.c_str(), &st) != 0 && errno == ENOENT; p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) == 0)
      made.push_back(*it);
    else if (errno != EEXIST)
      fail("create directory", *it, errno);
  }
  if (::stat(dir.c_str(), &st) != 0) fail("create directory", dir, errno);
  if (!S_ISDIR(st.st_mode)) fail("create directory", dir, ENOTDIR);
}

// Removes the directories of `made` (innermost first) that are still empty: what a failed
// write created and no longer needs. Another process's files in one keep it.
void remove_made(const std::vector<fs::path>& made) {
  for (auto it = made.rbegin(); it != made.rend(); ++it) ::rmdir(it->c_str());
}

// Writes `bytes` to a new temporary beside `path` (fsync'd, mode set) and returns its name.
// Directories it creates for it are added to `made`.
fs::path write_temp(const fs::path& path, const std::string& bytes, bool executable, std::vector<fs::path>& made) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  make_directories(dir, made);

  std::string tmpl = (dir / (temp_prefix(path) + "XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  Fd file;
  file.fd = ::mkstemp(name.data());
  if (file.fd < 0) fail("create a temporary file in", dir, errno);
  const fs::path tmp(name.data());
  const auto cleanup_fail = [&](const std::string& what, int err) {
    ::unlink(tmp.c_str());
    fail(what, path, err);
  };

  const char* data = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(file.fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      cleanup_fail("write", errno);
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  // Respect the umask like any new file would, adding execute bits where read bits are.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  mode_t mode = 0666 & ~mask;
  if (executable) mode |= (mode & 0444) >> 2;
  if (::fchmod(file.fd, mode) != 0) cleanup_fail("set the mode of", errno);
  if (::fsync(file.fd) != 0) cleanup_fail("flush", errno);
  if (::close(file.fd) != 0) {
    file.fd = -1;
    cleanup_fail("close", errno);
  }
  file.fd = -1;
  return tmp;
}

void sync_dir(const fs::path& path) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  Fd d;
  d.fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (d.fd >= 0) ::fsync(d.fd);  // best effort: the rename itself is already atomic
}

// Only regular files (or nothing) are replaced: a rename over a device node, FIFO or
// directory would destroy something envpin did not write.
void check_replaceable(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISREG(st.st_mode))
    throw diag::Error("refusing to replace '" + path.generic_string() + "': it is not a regular file", std::nullopt,
                      "move it away, or write somewhere else");
}

// Removes the temporaries an interrupted write left beside `path` (.NAME.envpin-XXXXXX).
void remove_stale_temps(const fs::path& path) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_temp_of(e.path().filename(), path.filename()) && e.is_regular_file(ec)) fs::remove(e.path(), ec);
}

// write_atomic, adding the directories it creates to `made`; on failure it removes those again.
void replace(const fs::path& path, const std::string& bytes, bool executable, std::vector<fs::path>& made) {
  const std::size_t before = made.size();
  try {
    check_replaceable(path);
    const fs::path tmp = write_temp(path, bytes, executable, made);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      fail("replace", path, err);
    }
  } catch (...) {
    for (; made.size() > before; made.pop_back()) ::rmdir(made.back().c_str());
    throw;
  }
  sync_dir(path);
}

// The project a journal (ROOT/.envpin/NAME) belongs to.
fs::path journal_root(const fs::path& journal) {
  const fs::path root = journal.parent_path().parent_path();
  return root.empty() ? fs::path(".") : root;
}

}  // namespace

void owned_path(const fs::path& root, const fs::path& path) {
  const fs::path base = (root.empty() ? fs::path(".") : root).lexically_normal();
  const fs::path rel = path.lexically_normal().lexically_relative(base);
  if (rel.empty() || *rel.begin() == ".." || *rel.begin() == ".") return;
  fs::path at = base, shown;
  for (auto it = rel.begin(); it != rel.end(); ++it) {
    at /= *it;
    shown /= *it;
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0) {
      if (errno == ENOENT) return;  // made by the write
      fail("inspect", at, errno);
    }
    const std::string name = (base == "." ? shown : base / shown).generic_string();
    if (S_ISLNK(st.st_mode))
      throw diag::Error("'" + name + "' is a symbolic link; envpin writes into its own files and directories in " +
                            "a project, never through a link",
                        std::nullopt, "remove '" + name + "' (envpin creates it again) and run the command again");
    if (!S_ISDIR(st.st_mode)) return;  // a file where a directory belongs: the write names it
  }
}

void write_atomic(const fs::path& path, const std::string& bytes, bool executable) {
  std::vector<fs::path> made;
  replace(path, bytes, executable, made);
}

void recover_commit(const fs::path& journal) {
  owned_path(journal_root(journal), journal);
  const auto text = read_file(journal);
  if (!text) return;
  // Records are "temporary\0target\0": paths may hold any byte but NUL.
  std::vector<std::string> fields;
  for (std::size_t start = 0; start < text->size();) {
    const std::size_t end = text->find('\0', start);
    if (end == std::string::npos) break;  // a torn last record: the journal itself is written atomically
    fields.push_back(text->substr(start, end - start));
    start = end + 1;
  }
  // A journal is input like any file: only envpin's own temporaries (.NAME.envpin-XXXXXX beside
  // NAME) are renamed, and only onto targets under the directory the journal belongs to.
  const fs::path root = fs::absolute(journal).lexically_normal().parent_path().parent_path();
  const auto ours = [&](const fs::path& tmp, const fs::path& target) {
    const fs::path rel = target.lexically_relative(root);
    return tmp.is_absolute() && target.is_absolute() && is_temp_of(tmp, target) && !rel.empty() && *rel.begin() != "..";
  };
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
    struct stat st {};
    if (!ours(fields[i], fields[i + 1])) continue;
    if (::lstat(fields[i].c_str(), &st) != 0) continue;  // already renamed
    if (::rename(fields[i].c_str(), fields[i + 1].c_str()) != 0) fail("finish replacing", fields[i + 1], errno);
    sync_dir(fields[i + 1]);
  }
  std::error_code ec;
  fs::remove(journal, ec);
  sync_dir(journal);
}

void write_all_atomic(const std::vector<PendingFile>& files, const fs::path& journal) {
  // Before anything is written: no link where envpin writes, the journal's directory included.
  const fs::path root = journal_root(journal);
  for (const PendingFile& f : files) owned_path(root, f.path);
  recover_commit(journal);
  remove_stale_temps(journal);
  for (const PendingFile& f : files) check_replaceable(f.path);
  std::vector<fs::path> temps;
  // The directories this call creates: until the commit point, a failure takes them away with
  // the temporaries, so that a failed write leaves the tree as it found it.
  std::vector<fs::path> made;
  try {
    for (const PendingFile& f : files) {
      remove_stale_temps(f.path);
      temps.push_back(write_temp(f.path, f.bytes, f.executable, made));
    }
    std::string record;
    for (std::size_t i = 0; i < files.size(); ++i) {
      // Absolute: the next command may run from another directory.
      record += fs::absolute(temps[i]).lexically_normal().string() + '\0' +
                fs::absolute(files[i].path).lexically_normal().string() + '\0';
    }
    replace(journal, record, false, made);
  } catch (...) {
    for (const fs::path& t : temps) ::unlink(t.c_str());
    remove_made(made);
    throw;
  }
  // The commit point is behind us: from here on the set is new, now or after recovery.
  recover_commit(journal);
}

bool is_temporary(const fs::path& path) {
  const std::string name = path.filename().string();
  const std::size_t infix = name.size() >= kTempInfix.size() + 6 ? name.size() - kTempInfix.size() - 6 : 0;
  return name.starts_with(".") && infix > 1 && name.compare(infix, kTempInfix.size(), kTempInfix) == 0;
}

fs::path temporary_template(const fs::path& target) { return target.parent_path() / (temp_prefix(target) + "XXXXXX"); }

std::optional<std::string> read_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return std::nullopt;
  // A FIFO would block and a device never end: only regular files are read.
  if (!fs::is_regular_file(st))
    throw diag::Error("cannot read '" + path.generic_string() + "': not a regular file", std::nullopt,
                      "pass a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw diag::Error("cannot read '" + path.generic_string() + "'");
  // One allocation and one read (a 50 MB Packages index in ~20 ms); files whose size the
  // kernel does not know (/proc) are read to their end.
  std::string out;
  const auto size = fs::is_regular_file(path, ec) ? fs::file_size(path, ec) : 0;
  if (!ec && size > 0) {
    out.resize(size);
    in.read(out.data(), static_cast<std::streamsize>(size));
    out.resize(static_cast<std::size_t>(in.gcount()));
  }
  std::ostringstream rest;
  rest << in.rdbuf();
  const std::string tail = rest.str();
  return tail.empty() ? out : out + tail;
}

ReadStatus read_regular(const fs::path& path, std::size_t max, std::string& out) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)};
  if (f.fd < 0)
    return errno == ENOENT ? ReadStatus::missing : errno == ELOOP ? ReadStatus::not_regular : ReadStatus::unreadable;
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return ReadStatus::unreadable;
  if (!S_ISREG(st.st_mode)) return ReadStatus::not_regular;
  if (static_cast<std::uint64_t>(st.st_size) > max) return ReadStatus::too_large;
  out.clear();
  // Read to the end, one byte past `max` at most: a file that grows while it is read is too large.
  std::vector<char> buffer(64 * 1024);
  for (;;) {
    const ssize_t n = ::read(f.fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ReadStatus::unreadable;
    if (n == 0) return ReadStatus::ok;
    out.append(buffer.data(), static_cast<std::size_t>(n));
    if (out.size() > max) return ReadStatus::too_large;
  }
}

void owned_directory(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) fail("inspect", dir, errno);
    if (::mkdir(dir.c_str(), 0777) == 0) return;
    if (errno != EEXIST) fail("create directory", dir, errno);
    if (::lstat(dir.c_str(), &st) != 0) fail("inspect", dir, errno);
  }
  if (S_ISDIR(st.st_mode)) return;
  throw diag::Error(
      "'" + dir.generic_string() + "' is " + (S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory") +
          "; envpin writes only into a directory it made there, never through a link",
      std::nullopt, "remove '" + dir.generic_string() + "' (envpin creates it again) and run the command again");
}

bool copy_regular(const fs::path& from, const fs::path& to, std::uintmax_t max) {
  Fd in{::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)};
  struct stat st {};
  if (in.fd < 0 || ::fstat(in.fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uintmax_t>(st.st_size) > max)
    return false;
  Fd out{::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
  if (out.fd < 0) return false;
  std::vector<char> buffer(256 * 1024);
  std::uintmax_t total = 0;
  bool ok = true;
  for (;;) {
    const ssize_t n = ::read(in.fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    total += static_cast<std::uintmax_t>(n);
    if (total > max) {
      ok = false;
      break;
    }
    for (ssize_t done = 0; ok && done < n;) {
      const ssize_t w = ::write(out.fd, buffer.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        ok = false;
      else
        done += w;
    }
    if (!ok) break;
  }
  if (!ok) ::unlink(to.c_str());
  return ok;
}

fs::path private_directory(const std::string& prefix) {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string name = (base / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) fail("create a directory in", base, errno);
  return name;
}

bool is_executable(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & 0111) != 0;
}

}  // namespace envpin::io

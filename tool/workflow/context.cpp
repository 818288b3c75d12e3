// SPDX-License-Identifier: Apache-2.0
#include "workflow/context.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/libarchive.hpp"
#include "manifest/load.hpp"
#include "pin/sha256.hpp"
#include "scan/ignore.hpp"
#include "scan/send_set.hpp"

namespace envpin::workflow {

namespace fs = std::filesystem;

ContextWritten write_context(const ContextRequest& o, diag::Progress& progress) {
  const manifest::Manifest m = manifest::load(o.manifest);
  const fs::path root = m.project_dir;
  scan::IgnoreRules rules = scan::IgnoreRules::from_file(root / m.outputs.dockerignore.value);
  for (const std::string& p : o.leave_out) rules.add("/" + p);
  const bool to_stdout = o.output == "-";  // `envpin context -o - | docker build -`
  const fs::path output = to_stdout ? fs::path() : fs::absolute(o.output).lexically_normal();
  if (!to_stdout) {
    // -o replaces a tar; never a device, FIFO or directory (as root, /dev/null would become a file).
    std::error_code sec;
    const fs::file_status st = fs::symlink_status(output, sec);
    if (fs::exists(st) && !fs::is_regular_file(st))
      throw diag::Error(
          "cannot write the context to " + diag::quote(o.output) + ": it exists and is not a regular file",
          std::nullopt, "pass a new file name, or '-o -' for standard output");
  }
  scan::SendRules send;
  send.rules = &rules;
  for (const auto& a : m.context_allow_secrets) send.allow_secrets.push_back(a.value);
  send.skip = output;
  send.carrier = "the build context would carry";
  send.hint = "remove it (and rotate it), or add the file to context.exclude in " + m.file;
  std::vector<std::string> paths = scan::send_set(root, send, m.project_dir.generic_string()).paths;

  // Streamed into a temporary file beside the output and hashed on the way; renamed into place
  // only when complete.
  struct Sink {
    int fd = -1;
    pin::Sha256 digest;
    std::uintmax_t bytes = 0;
    bool failed = false;
  } sink;
  std::string temp = to_stdout ? std::string() : io::temporary_template(output).string();
  sink.fd = to_stdout ? STDOUT_FILENO : ::mkstemp(temp.data());
  if (sink.fd < 0)
    throw diag::Error("cannot write " + output.string(), std::nullopt, "check the directory exists and is writable");
  struct Cleanup {
    const std::string& path;
    bool keep = false;
    ~Cleanup() {
      if (!keep && !path.empty()) std::remove(path.c_str());
    }
  } cleanup{temp};
  const io::LibArchive& la = io::libarchive();
  std::unique_ptr<archive, decltype(&archive_write_free)> a(la.write_new(), la.write_free);
  la.write_set_format_pax_restricted(a.get());
  // Output in 1 MiB writes (libarchive's default block is 10 KiB: 100,000 write(2) calls per GiB);
  // the last block is not padded, so the bytes are the same either way.
  la.write_set_bytes_per_block(a.get(), 1 << 20);
  la.write_set_bytes_in_last_block(a.get(), 1);
  const auto write_cb = [](archive*, void* user, const void* buffer, size_t length) -> la_ssize_t {
    auto& s = *static_cast<Sink*>(user);
    const char* p = static_cast<const char*>(buffer);
    for (size_t done = 0; done < length;) {
      const ssize_t n = ::write(s.fd, p + done, length - done);
      if (n <= 0) {
        s.failed = true;
        return -1;
      }
      done += static_cast<size_t>(n);
    }
    s.digest.update(buffer, length);
    s.bytes += length;
    return static_cast<la_ssize_t>(length);
  };
  if (la.write_open(a.get(), &sink, nullptr, write_cb, nullptr) != ARCHIVE_OK)
    throw diag::Error(std::string("cannot start the tar: ") + la.error_string(a.get()));
  std::size_t files = 0;
  constexpr std::size_t kBuffer = 1 << 20;
  const std::unique_ptr<char[]> buffer(new char[kBuffer]);
  for (const std::string& rel : paths) {
    const fs::path full = root / rel;
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) throw diag::Error("cannot stat " + full.string());
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(la.entry_new(), la.entry_free);
    la.entry_set_pathname(e.get(), rel.c_str());
    la.entry_set_uid(e.get(), 0);
    la.entry_set_gid(e.get(), 0);
    la.entry_set_mtime(e.get(), 0, 0);
    bool regular = false;
    if (S_ISLNK(st.st_mode)) {
      la.entry_set_filetype(e.get(), AE_IFLNK);
      la.entry_set_perm(e.get(), 0777);
      la.entry_set_symlink(e.get(), fs::read_symlink(full).generic_string().c_str());
    } else if (S_ISDIR(st.st_mode)) {
      la.entry_set_filetype(e.get(), AE_IFDIR);
      la.entry_set_perm(e.get(), 0755);
    } else if (S_ISREG(st.st_mode)) {
      la.entry_set_filetype(e.get(), AE_IFREG);
      la.entry_set_perm(e.get(), (st.st_mode & 0111) ? 0755 : 0644);  // only the exec bit matters
      la.entry_set_size(e.get(), static_cast<la_int64_t>(st.st_size));
      regular = true;
      ++files;
    } else {
      continue;  // sockets, fifos, devices have no place in a build context
    }
    if (la.write_header(a.get(), e.get()) != ARCHIVE_OK)
      throw diag::Error("cannot add " + rel + " to the tar: " + la.error_string(a.get()));
    if (regular) {  // streamed, 1 MiB at a time, through one buffer
      const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw diag::Error("cannot read " + full.string());
      ssize_t n = 0;
      while ((n = ::read(fd, buffer.get(), kBuffer)) > 0)
        la.write_data(a.get(), buffer.get(), static_cast<std::size_t>(n));
      ::close(fd);
      if (n < 0) throw diag::Error("cannot read " + full.string());
      progress.update("context: " + std::to_string(files) + " files, " + std::to_string(sink.bytes / 1000000) + " MB");
    }
  }
  for (const auto& [rel, bytes] : o.extra) {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(la.entry_new(), la.entry_free);
    la.entry_set_pathname(e.get(), rel.c_str());
    la.entry_set_filetype(e.get(), AE_IFREG);
    la.entry_set_perm(e.get(), 0644);
    la.entry_set_size(e.get(), static_cast<la_int64_t>(bytes.size()));
    if (la.write_header(a.get(), e.get()) != ARCHIVE_OK)
      throw diag::Error("cannot add " + rel + " to the tar: " + la.error_string(a.get()));
    la.write_data(a.get(), bytes.data(), bytes.size());
  }
  progress.done();
  if (la.write_close(a.get()) != ARCHIVE_OK || sink.failed) {
    if (!to_stdout) ::close(sink.fd);
    throw diag::Error(to_stdout ? std::string("cannot write the tar to standard output")
                                : "cannot write " + output.string());
  }
  const ContextWritten written{sink.digest.hex(), files, sink.bytes};
  if (to_stdout) return written;
  if (::fsync(sink.fd) != 0) {
    ::close(sink.fd);
    throw diag::Error("cannot write " + output.string());
  }
  ::fchmod(sink.fd, 0644);
  ::close(sink.fd);
  if (std::rename(temp.c_str(), output.c_str()) != 0) throw diag::Error("cannot write " + output.string());
  cleanup.keep = true;
  return written;
}

}  // namespace envpin::workflow

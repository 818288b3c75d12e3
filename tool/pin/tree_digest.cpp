// SPDX-License-Identifier: Apache-2.0
#include "pin/tree_digest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "diag/error.hpp"
#include "pin/sha256.hpp"

namespace envpin::pin {
namespace {

namespace fs = std::filesystem;

struct Entry {
  std::string path;  // relative, '/' separated
  std::string mode;  // "0644", "0755" or "link"
  std::string target;
  std::string sha256;
  std::uintmax_t size = 0;
};

// Hashes every regular entry with a pool of threads, one file at a time each; the thread that
// hashes a file also opens and fstat's it (its mode and size come from there).
void hash_all(const fs::path& root, std::vector<Entry>& entries, diag::Progress& progress) {
  std::atomic<std::size_t> next{0}, done{0};
  std::atomic<std::uintmax_t> bytes{0};
  std::mutex mutex;
  std::string failure;
  const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 16));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < entries.size(); i = next++) {
        Entry& e = entries[i];
        if (e.mode == "link") continue;
        const fs::path file = root / e.path;
        const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st {};
        try {
          if (fd < 0 || ::fstat(fd, &st) != 0) throw diag::Error("cannot read '" + file.generic_string() + "'");
          e.mode = (st.st_mode & 0111) ? "0755" : "0644";
          e.size = static_cast<std::uintmax_t>(st.st_size);
          if (e.size >= (1u << 20)) ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // not worth a call below
          e.sha256 = sha256_fd(fd, file, st.st_size);
          progress.update(hashing_line(++done, entries.size(), bytes += e.size));
        } catch (const diag::Error& error) {
          const std::lock_guard<std::mutex> lock(mutex);
          if (failure.empty()) failure = error.message();
          next = entries.size();
        }
        if (fd >= 0) ::close(fd);
      }
    });
  for (auto& t : pool) t.join();
  if (!failure.empty()) throw diag::Error(failure);
}

}  // namespace

std::string hashing_line(std::size_t done, std::size_t total, std::uintmax_t bytes) {
  return "hashing: " + std::to_string(done) + " of " + std::to_string(total) + " files, " +
         std::to_string(bytes / 1000000) + " MB";
}

std::string tree_digest(const fs::path& root, std::size_t& files, std::uintmax_t& bytes, diag::Progress& progress) {
  std::vector<Entry> entries;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) throw diag::Error("cannot read " + it->path().string() + ": " + ec.message());
    // The type comes from the directory listing (d_type) where the file system gives it.
    const bool link = it->is_symlink(ec);
    const fs::file_type type = link                      ? fs::file_type::symlink
                               : it->is_regular_file(ec) ? fs::file_type::regular
                                                         : fs::file_type::unknown;
    if (ec) throw diag::Error("cannot read " + it->path().string() + ": " + ec.message());
    if (type != fs::file_type::symlink && type != fs::file_type::regular) continue;  // directories are implied
    Entry e;
    e.path = it->path().lexically_relative(root).generic_string();
    if (type == fs::file_type::symlink) {
      e.mode = "link";
      e.target = fs::read_symlink(it->path()).generic_string();
    }
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.path < b.path; });
  hash_all(root, entries, progress);
  progress.done();
  std::string listing;
  for (const Entry& e : entries) {
    listing += (e.mode == "link" ? sha256_hex(e.target) : e.sha256) + "  " + e.mode + "  " + e.path;
    if (e.mode == "link") listing += " -> " + e.target;
    listing += "\n";
    bytes += e.size;
  }
  files = entries.size();
  return "h1m:" + sha256_hex(listing);
}

}  // namespace envpin::pin

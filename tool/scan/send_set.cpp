// SPDX-License-Identifier: Apache-2.0
#include "scan/send_set.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "secrets/rules.hpp"

namespace envpin::scan {

namespace fs = std::filesystem;

SendSet send_set(const fs::path& root, const SendRules& r, const std::string& shown_root) {
  SendSet out;
  const auto allowed = [&](const std::string& rel) {
    return std::find(r.allow_secrets.begin(), r.allow_secrets.end(), rel) != r.allow_secrets.end();
  };
  const fs::path skip = r.skip.empty() ? fs::path() : fs::absolute(r.skip).lexically_normal();
  // Hard links share an inode: a link to a secret is the secret under another name.
  std::set<std::pair<dev_t, ino_t>> secret_inodes;
  std::vector<std::string> candidates;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::none, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw diag::Error("cannot read " + it->path().string() + ": " + ec.message());
    const std::string rel = it->path().lexically_relative(root).generic_string();
    const bool directory = it->is_directory(ec) && !it->is_symlink(ec);
    if (secrets::is_secret_path(rel) && !allowed(rel)) {
      struct stat st {};
      if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) secret_inodes.emplace(st.st_dev, st.st_ino);
      out.left_out.push_back({rel, directory, "a secret file"});
      continue;
    }
    // envpin's own temporaries, which an interrupted write leaves, are never content.
    if (io::is_temporary(it->path())) {
      out.left_out.push_back({rel, directory, "an envpin temporary file"});
      continue;
    }
    if (!skip.empty() && fs::absolute(it->path()).lexically_normal() == skip) {
      out.left_out.push_back({rel, directory, "the output itself"});
      continue;
    }
    if (r.rules && r.rules->excluded(rel)) {
      out.left_out.push_back({rel, directory, ".dockerignore"});
      // Everything below is left out too, unless a "!" rule takes something back: the walk
      // does not go in (a gitignored dataset of millions of files costs nothing).
      if (directory && !r.rules->may_reinclude_below(rel)) it.disable_recursion_pending();
      continue;
    }
    candidates.push_back(rel);
  }
  std::sort(candidates.begin(), candidates.end());
  // Configuration files that are secret by what they hold (pip.conf with a password in its index
  // URL, a vendored .git/config with a token): read, bounded, before the hard links are judged.
  std::set<std::string> by_content;
  for (const std::string& rel : candidates) {
    if (!secrets::is_secret_by_content(rel) || allowed(rel)) continue;
    struct stat st {};
    if (::lstat((root / rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    std::string text;
    const io::ReadStatus read = io::read_regular(root / rel, secrets::kContentMax, text);
    if (read == io::ReadStatus::missing || (read == io::ReadStatus::ok && !secrets::is_secret_content(rel, text)))
      continue;
    by_content.insert(rel);
    secret_inodes.emplace(st.st_dev, st.st_ino);
  }
  // Before anything is sent: no hard link to a secret, nothing but files, directories and
  // symlinks, and no text file (up to 4 MiB, as scan reads them) that holds a credential.
  for (const std::string& rel : candidates) {
    struct stat st {};
    if (::lstat((root / rel).c_str(), &st) != 0) continue;  // gone since the walk
    if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) {
      out.paths.push_back(rel);
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      out.left_out.push_back({rel, false, "not a regular file"});
      continue;
    }
    if (by_content.count(rel)) {
      out.left_out.push_back({rel, false, "a secret file (credentials in it)"});
      continue;
    }
    if (st.st_nlink > 1 && secret_inodes.count({st.st_dev, st.st_ino})) {
      out.left_out.push_back({rel, false, "a hard link to a secret file"});
      continue;
    }
    out.paths.push_back(rel);
    if (st.st_size > (4 << 20)) continue;
    const auto text = io::read_file(root / rel);
    std::size_t length = 0;
    if (!text || text->find('\0') != std::string::npos) continue;
    if (const std::size_t at = secrets::find_token(*text, length); at != std::string::npos) {
      const int line = 1 + static_cast<int>(std::count(text->begin(), text->begin() + static_cast<long>(at), '\n'));
      const std::size_t bol = text->rfind('\n', at);
      const int column = static_cast<int>(at - (bol == std::string::npos ? 0 : bol + 1)) + 1;
      throw diag::Error(
          "a credential is written in this file, which " + r.carrier,
          diag::Location{(shown_root == "." ? fs::path(rel) : fs::path(shown_root) / rel).generic_string(), line,
                         column},
          r.hint);
    }
  }
  std::sort(out.left_out.begin(), out.left_out.end(),
            [](const LeftOut& a, const LeftOut& b) { return a.path < b.path; });
  return out;
}

std::vector<std::string> rsync_excludes(const SendSet& s) {
  // A directory that holds something sent must stay: its excluded entries go one by one.
  std::set<std::string> needed;
  for (const std::string& p : s.paths)
    for (std::size_t slash = p.find('/'); slash != std::string::npos; slash = p.find('/', slash + 1))
      needed.insert(p.substr(0, slash));
  std::set<std::string> whole;  // directories left out whole
  std::vector<std::string> out;
  for (const LeftOut& l : s.left_out) {
    bool covered = false;
    for (std::size_t slash = l.path.find('/'); slash != std::string::npos && !covered;
         slash = l.path.find('/', slash + 1))
      covered = whole.count(l.path.substr(0, slash)) > 0;
    if (covered || (l.directory && needed.count(l.path))) continue;
    // Under a directory that is sent but nothing in it is (.gitignore's "data/" is
    // .dockerignore's "**/data/**"), everything is left out, files there on the server too.
    const std::size_t slash = l.path.rfind('/');
    const std::string parent = slash == std::string::npos ? "" : l.path.substr(0, slash);
    const bool all_under =
        !parent.empty() && !needed.count(parent) && std::binary_search(s.paths.begin(), s.paths.end(), parent);
    std::string pattern = "/" + (all_under ? parent : l.path);
    std::replace_if(
        pattern.begin(), pattern.end(), [](char c) { return c == '*' || c == '?' || c == '[' || c == '\\'; }, '?');
    if (all_under) {
      whole.insert(parent);
      pattern += "/**";
    } else if (l.directory) {
      whole.insert(l.path);
    }
    out.push_back(pattern);
  }
  return out;
}

}  // namespace envpin::scan

// SPDX-License-Identifier: Apache-2.0
#include "io/gitignore.hpp"

#include <git2.h>

#include <algorithm>
#include <memory>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"

namespace envpin::io {
namespace {

namespace fs = std::filesystem;

// libgit2 keeps global state: initialised once for the process, on first use. Its owner check
// (safe.directory) guards git's config-driven commands; envpin only reads the index and
// .gitignore files, and must work on a checkout mounted into a container under another uid
// (envpin check as the image's user) or run as root over a user's checkout.
void init_libgit2() {
  static const int rc = [] {
    const int n = git_libgit2_init();
    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
    return n;
  }();
  (void)rc;
}

std::string git_error_text() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

constexpr std::size_t kMaxIgnoreBytes = 1 << 20;

// A regular file's bytes, or nothing (absent, a FIFO, a directory, over 1 MiB).
std::optional<std::string> read_small(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec || !fs::is_regular_file(st) || fs::file_size(path, ec) > kMaxIgnoreBytes) return std::nullopt;
  return read_file(path);
}

}  // namespace

std::vector<GitIgnoreFile> gitignore_files(const fs::path& project_dir) {
  init_libgit2();
  std::error_code ec;
  const fs::path project = fs::weakly_canonical(fs::absolute(project_dir, ec), ec);
  git_repository* raw = nullptr;
  const int rc = git_repository_open_ext(&raw, project.c_str(), 0, nullptr);
  std::vector<GitIgnoreFile> out;
  if (rc == GIT_ENOTFOUND || (rc == 0 && git_repository_is_bare(raw))) {
    if (raw) git_repository_free(raw);
    if (auto text = read_small(project / ".gitignore")) out.push_back({".gitignore", "", "", std::move(*text)});
    return out;
  }
  if (rc != 0)
    throw diag::Error("cannot read the git repository around " + project.generic_string() + ": " + git_error_text(),
                      std::nullopt, "repair it, or set context.include_gitignored: true to not read .gitignore");
  const std::unique_ptr<git_repository, decltype(&git_repository_free)> repo(raw, git_repository_free);
  const fs::path root = fs::weakly_canonical(git_repository_workdir(repo.get()), ec);
  const fs::path inside = project.lexically_relative(root);  // "." or "examples/x"
  if (inside.empty() || *inside.begin() == "..") {
    // Not below the work tree as the paths read (a symlink in between): the project's own file.
    if (auto text = read_small(project / ".gitignore")) out.push_back({".gitignore", "", "", std::move(*text)});
    return out;
  }

  // The directories from the work tree's root down to the project: their .gitignore files
  // apply to it too (git reads each directory's own file).
  if (inside != ".") {
    const std::vector<fs::path> parts(inside.begin(), inside.end());
    fs::path dir = root;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      fs::path rest;
      std::string shown;
      for (std::size_t j = i; j < parts.size(); ++j) {
        rest /= parts[j];
        shown += "../";
      }
      if (auto text = read_small(dir / ".gitignore")) out.push_back({shown + ".gitignore", "", rest.generic_string(), std::move(*text)});
      dir /= parts[i];
    }
  }

  git_index* index_raw = nullptr;
  if (git_repository_index(&index_raw, repo.get()) != 0)
    throw diag::Error("cannot read the git index of " + root.generic_string() + ": " + git_error_text(), std::nullopt,
                      "repair it, or set context.include_gitignored: true to not read .gitignore");
  const std::unique_ptr<git_index, decltype(&git_index_free)> index(index_raw, git_index_free);
  const std::string base = inside == "." ? "" : inside.generic_string() + "/";
  std::vector<GitIgnoreFile> own;
  for (std::size_t i = 0, n = git_index_entrycount(index.get()); i < n; ++i) {
    const git_index_entry* e = git_index_get_byindex(index.get(), i);
    const std::string path = e->path;
    if (!path.starts_with(base)) continue;
    const std::string rel = path.substr(base.size());
    if (rel != ".gitignore" && !rel.ends_with("/.gitignore")) continue;
    if (auto text = read_small(project / rel))
      own.push_back({rel, rel.substr(0, rel.size() - std::string(".gitignore").size()), "", std::move(*text)});
  }
  // The project's own .gitignore counts even before it is committed.
  if (std::none_of(own.begin(), own.end(), [](const GitIgnoreFile& f) { return f.prefix.empty(); }))
    if (auto text = read_small(project / ".gitignore")) own.push_back({".gitignore", "", "", std::move(*text)});
  std::sort(own.begin(), own.end(), [](const GitIgnoreFile& a, const GitIgnoreFile& b) { return a.path < b.path; });
  out.insert(out.end(), own.begin(), own.end());
  return out;
}

}  // namespace envpin::io

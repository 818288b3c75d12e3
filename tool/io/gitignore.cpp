// SPDX-License-Identifier: Apache-2.0
#include "io/gitignore.hpp"

#include <git2.h>

#include <algorithm>
#include <memory>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "io/shared_library.hpp"

namespace envpin::io {
namespace {

namespace fs = std::filesystem;

// libgit2, loaded on first use (io/shared_library.hpp says why), each member with the type
// git2.h declares for it. libgit2 keeps global state: initialised once for the process. Its
// owner check (safe.directory) guards git's config-driven commands; envpin only reads the index
// and .gitignore files, and must work on a checkout mounted into a container under another uid
// (envpin check as the image's user) or run as root over a user's checkout.
struct Git {
  SharedLibrary lib{ENVPIN_LIBGIT2_SONAME, ENVPIN_LIBGIT2_PACKAGE};
#define ENVPIN_GIT_FN(name) decltype(&::git_##name) name = lib.function<decltype(::git_##name)>("git_" #name)
  ENVPIN_GIT_FN(libgit2_init);
  ENVPIN_GIT_FN(libgit2_opts);
  ENVPIN_GIT_FN(error_last);
  ENVPIN_GIT_FN(repository_open_ext);
  ENVPIN_GIT_FN(repository_is_bare);
  ENVPIN_GIT_FN(repository_free);
  ENVPIN_GIT_FN(repository_workdir);
  ENVPIN_GIT_FN(repository_index);
  ENVPIN_GIT_FN(index_free);
  ENVPIN_GIT_FN(index_entrycount);
  ENVPIN_GIT_FN(index_get_byindex);
#undef ENVPIN_GIT_FN
  Git() {
    libgit2_init();
    libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
  }
};

const Git& git() {
  static const Git api;
  return api;
}

std::string git_error_text() {
  const git_error* e = git().error_last();
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

// Whether `dir` or a directory above it has a .git entry: without one, no work tree holds the
// project and libgit2 is not started at all. (Starting it costs more than all of generate: its
// TLS backend parses the system's whole CA bundle, ~56 M instructions, whether or not anything
// is fetched.) With one, libgit2 decides (a file system boundary, a broken .git ...).
bool may_be_in_work_tree(const fs::path& dir) {
  std::error_code ec;
  for (fs::path d = dir;; d = d.parent_path()) {
    if (fs::exists(fs::symlink_status(d / ".git", ec))) return true;
    if (d == d.parent_path()) return false;
  }
}

}  // namespace

std::vector<GitIgnoreFile> gitignore_files(const fs::path& project_dir) {
  std::error_code ec;
  const fs::path project = fs::weakly_canonical(fs::absolute(project_dir, ec), ec);
  std::vector<GitIgnoreFile> out;
  if (!may_be_in_work_tree(project)) {
    if (auto text = read_small(project / ".gitignore")) out.push_back({".gitignore", "", "", std::move(*text)});
    return out;
  }
  const Git& g = git();
  git_repository* raw = nullptr;
  const int rc = g.repository_open_ext(&raw, project.c_str(), 0, nullptr);
  if (rc == GIT_ENOTFOUND || (rc == 0 && g.repository_is_bare(raw))) {
    if (raw) g.repository_free(raw);
    if (auto text = read_small(project / ".gitignore")) out.push_back({".gitignore", "", "", std::move(*text)});
    return out;
  }
  if (rc != 0)
    throw diag::Error("cannot read the git repository around " + project.generic_string() + ": " + git_error_text(),
                      std::nullopt, "repair it, or set context.include_gitignored: true to not read .gitignore");
  const std::unique_ptr<git_repository, decltype(&::git_repository_free)> repo(raw, g.repository_free);
  const fs::path root = fs::weakly_canonical(g.repository_workdir(repo.get()), ec);
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
      if (auto text = read_small(dir / ".gitignore"))
        out.push_back({shown + ".gitignore", "", rest.generic_string(), std::move(*text)});
      dir /= parts[i];
    }
  }

  git_index* index_raw = nullptr;
  if (g.repository_index(&index_raw, repo.get()) != 0)
    throw diag::Error("cannot read the git index of " + root.generic_string() + ": " + git_error_text(), std::nullopt,
                      "repair it, or set context.include_gitignored: true to not read .gitignore");
  const std::unique_ptr<git_index, decltype(&::git_index_free)> index(index_raw, g.index_free);
  const std::string base = inside == "." ? "" : inside.generic_string() + "/";
  std::vector<GitIgnoreFile> own;
  for (std::size_t i = 0, n = g.index_entrycount(index.get()); i < n; ++i) {
    const git_index_entry* e = g.index_get_byindex(index.get(), i);
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

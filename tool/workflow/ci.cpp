// SPDX-License-Identifier: Apache-2.0
#include "workflow/ci.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <system_error>

#include "diag/cursor.hpp"
#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "manifest/load.hpp"
#include "workflow/project.hpp"

namespace envpin::workflow {

namespace fs = std::filesystem;
using diag::Error;

namespace {

bool url_ok(const std::string& u) {
  return (u.starts_with("https://") || u.starts_with("http://")) && u.size() <= 2048 &&
         diag::only_ascii(u, "-._~:/?#[]@!&()*+,;=%");  // no quote, '$', '`', '\', space or control
}

// The URL's authority (RFC 3986: from "//" to the first '/', '?' or '#'): user:password@ or user@
// in it is a credential.
std::string authority(const std::string& u) {
  const std::size_t start = u.find("//") + 2;
  const std::size_t end = u.find_first_of("/?#", start);
  return u.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

bool word_ok(const std::string& w, std::size_t most) {
  return !w.empty() && w.size() <= most && w.front() != '-' && diag::only_ascii(w, "_.-");
}

constexpr const char* kGitlabMain = ".gitlab-ci.yml";
constexpr const char* kGitlabInclude = ".envpin/gitlab-ci.yml";
// A project's .gitlab-ci.yml is read for the note only; no real one is near this.
constexpr std::size_t kMostMainBytes = 4 << 20;

void check_values(const render::CiOptions& c) {
  if (!url_ok(c.deb_url))
    throw Error("--deb must be the http(s) URL of envpin's .deb, found " + diag::quote(c.deb_url), std::nullopt,
                "for example --deb https://example.org/envpin_0.1.0_amd64.deb (no quotes, spaces or shell characters)");
  if (const std::string a = authority(c.deb_url); a.find('@') != std::string::npos) {
    // The credentials are not repeated: the message may land in a CI log.
    const std::string shown = c.deb_url.substr(0, c.deb_url.find("//") + 2) + "...@" + a.substr(a.rfind('@') + 1);
    throw Error("--deb must not carry credentials (user:password@ or user@ in " + diag::quote(shown) +
                    "): the pipeline file is committed, and everyone who reads the repository reads them",
                std::nullopt,
                "publish the .deb where the runner downloads it without a login (a release asset) and pass that URL");
  }
  if (c.deb_sha256.size() != 64 || !std::all_of(c.deb_sha256.begin(), c.deb_sha256.end(),
                                                [](char ch) { return diag::is_digit(ch) || (ch >= 'a' && ch <= 'f'); }))
    throw Error("--deb-sha256 must be the .deb's sha256, 64 lower-case hex digits, found " + diag::quote(c.deb_sha256),
                std::nullopt, "sha256sum envpin_0.1.0_amd64.deb prints it");
  if (!c.gpu_runner.empty() && !word_ok(c.gpu_runner, 100))
    throw Error("--gpu-runner must be a runner label, found " + diag::quote(c.gpu_runner), std::nullopt,
                "use letters, digits, '_', '.' and '-', as the runner's labels are written");
  for (const std::string* s : {&c.user_secret, &c.password_secret})
    if (!word_ok(*s, 100) || s->find_first_of(".-") != std::string::npos || diag::is_digit(s->front()))
      throw Error("a secret's name must be a variable name, found " + diag::quote(*s), std::nullopt,
                  "use letters, digits and '_', as the CI's secret store names it");
}

// Throws diag::Error when a directory on the way from `root` to `rel` is a link or not a
// directory, or `rel` is there as anything but a regular file: envpin ci writes into directories it
// owns (.github/workflows, .envpin), never through a link planted there, and replaces a file, never
// a link in its place. What is not there yet is created by the write.
void check_owned(const fs::path& root, const std::string& rel) {
  fs::path at = root, shown;
  const fs::path path(rel);
  for (auto it = path.begin(); it != path.end(); ++it) {
    at /= *it;
    shown /= *it;
    const bool file = std::next(it) == path.end();
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(at, ec);
    if (st.type() == fs::file_type::not_found) return;
    const std::string name = shown_path(root, shown.generic_string()).generic_string();
    if (ec) throw Error("cannot inspect " + diag::quote(name) + ": " + ec.message());
    if (fs::is_symlink(st))
      throw Error(diag::quote(name) + " is a symbolic link; envpin ci writes " +
                      (file ? "its own file, never one reached through a link"
                            : "only into a directory, never through a link") +
                      "; nothing was written",
                  std::nullopt,
                  "remove " + diag::quote(name) + " (envpin ci creates it again) and run envpin ci again");
    if (file ? !fs::is_regular_file(st) : !fs::is_directory(st))
      throw Error(diag::quote(name) + " is not a " + (file ? "regular file" : "directory") + "; nothing was written",
                  std::nullopt, "remove " + diag::quote(name) + " and run envpin ci again");
  }
}

// Does `c` end a YAML scalar on this side (so a match inside a longer path, or a '#x' one, is not it)?
bool before_scalar(char c) { return std::string_view(" \t\"'[{,:").find(c) != std::string_view::npos; }
bool after_scalar(char c) { return std::string_view(" \t\"']},").find(c) != std::string_view::npos; }

// `line` without its comment: from a '#' at its start or after a space or tab, outside quotes.
std::string_view without_comment(std::string_view line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == '"' && c == '\\') {
      ++i;  // an escape in a double-quoted scalar
    } else if (quote) {
      if (c == quote) quote = 0;  // '' in a single-quoted scalar closes and reopens: the same
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return line.substr(0, i);
    }
  }
  return line;
}

}  // namespace

bool names_outside_comments(const std::string& text, const std::string& include) {
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find_first_of("\r\n", start);
    if (end == std::string::npos) end = text.size();
    const std::string_view code = without_comment(std::string_view(text).substr(start, end - start));
    for (std::size_t at = code.find(include); at != std::string_view::npos; at = code.find(include, at + 1)) {
      std::size_t from = at;
      if (from > 0 && code[from - 1] == '/') --from;  // "/.envpin/gitlab-ci.yml": from the project's root
      const std::size_t after = at + include.size();
      if ((from == 0 || before_scalar(code[from - 1])) && (after == code.size() || after_scalar(code[after])))
        return true;
    }
    start = end + 1;
  }
  return false;
}

CiWritten write_ci(const CiRequest& o, std::ostream& waiting) {
  const render::CiOptions& c = o.options;
  check_values(c);
  const manifest::Manifest m = manifest::load(o.manifest);
  const fs::path root = m.project_dir;
  const ProjectLock lock(root, &waiting);
  std::vector<render::Artifact> files = render::ci(m, c);
  CiWritten out;
  if (!c.github) {
    const fs::path main = root / kGitlabMain;
    std::error_code ec;
    if (fs::symlink_status(main, ec).type() == fs::file_type::not_found) {
      files.push_back({kGitlabMain,
                       "# The project's GitLab pipeline; envpin's jobs come from the file it includes (envpin ci "
                       "--gitlab).\ninclude:\n  - local: " +
                           std::string(kGitlabInclude) + "\n",
                       false});
    } else {
      // The project's own pipeline is never written; read (not through a link) for the note only.
      std::string text;
      const std::string add = std::string("add 'include: [{local: ") + kGitlabInclude + "}]' to it";
      if (io::read_regular(main, kMostMainBytes, text) != io::ReadStatus::ok)
        out.note = std::string(kGitlabMain) + " is not a regular file envpin reads; if it does not include " +
                   kGitlabInclude + ", " + add;
      else if (names_outside_comments(text, kGitlabInclude))
        out.note.clear();  // named where GitLab reads it
      else if (text.find(kGitlabInclude) != std::string::npos)
        out.note = std::string(kGitlabMain) + " names " + kGitlabInclude +
                   " only in a comment, so it does not include envpin's jobs: " + add;
      else
        out.note = std::string(kGitlabMain) + " does not include envpin's jobs: " + add;
    }
  }
  // The journal too: the write goes through it.
  check_owned(root, commit_journal(fs::path()).generic_string());
  std::vector<io::PendingFile> writes;
  std::vector<std::string> foreign;
  for (const auto& f : files) {
    check_owned(root, f.path);
    const auto current = io::read_file(root / f.path);
    const bool changed = !current || *current != f.bytes;
    out.files.push_back(shown_path(root, f.path).generic_string());
    out.changed.push_back(changed);
    if (!changed) continue;
    if (current && !o.force && !current->starts_with(kCiMarker)) foreign.push_back(out.files.back());
    writes.push_back({root / f.path, f.bytes, false});
  }
  if (!foreign.empty())
    throw Error(diag::quote(foreign.front()) +
                    (foreign.size() > 1 ? " (and " + std::to_string(foreign.size() - 1) + " more)" : std::string()) +
                    " was not written by envpin ci: its first line is not the header envpin ci writes; nothing was "
                    "written",
                diag::Location{foreign.front(), 0, 0}, "move your file away, or pass --force to replace it");
  if (!writes.empty()) io::write_all_atomic(writes, commit_journal(root));
  return out;
}

}  // namespace envpin::workflow

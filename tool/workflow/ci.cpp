// SPDX-License-Identifier: Apache-2.0
#include "workflow/ci.hpp"

#include <algorithm>

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

bool word_ok(const std::string& w, std::size_t most) {
  return !w.empty() && w.size() <= most && w.front() != '-' && diag::only_ascii(w, "_.-");
}

constexpr const char* kGitlabMain = ".gitlab-ci.yml";
constexpr const char* kGitlabInclude = ".envpin/gitlab-ci.yml";

}  // namespace

CiWritten write_ci(const CiRequest& o, std::ostream& waiting) {
  const render::CiOptions& c = o.options;
  if (!url_ok(c.deb_url))
    throw Error("--deb must be the http(s) URL of envpin's .deb, found " + diag::quote(c.deb_url), std::nullopt,
                "for example --deb https://example.org/envpin_0.1.0_amd64.deb (no quotes, spaces or shell characters)");
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
  const manifest::Manifest m = manifest::load(o.manifest);
  const fs::path root = m.project_dir;
  const ProjectLock lock(root, &waiting);
  std::vector<render::Artifact> files = render::ci(m, c);
  CiWritten out;
  if (!c.github) {
    const auto main = io::read_file(root / kGitlabMain);
    if (!main)
      files.push_back({kGitlabMain,
                       "# The project's GitLab pipeline; envpin's jobs come from the file it includes (envpin ci "
                       "--gitlab).\ninclude:\n  - local: " +
                           std::string(kGitlabInclude) + "\n",
                       false});
    else if (main->find(kGitlabInclude) == std::string::npos)
      out.note = std::string(kGitlabMain) +
                 " does not include envpin's jobs: add 'include: [{local: " + kGitlabInclude + "}]' to it";
  }
  std::vector<io::PendingFile> writes;
  for (const auto& f : files) {
    const auto current = io::read_file(root / f.path);
    const bool changed = !current || *current != f.bytes;
    out.files.push_back(shown_path(root, f.path).generic_string());
    out.changed.push_back(changed);
    if (changed) writes.push_back({root / f.path, f.bytes, false});
  }
  if (!writes.empty()) io::write_all_atomic(writes, commit_journal(root));
  return out;
}

}  // namespace envpin::workflow

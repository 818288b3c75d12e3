// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "diag/text.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"
#include "secrets/rules.hpp"

namespace envpin::render {

namespace {

// The project's patterns after the template's fixed ones, comment lines included, in order.
std::vector<std::string> pattern_lines(const manifest::Manifest& m, const resolve::Environment& env) {
  std::vector<std::string> lines;
  // The jobs' checkpoint and log directories, when they are inside the project: large, and
  // never part of the image.
  if (m.jobs) {
    std::vector<std::string> dirs;
    for (const auto* dir : {&m.jobs->checkpoints_host, &m.jobs->logs})
      if (!std::filesystem::path(dir->value).is_absolute() && dir->value != "checkpoints") dirs.push_back(dir->value);
    if (!dirs.empty())
      lines.push_back("# The jobs' checkpoints and logs (jobs in " + diag::printable(manifest_name(m)) + ").");
    lines.insert(lines.end(), dirs.begin(), dirs.end());
  }
  // What git ignores (data, build output, local files) stays out of the context too, translated
  // from each .gitignore (see manifest/gitignore.hpp); context.include_gitignored turns it off.
  bool gitignored = false;
  for (const auto& [file, patterns] : m.gitignore) {
    if (patterns.empty()) continue;
    lines.push_back("# Ignored by git (" + diag::printable(file) + "); context.include_gitignored: true sends them.");
    lines.insert(lines.end(), patterns.begin(), patterns.end());
    gitignored = true;
  }
  // The files the Dockerfile copies are sent even when git ignores them.
  if (gitignored && m.python && (!m.python->packages.empty() || m.python->requirements)) {
    const bool locked = env.lock && !env.lock->python.empty();
    if (locked || m.python->requirements) {
      lines.push_back("# The Dockerfile copies it.");
      lines.push_back("!" + (locked ? std::string("requirements.lock") : m.python->requirements->value));
    }
  }
  if (!m.context_exclude.empty())
    lines.push_back("# From context.exclude in " + diag::printable(manifest_name(m)) + ".");
  for (const auto& e : m.context_exclude) lines.push_back(e.value);
  lines.insert(lines.begin(), {"# envpin's own temporary files (left by an interrupted write).", "**/.*.envpin-*"});
  // The secrets last: docker applies the last matching pattern, so no '!' pattern above can
  // bring one back. Docker matches case-sensitively; the rules are written for any case.
  lines.push_back("# Secrets: never part of a build context, at any depth and in any letter case. They come");
  lines.push_back("# after every other pattern, so no '!' pattern above can bring one back.");
  for (std::string_view p : secrets::patterns()) lines.push_back(secrets::any_case(p));
  if (!m.context_allow_secrets.empty())
    lines.push_back("# Allowed by context.allow_secrets in " + diag::printable(manifest_name(m)) + ".");
  for (const auto& a : m.context_allow_secrets) lines.push_back("!" + a.value);
  return lines;
}

}  // namespace

Artifact dockerignore(const manifest::Manifest& m, const resolve::Environment& env) {
  Fields d;
  d.text("manifest_name", manifest_name(m));
  // One list, comment lines included (an empty mustache section would leave a blank line).
  const std::vector<std::string> lines = pattern_lines(m, env);
  // .dockerignore has no quoting: each line is a pattern, and the loader allows no control
  // character in one, so a line stays one line (Code::word would refuse the glob characters).
  std::vector<Code> patterns;
  for (const auto& l : lines) patterns.push_back(Code::pattern_line(l));
  d.codes("excludes", patterns);
  std::vector<Code> copied = {Code::word(m.outputs.check_env.value, "._-+@/")};
  for (const Artifact& a : smoke(m, env)) copied.push_back(Code::word(a.path, "._-+@/"));
  d.codes("copied", copied);
  return {m.outputs.dockerignore.value, render_template("dockerignore.mustache", d), false};
}

Artifact rsync_exclude(const manifest::Manifest& m, const resolve::Environment& env) {
  // .dockerignore's patterns as rsync filter rules. Docker lets the last matching pattern win,
  // rsync the first: the order is reversed, so the secrets come first and nothing can bring one
  // back. A docker pattern is anchored at the context root unless it starts with "**/", which
  // rsync writes as an unanchored pattern (it then matches at any depth).
  // Read from the rendered .dockerignore itself: one source of truth for both.
  std::vector<std::string> docker;
  std::istringstream in(dockerignore(m, env).bytes);
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && !l.starts_with("#")) docker.push_back(l);
  std::vector<Code> rules;
  for (auto it = docker.rbegin(); it != docker.rend(); ++it) {
    std::string p = *it;
    const bool include = p.starts_with("!");
    if (include) p.erase(0, 1);
    p = p.starts_with("**/") ? p.substr(3) : "/" + p;
    // The secrets go whatever else says; context.allow_secrets is for the build context only.
    if (include && std::any_of(m.context_allow_secrets.begin(), m.context_allow_secrets.end(),
                               [&](const auto& a) { return "/" + a.value == p; }))
      continue;
    rules.push_back(Code::pattern_line((include ? "+ " : "- ") + p));
  }
  Fields d;
  d.text("manifest_name", manifest_name(m));
  d.codes("rules", rules);
  return {m.outputs.rsync_exclude.value, render_template("rsync-exclude.mustache", d), false};
}

}  // namespace envpin::render

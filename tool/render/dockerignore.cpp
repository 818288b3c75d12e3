// SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include "render/render.hpp"
#include "render/templates.hpp"

namespace envpin::render {

Artifact dockerignore(const manifest::Manifest& m, const resolve::Environment&) {
  Data d;
  d.set("manifest_name", manifest_name(m));
  // One list, comment lines included (an empty mustache section would leave a blank line).
  std::vector<std::string> lines;
  // The jobs' checkpoint and log directories, when they are inside the project: large, and
  // never part of the image.
  if (m.jobs) {
    std::vector<std::string> dirs;
    for (const auto* dir : {&m.jobs->checkpoints_host, &m.jobs->logs})
      if (!std::filesystem::path(dir->value).is_absolute() && dir->value != "checkpoints") dirs.push_back(dir->value);
    if (!dirs.empty()) lines.push_back("# The jobs' checkpoints and logs (jobs in " + manifest_name(m) + ").");
    lines.insert(lines.end(), dirs.begin(), dirs.end());
  }
  if (!m.context_exclude.empty()) lines.push_back("# From context.exclude in " + manifest_name(m) + ".");
  for (const auto& e : m.context_exclude) lines.push_back(e.value);
  d.set("excludes", list_of(lines));
  d.set("check_env_path", m.outputs.check_env.value);
  return {m.outputs.dockerignore.value, render_template("dockerignore.mustache", d), false};
}

}  // namespace envpin::render

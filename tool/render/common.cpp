// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <filesystem>

#include "render/render.hpp"

namespace envpin::render {

std::string manifest_name(const manifest::Manifest& m) {
  return std::filesystem::path(m.file).filename().generic_string();
}

std::vector<Artifact> render_all(const manifest::Manifest& m, const resolve::Environment& env) {
  std::vector<Artifact> out = {dockerfile(m, env), devcontainer(m, env), check_env(m, env),
                               dockerignore(m, env), cmake_fragment(m, env)};
  for (Artifact& a : jobs(m, env)) out.push_back(std::move(a));
  std::sort(out.begin(), out.end(), [](const Artifact& a, const Artifact& b) { return a.path < b.path; });
  return out;
}

}  // namespace envpin::render

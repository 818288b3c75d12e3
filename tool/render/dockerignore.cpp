// SPDX-License-Identifier: Apache-2.0
#include "render/render.hpp"
#include "render/templates.hpp"

namespace envpin::render {

Artifact dockerignore(const manifest::Manifest& m, const resolve::Environment&) {
  Data d;
  d.set("manifest_name", manifest_name(m));
  std::vector<std::string> excludes;
  for (const auto& e : m.context_exclude) excludes.push_back(e.value);
  d.set("excludes_header", !excludes.empty());
  d.set("excludes", list_of(excludes));
  d.set("check_env_path", m.outputs.check_env.value);
  return {m.outputs.dockerignore.value, render_template("dockerignore.mustache", d), false};
}

}  // namespace envpin::render

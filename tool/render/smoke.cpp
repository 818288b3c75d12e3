// SPDX-License-Identifier: Apache-2.0
// The smoke artifacts: envpin's CUDA smoke program for the Dockerfile's smoke stage (the same
// bytes the CMake smoke target compiles, embedded from cmake/smoke/) and the framework smoke.
#include "render/render.hpp"
#include "render/templates.hpp"

namespace envpin::render {

bool has_torch(const manifest::Manifest& m) {
  for (const auto& a : m.apt)
    if (a.value.name == "python3-torch") return true;
  if (!m.python) return false;
  for (const auto* list : {&m.python->packages, &m.python->requirement_lines})
    for (const auto& r : *list)
      if (r.value.normalized == "torch") return true;
  return false;
}

std::vector<Artifact> smoke(const manifest::Manifest& m, const resolve::Environment& env) {
  std::vector<Artifact> out;
  if (env.cuda) {
    out.push_back({m.outputs.smoke_source.value, std::string(template_text("envpin_smoke.cu")), false});
    out.push_back({m.outputs.smoke_header.value, std::string(template_text("envpin_smoke_sha256.h")), false});
  }
  if (has_torch(m)) {
    Fields f;
    f.text("manifest_name", manifest_name(m));
    out.push_back({m.outputs.smoke_py.value, render_template("smoke.py.mustache", f), false});
  }
  return out;
}

}  // namespace envpin::render

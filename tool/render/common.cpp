// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "manifest/keys.hpp"
#include "pin/sha256.hpp"
#include "render/render.hpp"

namespace envpin::render {

std::string manifest_name(const manifest::Manifest& m) {
  return std::filesystem::path(m.file).filename().generic_string();
}

Artifact generated_record(const manifest::Manifest& m, const std::vector<Artifact>& artifacts) {
  nlohmann::json files = nlohmann::json::object();
  for (const Artifact& a : artifacts) files[a.path] = "sha256:" + pin::sha256_hex(a.bytes);
  nlohmann::json j = {{"generated-by", "envpin generate"}, {"manifest", manifest_name(m)}, {"files", files}};
  return {m.outputs.record.value, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", false};
}

std::vector<Artifact> render_all(const manifest::Manifest& m, const resolve::Environment& env) {
  std::vector<Artifact> out = {dockerfile(m, env),   devcontainer(m, env),   check_env(m, env),
                               dockerignore(m, env), cmake_fragment(m, env), rsync_exclude(m, env)};
  for (Artifact& a : smoke(m, env)) out.push_back(std::move(a));
  for (Artifact& a : requirements_layers(m, env)) out.push_back(std::move(a));
  const std::string image = job_image(m, out[0], dockerfile_inputs(m, env, out[2]));
  for (Artifact& a : jobs(m, image)) out.push_back(std::move(a));
  for (Artifact& a : dev(m, image)) out.push_back(std::move(a));
  for (Artifact& a : kubernetes(m, env)) out.push_back(std::move(a));
  for (Artifact& a : pushed_scripts(m, env)) out.push_back(std::move(a));
  out.push_back({m.outputs.schema.value, manifest::json_schema(), false});
  out.push_back(generated_record(m, out));
  std::sort(out.begin(), out.end(), [](const Artifact& a, const Artifact& b) { return a.path < b.path; });
  return out;
}

}  // namespace envpin::render

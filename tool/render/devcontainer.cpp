// SPDX-License-Identifier: Apache-2.0
#include <nlohmann/json.hpp>

#include <filesystem>

#include "render/code.hpp"
#include "render/render.hpp"

namespace envpin::render {

Artifact devcontainer(const manifest::Manifest& m, const resolve::Environment& env) {
  namespace fs = std::filesystem;
  // Paths in devcontainer.json are relative to the folder holding it.
  const fs::path folder = fs::path(m.outputs.devcontainer.value).parent_path();
  auto relative = [&](const std::string& to) {
    fs::path rel = fs::path(to).lexically_relative(folder.empty() ? fs::path(".") : folder).lexically_normal();
    std::string text = rel.generic_string();
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    return text.empty() ? std::string(".") : text;
  };

  // nlohmann::json keeps object keys sorted, so the output never depends on insertion order.
  nlohmann::json j;
  j["name"] = m.name.value;
  j["build"] = {{"dockerfile", relative(m.outputs.dockerfile.value)}, {"context", relative(".")}};
  // The manifest's platform, whatever the laptop is (one platform: a multi-platform manifest
  // leaves the choice to the engine, which takes the host's).
  if (env.platforms.size() == 1) j["build"]["options"] = nlohmann::json::array({"--platform=" + env.platforms.front()});
  j["workspaceFolder"] = m.workdir.value;
  // A mount string is comma-separated key=value pairs with no quoting: the workdir must be a
  // plain path word (the loader allows no ',' or '='; Code::word checks again).
  j["workspaceMount"] =
      "source=${localWorkspaceFolder},target=" + Code::word(m.workdir.value, "._-+@/").text() + ",type=bind";
  j["remoteUser"] = m.user.name.value;

  nlohmann::json container_env = nlohmann::json::object();
  for (const auto& e : m.env) container_env[e.name.value] = e.value.value;
  // Secrets come from the developer's own environment when the container starts; never baked.
  for (const auto& s : m.secrets) container_env[s.value] = "${localEnv:" + s.value + "}";
  if (!container_env.empty()) j["containerEnv"] = container_env;

  std::string check = "envpin-check-env";
  switch (m.devcontainer.gpu.value) {
    case manifest::GpuRequirement::required:
      j["hostRequirements"] = {{"gpu", true}};
      j["runArgs"] = {"--gpus", "all"};
      break;
    case manifest::GpuRequirement::optional:
      j["hostRequirements"] = {{"gpu", "optional"}};
      check += " --allow-no-gpu";
      break;
    case manifest::GpuRequirement::none:
      if (m.cuda) check += " --allow-no-gpu";
      break;
  }
  j["postCreateCommand"] = check;

  if (!m.devcontainer.forward_ports.empty()) {
    nlohmann::json ports = nlohmann::json::array();
    for (const auto& p : m.devcontainer.forward_ports) ports.push_back(p.value);
    j["forwardPorts"] = ports;
  }
  if (!m.devcontainer.extensions.empty()) {
    nlohmann::json ext = nlohmann::json::array();
    for (const auto& e : m.devcontainer.extensions) ext.push_back(e.value);
    j["customizations"] = {{"vscode", {{"extensions", ext}}}};
  }
  return {m.outputs.devcontainer.value, j.dump(2) + "\n", false};
}

}  // namespace envpin::render

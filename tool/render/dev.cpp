// SPDX-License-Identifier: Apache-2.0
// .envpin/dev.sh: the development container of `envpin dev` (one a project and user, from the job
// image, its servers on the host's 127.0.0.1 only), for a manifest with a dev section.
#include <algorithm>
#include <string>

#include "render/code.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"

namespace envpin::render {

std::vector<std::string> passed_names(const manifest::Manifest& m) {
  std::vector<std::string> names;
  for (const auto& s : m.secrets) names.push_back(s.value);
  if (m.jobs)
    for (const auto& e : m.jobs->env) names.push_back(e.value);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<Artifact> dev(const manifest::Manifest& m, const std::string& image) {
  if (!m.dev) return {};
  // The jobs' settings (their defaults without a jobs section): the same image, checkpoints, logs.
  const manifest::Jobs j = m.jobs.value_or(manifest::Jobs{});
  Fields d;
  d.text("manifest_name", manifest_name(m));
  d.text("name", m.name.value);
  d.code("name_sh", Code::sh(m.name.value));
  d.text("image", image);
  d.code("image_sh", Code::sh(image));
  d.text("dockerfile", m.outputs.dockerfile.value);
  d.code("dockerfile_sh", Code::sh(m.outputs.dockerfile.value));
  d.text("workdir", m.workdir.value);
  d.code("workdir_sh", Code::sh(m.workdir.value));
  d.text("checkpoints", j.checkpoints.value);
  d.code("checkpoints_sh", Code::sh(j.checkpoints.value));
  d.code("checkpoints_host_sh", Code::sh(j.checkpoints_host.value));
  d.code("logs_sh", Code::sh(j.logs.value));
  d.code("gpus_sh", j.gpus.value.empty() ? Code::literal("''") : Code::sh(j.gpus.value));
  d.code("platform_sh", m.platforms.size() == 1 ? Code::sh(m.platforms.front().value.text()) : Code::literal("''"));
  // check_env at the start: without GPUs asked for, a CUDA image's check does not need one here.
  d.code("check_flags_sh", j.gpus.value.empty() && m.cuda ? Code::literal("--allow-no-gpu") : Code::literal("''"));
  const int idle_stop = m.dev->idle_stop ? m.dev->idle_stop->value : 0;
  d.flag("has_idle_stop", idle_stop > 0);
  d.text("idle_stop", std::to_string(idle_stop));
  d.code("idle_stop_code", Code::number(idle_stop));
  std::vector<Fields> pass;
  std::string pass_names;
  for (const std::string& n : passed_names(m)) {
    pass.push_back(Fields().text("name", n));
    pass_names += (pass_names.empty() ? "" : " ") + Code::word(n, "_").text();
  }
  d.items("pass", pass);
  d.code("pass_names_sh", Code::sh(pass_names));
  std::vector<Fields> servers;
  std::string lines;
  for (const manifest::DevServer& s : m.dev->servers) {
    std::vector<std::string> words;
    for (const auto& w : s.command) words.push_back(w.value);
    if (words.empty() && s.kind.value == "jupyter") words = {"jupyter", "notebook"};
    if (words.empty() && s.kind.value == "tensorboard") words = {"tensorboard"};
    Fields f;
    f.text("name", s.name.value);
    f.text("kind", s.kind.value);
    f.text("port", std::to_string(s.port.value));
    f.code("name_word", Code::word(s.name.value, "_-"));
    f.code("words_sh", Code::sh_words(words));
    f.code("logdir_sh", Code::sh(s.logdir ? s.logdir->value : "."));
    servers.push_back(f);
    lines += (lines.empty() ? "" : "\n") + s.name.value + " " + s.kind.value + " " + std::to_string(s.port.value);
  }
  d.items("servers", servers);
  d.code("servers_sh", Code::sh(lines));
  d.code("image_library", Code::embedded("image.sh"));
  d.code("library", Code::embedded("dev.sh"));
  return {{m.outputs.dev.value, render_template("dev.sh.mustache", d), true}};
}

}  // namespace envpin::render

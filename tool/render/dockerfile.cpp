// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include "pin/sha256.hpp"
#include "render/quote.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"

namespace envpin::render {

Artifact dockerfile(const manifest::Manifest& m, const resolve::Environment& env) {
  Data d;
  d.set("manifest_name", manifest_name(m));
  d.set("manifest_sha256", dockerfile_quote(pin::sha256_hex(m.source)));
  const bool multi = env.platforms.size() > 1;
  std::string platform_list;
  for (const auto& p : env.platforms) platform_list += (platform_list.empty() ? "" : ",") + p;
  d.set("multi_platform", multi);
  d.set("platform_list", platform_list);
  // One literal platform pins the image whatever the builder's host is; several use the
  // per-platform build argument that buildx sets for each target.
  d.set("platform", multi ? std::string("$TARGETPLATFORM") : env.platforms.front());
  // With a lock, the image is pinned by digest (tag kept for readers: name:tag@sha256:...).
  const std::string from = env.lock && env.lock->image ? env.lock->image->reference : env.base_image;
  d.set("base_image", from);
  d.set("base_label", dockerfile_quote(from));
  d.set("title", dockerfile_quote(m.name.value));
  if (env.cuda) {
    Data cuda;
    cuda.set("toolkit", env.cuda->toolkit);
    std::string gpus;
    for (const auto& g : env.cuda->gpus)
      gpus += (gpus.empty() ? "" : ", ") + (g.product.empty() ? g.input : g.product) + " (sm_" + std::to_string(g.sm) + ")";
    cuda.set("gpus", gpus);
    cuda.set("cmake_architectures", dockerfile_quote(env.cuda->cmake_architectures));
    cuda.set("torch_arch_list", dockerfile_quote(env.cuda->torch_arch_list));
    d.set("cuda", cuda);
  } else {
    d.set("cuda", false);
  }

  if (!m.apt.empty()) {
    std::vector<std::string> packages;
    if (env.lock && !env.lock->apt.empty()) {
      for (const auto& p : env.lock->apt) packages.push_back(p.name + "=" + p.version);  // the whole closure
    } else {
      for (const auto& p : m.apt)
        packages.push_back(p.value.version.empty() ? p.value.name : p.value.name + "=" + p.value.version);
    }
    std::sort(packages.begin(), packages.end());
    Data apt;
    apt.set("packages", list_of(packages));
    d.set("apt", apt);
  } else {
    d.set("apt", false);
  }

  d.set("python_standalone", false);
  d.set("python_image", false);
  d.set("python_system", false);
  d.set("pip", false);
  if (m.python) {
    Data py;
    py.set("version", m.python->version.value);
    py.set("uv_image", resolve::kUvImage);
    if (env.python_source == resolve::PythonSource::standalone) d.set("python_standalone", py);
    if (env.python_source == resolve::PythonSource::image) d.set("python_image", py);
    if (env.python_source == resolve::PythonSource::system) d.set("python_system", py);

    if (!m.python->packages.empty() || m.python->requirements) {
      Data pip;
      std::vector<std::string> packages;
      for (const auto& r : m.python->packages) packages.push_back(sh_quote(r.value.text()));
      std::sort(packages.begin(), packages.end());
      pip.set("packages", list_of(packages));
      pip.set("index", m.python->index ? list_of({sh_quote(m.python->index->value)}) : list_of({}));
      std::vector<std::string> extra;
      for (const auto& u : m.python->extra_index) extra.push_back(sh_quote(u.value));
      // The torch wheels envpin chose, unless the manifest already names a PyTorch index.
      const auto names_torch_index = [](const std::string& url) {
        return url.find("download.pytorch.org/whl") != std::string::npos;
      };
      bool has_torch_index = m.python->index && names_torch_index(m.python->index->value);
      for (const auto& u : m.python->extra_index) has_torch_index = has_torch_index || names_torch_index(u.value);
      if (env.cuda && env.cuda->torch && !has_torch_index) extra.push_back(sh_quote(env.cuda->torch->index_url));
      pip.set("extra_index", list_of(extra));
      pip.set("locked", false);
      if (env.lock && !env.lock->python.empty()) {
        // Exactly the locked wheels: pip checks each file's sha256 and installs nothing else.
        Data req;
        req.set("source", dockerfile_json_args({"requirements.lock", "/tmp/envpin/requirements.txt"}));
        pip.set("requirements", req);
        pip.set("packages", list_of({}));
        pip.set("locked", true);
        pip.set("index", list_of({sh_quote(env.lock->python_index)}));
      } else if (m.python->requirements) {
        Data req;
        req.set("source", dockerfile_json_args({m.python->requirements->value, "/tmp/envpin/requirements.txt"}));
        pip.set("requirements", req);
      } else {
        pip.set("requirements", false);
      }
      d.set("pip", pip);
    }
  }

  std::vector<std::string> env_lines;
  for (std::size_t i = 0; i < m.env.size(); ++i)
    env_lines.push_back((i ? " \\\n    " : "") + m.env[i].name.value + "=" +
                        dockerfile_quote(m.env[i].value.value));
  d.set("has_env", !env_lines.empty());
  d.set("env", list_of(env_lines));

  d.set("remove_ubuntu_user", env.remove_ubuntu_user);
  d.set("user", m.user.name.value);
  d.set("uid", std::to_string(m.user.uid.value));
  d.set("workdir", m.workdir.value);
  d.set("workdir_sh", sh_quote(m.workdir.value));
  d.set("check_env_copy", dockerfile_json_args({m.outputs.check_env.value, "/usr/local/bin/envpin-check-env"}));
  return {m.outputs.dockerfile.value, render_template("Dockerfile.mustache", d), false};
}

}  // namespace envpin::render

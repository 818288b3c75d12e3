// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <map>

#include "pin/sha256.hpp"
#include "render/code.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"
#include "resolve/cuda_tables.hpp"
#include "resolve/torch_range.hpp"

namespace envpin::render {
namespace {

std::string specifiers_text(const manifest::Requirement& r) {
  std::string out;
  for (const auto& s : r.specifiers) out += (out.empty() ? "" : ",") + s.op + s.version;
  return out;
}

}  // namespace

Artifact check_env(const manifest::Manifest& m, const resolve::Environment& env) {
  Fields d;
  d.text("manifest_name", manifest_name(m));
  d.code("manifest_sha256", Code::sh(pin::sha256_hex(m.source)));
  d.code("manifest_name_sh", Code::sh(manifest_name(m)));

  if (!env.os_id.empty()) {
    Fields os;
    os.code("id", Code::sh(env.os_id));
    os.code("version", Code::sh(env.os_version));
    d.section("os", os);
  } else {
    d.flag("os", false);
  }
  d.code("machines", Code::sh_words(env.machines));
  std::string platform_list;
  for (const auto& p : env.platforms) platform_list += (platform_list.empty() ? "" : ",") + p;
  d.code("platform_hint", Code::sh("build and run the image for " + platform_list));

  if (env.cuda) {
    Fields cuda;
    cuda.code("toolkit", Code::sh(env.cuda->toolkit));
    cuda.code("forward_compat", Code::number(m.cuda->forward_compat && m.cuda->forward_compat->value ? 1 : 0));
    cuda.code("require_off", Code::number(m.cuda->require_check && !m.cuda->require_check->value ? 1 : 0));
    cuda.code("driver_floor", Code::sh(env.cuda->driver_floor));
    std::vector<std::string> caps;
    for (int sm : env.cuda->sms) caps.push_back(resolve::capability_text(sm));
    std::string cap_words;
    for (const auto& c : caps) cap_words += (cap_words.empty() ? "" : " ") + c;
    cuda.code("capabilities", Code::sh(cap_words));
    cuda.code("driver_packaged", Code::sh(env.cuda->driver_packaged));
    cuda.code("driver_minor_compat", Code::sh(env.cuda->driver_minor_compat));
    // The image's kernels: SASS for every fleet GPU, PTX for the newest.
    cuda.code("sass", Code::sh(cap_words));
    cuda.code("ptx", Code::sh(resolve::capability_text(env.cuda->sms.back())));
    // envpin's product table, for drivers that cannot report a GPU's compute capability.
    std::string table;
    for (const resolve::GpuModel& g : resolve::gpu_models())
      table += (table.empty() ? "" : "\n") + resolve::gpu_words(g.name) + "|" + resolve::capability_text(g.sm);
    cuda.code("gpu_table", Code::sh(table));
    d.section("cuda", cuda);
  } else {
    d.flag("cuda", false);
  }

  // apt: the lock's whole closure at exact versions, else what the manifest asks for.
  std::vector<Fields> apt;
  if (env.lock && !env.lock->apt.empty()) {
    for (const auto& p : env.lock->apt) {
      Fields item;
      item.code("name", Code::sh(p.name));
      item.code("version", Code::sh(p.version));
      apt.push_back(item);
    }
  } else {
    std::map<std::string, std::string> wanted;
    for (const auto& a : m.apt) wanted[a.value.name] = a.value.version;
    for (const auto& [name, version] : wanted) {
      Fields item;
      item.code("name", Code::sh(name));
      item.code("version", Code::sh(version));
      apt.push_back(item);
    }
  }
  d.items("apt", apt);
  d.flag("has_apt", !m.apt.empty());
  if (env.lock) {
    Fields lock;
    lock.code("digest", Code::sh(env.lock->lock_digest));
    d.section("lock", lock);
  } else {
    d.flag("lock", false);
  }

  bool has_packages = false;
  if (m.python) {
    Fields py;
    py.code("version", Code::sh(m.python->version.value));
    // One entry per distribution, sorted by normalized name.
    std::map<std::string, const manifest::Requirement*> reqs;
    for (const auto& r : m.python->packages) reqs[r.value.normalized] = &r.value;
    for (const auto& r : m.python->requirement_lines) reqs[r.value.normalized] = &r.value;
    std::vector<Fields> packages;
    if (env.lock && !env.lock->python.empty()) {
      // Every locked distribution, dependencies included, at its exact version.
      for (const auto& p : env.lock->python) {
        Fields item;
        item.code("name", Code::sh(p.name));
        item.code("spec", Code::sh("==" + p.version));
        item.code("marker", Code::sh(""));
        packages.push_back(item);
      }
    } else {
      for (const auto& [name, req] : reqs) {
        Fields p;
        p.code("name", Code::sh(name));
        p.code("spec", Code::sh(specifiers_text(resolve::pin_torch_range(*req, resolve::torch_range_minor(env)))));
        p.code("marker", Code::sh(req->marker));
        packages.push_back(p);
      }
    }
    py.items("packages", packages);
    // No packages (apt's Python modules only): no package functions, which shellcheck would
    // call unused.
    has_packages = !packages.empty();
    py.flag("has_packages", has_packages);
    // What check_imports imports: the distributions the manifest names, apt's Python packages,
    // and for a CUDA torch the CUDA line of its variant ("cu124" -> "12.4") and the fleet.
    std::vector<std::string> import_words;
    if (!reqs.empty()) {
      import_words.push_back("--dist");
      for (const auto& [name, req] : reqs) import_words.push_back(name);
    }
    std::vector<std::string> apt_python;
    for (const auto& a : m.apt)
      if (a.value.name.starts_with("python3-")) apt_python.push_back(a.value.name);
    std::sort(apt_python.begin(), apt_python.end());
    if (!apt_python.empty()) {
      import_words.push_back("--apt");
      import_words.insert(import_words.end(), apt_python.begin(), apt_python.end());
    }
    if (env.cuda && env.cuda->torch && env.cuda->torch->variant.size() > 3) {
      const std::string digits = env.cuda->torch->variant.substr(2);  // "124"
      std::string fleet;
      for (int sm : env.cuda->sms) fleet += (fleet.empty() ? "" : " ") + resolve::capability_text(sm);
      import_words.insert(
          import_words.end(),
          {"--torch-cuda", digits.substr(0, digits.size() - 1) + "." + digits.back(), "--fleet", fleet});
    }
    py.code("import_args",
            import_words.empty() ? Code::literal("") : Code::literal(" ") + Code::sh_words(import_words));
    d.section("python", py);
  } else {
    d.flag("python", false);
  }

  std::map<std::string, std::string> env_values;
  std::vector<Fields> env_list;
  for (const auto& e : m.env) {
    env_values[e.name.value] = e.value.value;
    Fields item;
    item.code("name", Code::word(e.name.value, "_"));
    item.code("value", Code::sh(e.value.value));
    env_list.push_back(item);
  }
  d.items("env", env_list);

  std::vector<Fields> secrets;
  for (const auto& s : m.secrets) {
    Fields item;
    item.code("name", Code::word(s.value, "_"));
    secrets.push_back(item);
  }
  d.items("secrets", secrets);

  std::vector<Fields> paths;
  for (const auto& p : m.paths) {
    Fields item;
    item.code("name", Code::sh(p.name.value));
    item.code("value", Code::sh_path(p.value.value, [&](const std::string& n) { return env_values[n]; }));
    paths.push_back(item);
  }
  d.items("paths", paths);
  d.flag("has_env", !m.env.empty());
  d.flag("has_secrets", !m.secrets.empty());
  d.flag("has_paths", !m.paths.empty());
  d.flag("has_smoke", env.cuda.has_value() || has_torch(m));
  d.flag("smoke_kernel", env.cuda.has_value());
  d.flag("smoke_framework", has_torch(m));
  d.code("kernel_path", Code::sh(kKernelSmokeInImage));
  d.code("framework_path", Code::sh(kFrameworkSmokeInImage));
  d.code("framework_on_gpu", Code::number(env.cuda.has_value() ? 1 : 0));
  d.code("library", Code::embedded("check_env.sh"));
  return {m.outputs.check_env.value, render_template("check_env.sh.mustache", d), true};
}

}  // namespace envpin::render

// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include "lock/lock.hpp"
#include "net/registry.hpp"
#include "pin/sha256.hpp"
#include "render/code.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"
#include "resolve/torch_range.hpp"

namespace envpin::render {
namespace {

// A lock with heavy wheels (lock::heavy_wheel) and others: they install in two layers.
std::string base_url(std::string url) {
  while (url.ends_with("/")) url.pop_back();
  return url;
}

bool splits_heavy_wheels(const manifest::Manifest& m, const resolve::Environment& env) {
  if (!m.python || !env.lock || env.lock->python.empty()) return false;
  const auto heavy = [](const lock::PythonPackage& p) { return lock::heavy_wheel(p); };
  const auto& wheels = env.lock->python;
  return std::any_of(wheels.begin(), wheels.end(), heavy) && !std::all_of(wheels.begin(), wheels.end(), heavy);
}

// A locked image as the mirror's registry serves it: the same repository, by its platform
// manifest's digest (what envpin mirror copied), so the pin is the lock's.
std::string mirrored(const resolve::Environment& env, const lock::Image& image) {
  return env.mirror->registry + "/" + net::parse_image_reference(image.reference).repository + "@" +
         image.platforms.front().manifest;
}

// The characters the loader (and the lock reader) allow in these values.
constexpr std::string_view kImageChars = "._/:@-";
constexpr std::string_view kAptChars = "+.-:~=";
constexpr std::string_view kPathChars = "._-+@/";
// Where the smoke stage builds; nothing of it but the binary reaches the image.
const std::string kSmokeDir = "/tmp/envpin-smoke/";

// The smoke stage: nvcc of the image's CUDA line compiles envpin's smoke program for the fleet's
// arch list, as CMake would for CUDA_ARCHITECTURES "80-real;90" (SASS for each, PTX for the plain
// entries), and names the list in the program's output the way the CMake smoke target does.
Fields smoke_stage(const manifest::Manifest& m, const resolve::Environment& env) {
  const resolve::CudaDecision& c = *env.cuda;
  const bool pinned = env.lock && env.lock->devel_image && env.lock->devel_image->requested == c.devel_image;
  Fields f;
  f.code("devel_image", Code::word(pinned && env.mirror ? mirrored(env, *env.lock->devel_image)
                                   : pinned             ? env.lock->devel_image->reference
                                                        : c.devel_image,
                                   kImageChars));
  f.code("sources_copy",
         Code::dockerfile_args({m.outputs.smoke_source.value, m.outputs.smoke_header.value, kSmokeDir}));
  std::vector<std::string> nvcc = {"nvcc", "-O2", "-std=c++17"};
  std::string archs_text;
  std::vector<std::string> gencode;
  for (std::size_t start = 0; start <= c.cmake_architectures.size();) {
    std::size_t end = c.cmake_architectures.find(';', start);
    if (end == std::string::npos) end = c.cmake_architectures.size();
    std::string arch = c.cmake_architectures.substr(start, end - start);
    start = end + 1;
    if (arch.empty()) continue;
    archs_text += (archs_text.empty() ? "" : " ") + arch;
    const bool real = arch.ends_with("-real");
    const std::string sm = real ? arch.substr(0, arch.size() - 5) : arch;
    gencode.push_back("--generate-code=arch=compute_" + sm +
                      ",code=" + (real ? "sm_" + sm : "[compute_" + sm + ",sm_" + sm + "]"));
  }
  nvcc.push_back("-DENVPIN_SMOKE_ARCHS=\"" + archs_text + "\"");
  nvcc.insert(nvcc.end(), gencode.begin(), gencode.end());
  nvcc.insert(nvcc.end(), {"-o", kSmokeDir + "envpin-smoke", kSmokeDir + "envpin_smoke.cu", "-ldl"});
  f.code("nvcc", Code::dockerfile_args(nvcc));
  f.text("archs", archs_text);
  f.flag("after_stage", env.python_source == resolve::PythonSource::standalone);
  f.code("smoke_copy", Code::dockerfile_args({kSmokeDir + "envpin-smoke", kKernelSmokeInImage}));
  return f;
}

}  // namespace

Artifact dockerfile(const manifest::Manifest& m, const resolve::Environment& env) {
  Fields d;
  d.text("manifest_name", manifest_name(m));
  d.code("manifest_sha256", Code::dockerfile(pin::sha256_hex(m.source)));
  const bool multi = env.platforms.size() > 1;
  std::string platform_list;
  for (const auto& p : env.platforms) platform_list += (platform_list.empty() ? "" : ",") + p;
  d.flag("multi_platform", multi);
  d.text("platform_list", platform_list);
  // One literal platform pins the image whatever the builder's host is; several use the
  // per-platform build argument that buildx sets for each target.
  d.code("platform", multi ? Code::literal("$TARGETPLATFORM") : Code::word(env.platforms.front(), "/"));
  // With a lock, the image is pinned by digest (tag kept for readers: name:tag@sha256:...).
  const std::string from = env.lock && env.lock->image ? env.lock->image->reference : env.base_image;
  d.code("base_image",
         Code::word(env.mirror && env.lock && env.lock->image ? mirrored(env, *env.lock->image) : from, kImageChars));
  if (env.mirror) {
    Fields mirror;
    mirror.text("files", env.mirror->files);
    mirror.text("registry", env.mirror->registry.empty() ? "-" : env.mirror->registry);
    d.section("mirror", mirror);
  } else {
    d.flag("mirror", false);
  }
  d.code("base_label", Code::dockerfile(from));
  d.code("title", Code::dockerfile(m.name.value));
  if (env.cuda) {
    Fields cuda;
    cuda.text("toolkit", env.cuda->toolkit);
    cuda.flag("forward_compat", env.cuda->driver_fit == resolve::DriverFit::forward);
    cuda.flag("require_off", env.cuda->gate_bypassed);
    cuda.text("start_gate", env.cuda->start_gate);
    std::string gpus;
    for (const auto& g : env.cuda->gpus)
      gpus +=
          (gpus.empty() ? "" : ", ") + (g.product.empty() ? g.input : g.product) + " (sm_" + std::to_string(g.sm) + ")";
    cuda.text("gpus", gpus);
    cuda.code("cmake_architectures", Code::dockerfile(env.cuda->cmake_architectures));
    cuda.code("torch_arch_list", Code::dockerfile(env.cuda->torch_arch_list));
    d.section("cuda", cuda);
    d.section("smoke", smoke_stage(m, env));
  } else {
    d.flag("cuda", false);
    d.flag("smoke", false);
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
    std::vector<Code> words;
    for (const auto& p : packages) words.push_back(Code::word(p, kAptChars));
    Fields apt;
    apt.codes("packages", words);
    if (env.mirror) {
      // The mirror's flat repository alone, from a list of its own: the image's sources stay.
      Fields list;
      list.code("line", Code::sh("deb [trusted=yes] " + base_url(env.mirror->files) + "/apt ./"));
      apt.section("mirror_apt", list);
      apt.code(
          "options",
          Code::literal(" -o Dir::Etc::SourceList=/tmp/envpin-apt.list -o Dir::Etc::SourceParts=/tmp/envpin-apt.d"));
    } else {
      apt.flag("mirror_apt", false);
      apt.code("options", Code::literal(""));
    }
    d.section("apt", apt);
  } else {
    d.flag("apt", false);
  }

  d.flag("python_standalone", false);
  d.flag("python_image", false);
  d.flag("python_system", false);
  d.flag("pip", false);
  d.flag("torch_pip", false);
  if (m.python) {
    Fields py;
    py.text("version", m.python->version.value);
    py.code("version_word", Code::word(m.python->version.value, "."));
    // With a lock, uv by digest (the lock's uv-image must be the one the manifest asks for).
    const bool uv_locked = env.lock && env.lock->uv_image && env.lock->uv_image->requested == env.uv_image;
    py.code("uv_image", Code::word(uv_locked ? env.lock->uv_image->reference : env.uv_image, kImageChars));
    if (env.python_source == resolve::PythonSource::standalone) d.section("python_standalone", py);
    if (env.python_source == resolve::PythonSource::image) d.section("python_image", py);
    if (env.python_source == resolve::PythonSource::system) d.section("python_system", py);

    if (!m.python->packages.empty() || m.python->requirements) {
      Fields pip;
      std::vector<std::string> texts;
      // A torch range is pinned to the release the CUDA policy chose ("torch>=2.7,==2.9.*").
      const std::string torch_minor = resolve::torch_range_minor(env);
      for (const auto& r : m.python->packages) texts.push_back(resolve::pin_torch_range(r.value, torch_minor).text());
      if (m.python->requirements && !torch_minor.empty())
        for (const auto& r : m.python->requirement_lines)
          if (r.value.normalized == "torch") texts.push_back(resolve::pin_torch_range(r.value, torch_minor).text());
      std::sort(texts.begin(), texts.end());
      const bool locked = env.lock && !env.lock->python.empty();
      // torch and its companions come from the chosen variant's index alone, in a step of their
      // own: with PyPI beside it, pip could take another build (PyPI's default CUDA, or its
      // CPU-only aarch64 wheel). The lock pins them by hash instead.
      std::vector<Code> torch_packages;
      if (env.cuda && env.cuda->torch && !locked && !m.python->requirements) {
        const auto family = [](const std::string& text) {
          for (std::string_view name : {"torch", "torchvision", "torchaudio"})
            if (text.starts_with(name) &&
                (text.size() == name.size() ||
                 std::string_view("[=<>!~;").find(text[name.size()]) != std::string_view::npos))
              return true;
          return false;
        };
        for (const auto& t : texts)
          if (family(t)) torch_packages.push_back(Code::sh(t));
        std::erase_if(texts, family);
      }
      if (!torch_packages.empty()) {
        Fields torch;
        torch.code("index", Code::sh(env.cuda->torch->index_url));
        torch.codes("packages", torch_packages);
        d.section("torch_pip", torch);
      }
      std::vector<Code> packages;
      for (const auto& t : texts) packages.push_back(Code::sh(t));
      std::vector<Code> index;
      if (m.python->index) index.push_back(Code::sh(m.python->index->value));
      std::vector<Code> extra;
      for (const auto& u : m.python->extra_index) extra.push_back(Code::sh(u.value));
      // The torch wheels envpin chose, unless the manifest already names a PyTorch index.
      const auto names_torch_index = [](const std::string& url) {
        return url.find("download.pytorch.org/whl") != std::string::npos;
      };
      bool has_torch_index = m.python->index && names_torch_index(m.python->index->value);
      for (const auto& u : m.python->extra_index) has_torch_index = has_torch_index || names_torch_index(u.value);
      if (env.cuda && env.cuda->torch && !has_torch_index && torch_packages.empty())
        extra.push_back(Code::sh(env.cuda->torch->index_url));
      pip.codes("extra_index", extra);
      pip.flag("locked", false);
      if (locked) {
        // Exactly the locked wheels: pip checks each file's sha256 and installs nothing else.
        // The heavy ones (torch and its CUDA libraries) in a layer of their own, first.
        Fields req;
        if (!splits_heavy_wheels(m, env)) {
          req.code("source", Code::dockerfile_args({"requirements.lock", "/tmp/envpin/requirements.txt"}));
          pip.flag("heavy", false);
        } else {
          Fields heavy;
          heavy.code("source", Code::dockerfile_args({m.outputs.heavy_lock.value, "/tmp/envpin/heavy.txt"}));
          heavy.text("file", m.outputs.heavy_lock.value);
          pip.section("heavy", heavy);
          req.code("source", Code::dockerfile_args({m.outputs.rest_lock.value, "/tmp/envpin/requirements.txt"}));
        }
        pip.section("requirements", req);
        packages.clear();
        pip.flag("locked", true);
        index = {Code::sh(env.lock->python_index)};
        if (env.mirror) {
          // The mirror's wheels alone: no index is asked, each file still checked by its hash.
          index.clear();
          pip.codes("extra_index", {});
          pip.codes("find_links", {Code::sh(base_url(env.mirror->files) + "/wheels/")});
        }
      } else if (m.python->requirements) {
        Fields req;
        req.code("source", Code::dockerfile_args({m.python->requirements->value, "/tmp/envpin/requirements.txt"}));
        pip.section("requirements", req);
        pip.flag("heavy", false);
      } else {
        pip.flag("requirements", false);
        pip.flag("heavy", false);
      }
      if (!locked || !env.mirror) pip.codes("find_links", {});
      pip.codes("packages", packages);
      pip.codes("index", index);
      if (locked || m.python->requirements || !packages.empty()) d.section("pip", pip);
    }
  }

  std::vector<Code> env_lines;
  for (std::size_t i = 0; i < m.env.size(); ++i)
    env_lines.push_back((i ? Code::literal(" \\\n    ") : Code::literal("")) + Code::word(m.env[i].name.value, "_") +
                        Code::literal("=") + Code::dockerfile(m.env[i].value.value));
  d.flag("has_env", !env_lines.empty());
  d.codes("env", env_lines);

  d.flag("remove_ubuntu_user", env.remove_ubuntu_user);
  d.code("user", Code::word(m.user.name.value, "_-"));
  d.code("uid", Code::number(m.user.uid.value));
  d.code("workdir", Code::word(m.workdir.value, kPathChars));
  d.code("workdir_sh", Code::sh(m.workdir.value));
  d.code("check_env_copy", Code::dockerfile_args({m.outputs.check_env.value, "/usr/local/bin/envpin-check-env"}));
  if (has_torch(m)) {
    Fields f;
    f.code("copy", Code::dockerfile_args({m.outputs.smoke_py.value, kFrameworkSmokeInImage}));
    d.section("framework_smoke", f);
  } else {
    d.flag("framework_smoke", false);
  }
  return {m.outputs.dockerfile.value, render_template("Dockerfile.mustache", d), false};
}

std::vector<Artifact> requirements_layers(const manifest::Manifest& m, const resolve::Environment& env) {
  if (!splits_heavy_wheels(m, env)) return {};
  return {{m.outputs.heavy_lock.value, lock::requirements_lock(*env.lock, true), false},
          {m.outputs.rest_lock.value, lock::requirements_lock(*env.lock, false), false}};
}

std::vector<Copied> dockerfile_inputs(const manifest::Manifest& m, const resolve::Environment& env,
                                      const Artifact& check_env) {
  std::vector<Copied> out;
  if (m.python && (!m.python->packages.empty() || m.python->requirements)) {
    const std::vector<Artifact> layers = requirements_layers(m, env);
    if (!layers.empty())
      for (const Artifact& a : layers) out.push_back({a.path, a.bytes});
    else if (env.lock && !env.lock->python.empty())
      out.push_back({"requirements.lock", lock::requirements_lock(*env.lock)});
    else if (m.python->requirements)
      out.push_back({m.python->requirements->value, m.python->requirements_bytes});
  }
  out.push_back({check_env.path, check_env.bytes});
  for (const Artifact& a : smoke(m, env)) out.push_back({a.path, a.bytes});
  return out;
}

}  // namespace envpin::render

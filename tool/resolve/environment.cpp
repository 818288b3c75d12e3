// SPDX-License-Identifier: Apache-2.0
#include "resolve/environment.hpp"

#include <algorithm>
#include <set>

#include "diag/error.hpp"
#include "diag/suggest.hpp"
#include "resolve/cuda_tables.hpp"

namespace envpin::resolve {
namespace {

using diag::Error;
using manifest::Manifest;

struct OsInfo {
  std::string_view key, id, version, image, codename;
};

// os key -> os-release ID/VERSION_ID and the plain base image.
constexpr OsInfo kOses[] = {
    {"ubuntu20.04", "ubuntu", "20.04", "ubuntu:20.04", "focal"},
    {"ubuntu22.04", "ubuntu", "22.04", "ubuntu:22.04", "jammy"},
    {"ubuntu24.04", "ubuntu", "24.04", "ubuntu:24.04", "noble"},
    {"debian11", "debian", "11", "debian:bullseye-slim", "bullseye"},
    {"debian12", "debian", "12", "debian:bookworm-slim", "bookworm"},
    {"debian13", "debian", "13", "debian:trixie-slim", "trixie"},
};

const OsInfo& os_info(std::string_view key) {
  for (const OsInfo& o : kOses)
    if (o.key == key) return o;
  return kOses[4];
}

// Recognizes the OS of well-known base images, so check_env can verify it.
const OsInfo* os_of_image(const std::string& image) {
  const std::string repo = image.substr(0, image.find_first_of(":@"));
  const std::string tag = image.find(':') == std::string::npos ? "" : image.substr(image.find(':') + 1);
  for (const OsInfo& o : kOses) {
    if ((repo == "ubuntu" || repo == "library/ubuntu") && (tag.starts_with(o.version) || tag.starts_with(o.codename)) &&
        o.id == "ubuntu")
      return &o;
    if ((repo == "debian" || repo == "library/debian" || repo == "python") && o.id == "debian" &&
        (tag.starts_with(std::string(o.codename)) || tag.starts_with(std::string(o.version)) ||
         tag.find("-" + std::string(o.codename)) != std::string::npos))
      return &o;
  }
  return nullptr;
}

CudaChoice choose_cuda(const Manifest& m, const std::string& ubuntu) {
  const manifest::Cuda& c = *m.cuda;
  if (c.version.value == "auto")
    throw Error("cuda.version 'auto' is not supported yet", c.version.where,
                "name the toolkit, e.g. 'version: \"12.4\"'");
  const CudaRelease* release = find_cuda_release(c.version.value);
  if (!release) {
    const std::string major = c.version.value.substr(0, c.version.value.find('.'));
    std::string same_major;
    for (const CudaRelease& r : cuda_releases())
      if (r.minor.substr(0, r.minor.find('.')) == major)
        same_major += (same_major.empty() ? "" : ", ") + std::string(r.minor);
    throw Error("no nvidia/cuda image exists for CUDA " + c.version.value, c.version.where,
                same_major.empty() ? "supported CUDA lines: 11.x, 12.x, 13.x"
                                   : "CUDA " + major + " images exist for " + same_major);
  }
  CudaChoice choice;
  const bool has_patch = std::count(c.version.value.begin(), c.version.value.end(), '.') == 2;
  if (has_patch) {
    if (std::find(release->patches.begin(), release->patches.end(), c.version.value) ==
        release->patches.end())
      throw Error("nvidia/cuda publishes no tag for CUDA " + c.version.value + " (kept: " +
                      std::string(release->patches.back()) + ")",
                  c.version.where,
                  "write 'version: \"" + std::string(release->minor) +
                      "\"' to get the newest published patch release");
    choice.toolkit = c.version.value;
  } else {
    choice.toolkit = release->patches.back();
  }
  if (std::find(release->ubuntu.begin(), release->ubuntu.end(), ubuntu) == release->ubuntu.end()) {
    std::string list;
    for (auto u : release->ubuntu) list += (list.empty() ? "ubuntu" : ", ubuntu") + std::string(u);
    throw Error("nvidia/cuda has no CUDA " + choice.toolkit + " image for ubuntu" + ubuntu,
                m.os ? m.os->where : c.version.where, "set os to one of: " + list);
  }

  const std::vector<int> compilable = compilable_sms(release->minor);
  std::set<int> sms;
  for (const auto& gpu : c.gpus) {
    const std::optional<int> sm = gpu_sm(gpu.value);
    if (!sm) {
      std::vector<std::string_view> names;
      for (const GpuModel& g : gpu_models()) names.push_back(g.name);
      throw Error("unknown GPU '" + gpu.value + "'" + diag::did_you_mean(gpu.value, names), gpu.where,
                  "name a product such as 'H100' or give its compute capability, e.g. '9.0'");
    }
    if (std::find(compilable.begin(), compilable.end(), *sm) == compilable.end())
      throw Error("CUDA " + choice.toolkit + " cannot build code for '" + gpu.value + "' (sm_" +
                      std::to_string(*sm) + "; this toolkit targets sm_" +
                      std::to_string(compilable.front()) + " to sm_" + std::to_string(compilable.back()) + ")",
                  gpu.where, "choose a cuda.version that supports sm_" + std::to_string(*sm) + ", or drop this GPU");
    sms.insert(*sm);
  }
  choice.sms.assign(sms.begin(), sms.end());
  if (c.driver) choice.driver_floor = c.driver->value;
  return choice;
}

}  // namespace

Environment resolve(const Manifest& m) {
  Environment env;
  for (const auto& p : m.platforms) {
    env.platforms.push_back(p.value.text());
    env.machines.push_back(p.value.machine());
  }
  if (m.python) env.python_source = PythonSource::standalone;

  if (m.cuda) {
    const std::string os_key = m.os ? m.os->value : "ubuntu22.04";
    const OsInfo& os = os_info(os_key);
    env.os_id = os.id;
    env.os_version = os.version;
    env.cuda = choose_cuda(m, std::string(os.version));
    const CudaRelease* release = find_cuda_release(env.cuda->toolkit);
    std::string flavor = m.cuda->flavor.value == manifest::CudaFlavor::base      ? "base"
                         : m.cuda->flavor.value == manifest::CudaFlavor::devel ? "devel"
                                                                               : "runtime";
    std::string cudnn = m.cuda->cudnn.value ? std::string(release->cudnn_part) + "-" : "";
    env.base_image = "nvidia/cuda:" + env.cuda->toolkit + "-" + cudnn + flavor + "-ubuntu" + std::string(os.version);
  } else if (m.base) {
    env.base_image = m.base->value;
    const OsInfo* os = m.os ? &os_info(m.os->value) : os_of_image(m.base->value);
    if (os) {
      env.os_id = os->id;
      env.os_version = os->version;
    } else {
      env.warnings.push_back(diag::format_warning(
          "cannot tell the OS of base image '" + m.base->value + "'; check_env will not check it",
          m.base->where));
    }
  } else {
    const OsInfo& os = os_info(m.os ? m.os->value : "debian12");
    env.os_id = os.id;
    env.os_version = os.version;
    env.base_image = std::string(os.image);
    // On Debian the official Python image is the exact interpreter, built on the same release.
    if (m.python && os.id == "debian") {
      env.python_source = PythonSource::image;
      env.base_image = "python:" + m.python->version.value + "-slim-" + std::string(os.codename);
    }
  }
  env.remove_ubuntu_user = env.os_id == "ubuntu" && env.os_version == "24.04";
  return env;
}

}  // namespace envpin::resolve

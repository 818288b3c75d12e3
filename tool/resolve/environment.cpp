// SPDX-License-Identifier: Apache-2.0
#include "resolve/environment.hpp"

#include <algorithm>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "lock/size.hpp"
#include "resolve/cuda_packages.hpp"
#include "resolve/cuda_tables.hpp"

namespace envpin::resolve {
namespace {

using diag::Error;
using manifest::Manifest;

struct OsInfo {
  std::string_view key, id, version, image, codename, glibc, python3;
};

// os key -> os-release ID/VERSION_ID and the plain base image.
constexpr OsInfo kOses[] = {
    // glibc per release: the libc6 version each release ships; python3: the minor of the
    // release's python3-defaults (packages.debian.org and packages.ubuntu.com).
    {"ubuntu20.04", "ubuntu", "20.04", "ubuntu:20.04", "focal", "2.31", "3.8"},
    {"ubuntu22.04", "ubuntu", "22.04", "ubuntu:22.04", "jammy", "2.35", "3.10"},
    {"ubuntu24.04", "ubuntu", "24.04", "ubuntu:24.04", "noble", "2.39", "3.12"},
    {"debian11", "debian", "11", "debian:bullseye-slim", "bullseye", "2.31", "3.9"},
    {"debian12", "debian", "12", "debian:bookworm-slim", "bookworm", "2.36", "3.11"},
    {"debian13", "debian", "13", "debian:trixie-slim", "trixie", "2.41", "3.13"},
};

const OsInfo* os_by_release(std::string_view id, std::string_view version) {
  for (const OsInfo& o : kOses)
    if (o.id == id && o.version == version) return &o;
  return nullptr;
}

// "3.11.9" -> "3.11"
std::string minor_of(const std::string& version) {
  const std::size_t first = version.find('.');
  return version.substr(0, first == std::string::npos ? std::string::npos : version.find('.', first + 1));
}

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

}  // namespace

Environment resolve(const Manifest& m) {
  Environment env;
  for (const auto& p : m.platforms) {
    env.platforms.push_back(p.value.text());
    env.machines.push_back(p.value.machine());
  }
  if (m.python) env.python_source = m.python->system ? PythonSource::system : PythonSource::standalone;
  if (m.python && m.python->system) {
    const bool has_venv =
        std::any_of(m.apt.begin(), m.apt.end(), [](const auto& a) { return a.value.name == "python3-venv"; });
    if (!has_venv)
      throw Error(
          "python.source: system installs packages into a venv of the image's python3, but apt does not list python3-venv",
          m.python->source_where, "add python3-venv to apt");
  }

  // What run.sh's supervisor does and a Kubernetes Job cannot: said, not silently dropped.
  if (m.jobs && m.jobs->kubernetes) {
    const manifest::Jobs& j = *m.jobs;
    std::string lost;
    if (j.notify) lost += "jobs.notify (no notifications)";
    if (j.idle) lost += std::string(lost.empty() ? "" : ", ") + "jobs.idle (no GPU-idle guard)";
    if (!j.data.empty())
      lost +=
          std::string(lost.empty() ? "" : ", ") + "jobs.data (nothing is mounted: the image or a claim holds the data)";
    if (!lost.empty())
      env.warnings.push_back(diag::format_warning(
          "the Kubernetes job (jobs.kubernetes) does without " + lost + ": a pod has no envpin supervisor",
          j.kubernetes->where));
  }

  if (m.cuda) {
    env.cuda = decide_cuda(request_from_manifest(m));
    env.os_id = "ubuntu";
    env.os_version = env.cuda->os_version;
    env.glibc = std::string(os_info("ubuntu" + env.os_version).glibc);
    env.codename = std::string(os_info("ubuntu" + env.os_version).codename);
    env.base_image = env.cuda->base_image;
    for (const Note& n : env.cuda->warnings) env.warnings.push_back(diag::format_warning(n.text, n.where));
    for (std::string& w : cuda_package_warnings(m, *env.cuda)) env.warnings.push_back(std::move(w));
  } else if (m.base) {
    env.base_image = m.base->value;
    const OsInfo* os = m.os ? &os_info(m.os->value) : os_of_image(m.base->value);
    if (os) {
      env.os_id = os->id;
      env.os_version = os->version;
      env.glibc = std::string(os->glibc);
      env.codename = std::string(os->codename);
    } else {
      env.warnings.push_back(diag::format_warning(
          "cannot tell the OS of base image '" + m.base->value + "'; check_env will not check it", m.base->where));
    }
  } else {
    const OsInfo& os = os_info(m.os ? m.os->value : "debian12");
    env.os_id = os.id;
    env.os_version = os.version;
    env.glibc = std::string(os.glibc);
    env.codename = std::string(os.codename);
    env.base_image = std::string(os.image);
    // On Debian the official Python image is the exact interpreter, built on the same release.
    if (m.python && !m.python->system && os.id == "debian") {
      env.python_source = PythonSource::image;
      env.base_image = "python:" + m.python->version.value + "-slim-" + std::string(os.codename);
    }
  }
  env.remove_ubuntu_user = env.os_id == "ubuntu" && env.os_version == "24.04";
  if (env.python_source == PythonSource::standalone)
    env.uv_image = m.python->uv_image ? m.python->uv_image->value : std::string(kUvImage);
  // The image's own python3 is the release's: a different version cannot be asked for.
  if (env.python_source == PythonSource::system) {
    if (const OsInfo* os = os_by_release(env.os_id, env.os_version);
        os && minor_of(m.python->version.value) != os->python3)
      throw Error("python.version " + diag::quote(m.python->version.value) + " with python.source: system, but " +
                      std::string(os->key) + "'s python3 is " + std::string(os->python3),
                  m.python->version.where,
                  "set python.version to \"" + std::string(os->python3) +
                      "\", or drop python.source: system to get Python " + m.python->version.value + " exactly");
  }
  return env;
}

void check_locked_python(const Manifest& m, const lock::Lock& l) {
  if (!m.python || !m.python->system) return;
  for (const auto& p : l.apt) {
    if (p.name != "python3") continue;
    // Debian version "3.11.2-1+b1": the upstream part is the interpreter's version.
    const std::string upstream = p.version.substr(0, p.version.find_first_of("-+~"));
    const std::string& want = m.python->version.value;
    const bool exact = std::count(want.begin(), want.end(), '.') >= 2;
    if (exact ? upstream != want : minor_of(upstream) != want)
      throw Error(
          "python.version " + diag::quote(want) + " with python.source: system, but the lock installs python3 " +
              p.version,
          m.python->version.where,
          "set python.version to \"" + (exact ? upstream : minor_of(upstream)) + "\" and run 'envpin lock' again");
    return;
  }
}

std::string system_cuda_in_closure(const lock::Lock& l) {
  if (!l.image || lock::cuda_flavor(l.image->requested) != "base") return {};
  // onnxruntime-gpu's [cuda,cudnn] extras cannot be told from torch's nvidia-* wheels in a lock,
  // so it is named with its way out (lock::system_cuda_reason).
  for (const lock::PythonPackage& p : l.python) {
    const std::string why = lock::system_cuda_reason(manifest::normalize_name(p.name));
    if (!why.empty())
      return diag::format_warning(
          p.name + " " + p.version + ", in the lock, needs CUDA libraries that the base image " + l.image->requested +
              " has none of: " + why + "; set cuda.flavor: runtime (and cuda.cudnn: true for cuDNN) and lock again",
          std::nullopt);
  }
  return {};
}

}  // namespace envpin::resolve

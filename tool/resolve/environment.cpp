// SPDX-License-Identifier: Apache-2.0
#include "resolve/environment.hpp"

#include <algorithm>

#include "diag/error.hpp"
#include "resolve/cuda_tables.hpp"

namespace envpin::resolve {
namespace {

using diag::Error;
using manifest::Manifest;

struct OsInfo {
  std::string_view key, id, version, image, codename, glibc;
};

// os key -> os-release ID/VERSION_ID and the plain base image.
constexpr OsInfo kOses[] = {
    // glibc per release: the libc6 version each release ships (Debian and Ubuntu package pages).
    {"ubuntu20.04", "ubuntu", "20.04", "ubuntu:20.04", "focal", "2.31"},
    {"ubuntu22.04", "ubuntu", "22.04", "ubuntu:22.04", "jammy", "2.35"},
    {"ubuntu24.04", "ubuntu", "24.04", "ubuntu:24.04", "noble", "2.39"},
    {"debian11", "debian", "11", "debian:bullseye-slim", "bullseye", "2.31"},
    {"debian12", "debian", "12", "debian:bookworm-slim", "bookworm", "2.36"},
    {"debian13", "debian", "13", "debian:trixie-slim", "trixie", "2.41"},
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

}  // namespace

Environment resolve(const Manifest& m) {
  Environment env;
  for (const auto& p : m.platforms) {
    env.platforms.push_back(p.value.text());
    env.machines.push_back(p.value.machine());
  }
  if (m.python) env.python_source = m.python->system ? PythonSource::system : PythonSource::standalone;
  if (m.python && m.python->system) {
    const bool has_venv = std::any_of(m.apt.begin(), m.apt.end(), [](const auto& a) { return a.value.name == "python3-venv"; });
    if (!has_venv)
      throw Error("python.source: system installs packages into a venv of the image's python3, but apt does not list python3-venv",
                  m.python->source_where, "add python3-venv to apt");
  }

  if (m.cuda) {
    env.cuda = decide_cuda(request_from_manifest(m));
    env.os_id = "ubuntu";
    env.os_version = env.cuda->os_version;
    env.glibc = std::string(os_info("ubuntu" + env.os_version).glibc);
    env.codename = std::string(os_info("ubuntu" + env.os_version).codename);
    env.base_image = env.cuda->base_image;
    for (const Note& n : env.cuda->warnings) env.warnings.push_back(diag::format_warning(n.text, n.where));
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
          "cannot tell the OS of base image '" + m.base->value + "'; check_env will not check it",
          m.base->where));
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
  return env;
}

}  // namespace envpin::resolve

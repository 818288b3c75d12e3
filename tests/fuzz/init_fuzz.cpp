// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a hostile dependency file -> envpin init's reader -> the draft manifest
// (-DENVPIN_FUZZ=ON, clang). The first byte picks the reader (requirements, conda, pyproject,
// Dockerfile); the rest is the file. Every input must end in a draft or a diag::Error. The
// draft must be a manifest that envpin reads back with exactly the draft's packages and apt
// entries (no value turns into YAML structure), or one it refuses with a located error; no
// note and no line of it holds a control character.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/init.hpp"
#include "manifest/load.hpp"

namespace {

namespace fs = std::filesystem;

void check(bool ok) {
  if (!ok) std::abort();
}

const fs::path& work_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("envpin-fuzz-init-" + std::to_string(getpid()));
    fs::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(work_dir(), ec);
    });
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const char* const kNames[] = {"requirements.txt", "environment.yml", "pyproject.toml", "Dockerfile"};
  const unsigned kind = data[0] % 4;
  const fs::path file = work_dir() / kNames[kind];
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  envpin::init::Draft d;
  try {
    switch (kind) {
      case 0:
        envpin::init::read_requirements(file, d);
        break;
      case 1:
        envpin::init::read_conda(file, d);
        break;
      case 2:
        envpin::init::read_pyproject(file, d, {"dev"});
        break;
      default:
        envpin::init::read_dockerfile(file, d);
        break;
    }
    envpin::init::settle(d);
  } catch (const envpin::diag::Error& e) {
    check(envpin::diag::control_at(e.message()) == std::string_view::npos);
    return 0;
  }
  for (const std::string& n : d.notes) check(envpin::diag::control_at(n) == std::string_view::npos);
  const std::string text = envpin::init::write_manifest(d, {"fuzz", {"A100"}, std::nullopt, ""});
  for (char c : text) check(c == '\n' || static_cast<unsigned char>(c) >= 0x20);
  try {
    const envpin::manifest::Manifest m = envpin::manifest::parse(text, "envpin.yaml", work_dir());
    check(m.python.has_value());
    check(m.python->packages.size() == d.packages.size());
    check(m.apt.size() == d.apt.size());
  } catch (const envpin::diag::Error& e) {
    check(e.where().has_value());  // refused at a place in the draft, as `envpin init` reports it
  }
  return 0;
}

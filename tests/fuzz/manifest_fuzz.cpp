// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: manifest text -> load -> resolve -> render (-DENVPIN_FUZZ=ON, clang). Every
// input must end in artifacts or in a diag::Error; anything else (a crash, another exception,
// a sanitizer report) is a finding. The invariants of the hostile-input suite are asserted on
// each result: an error is one or two printable lines; no artifact holds a control character
// other than a newline. The same manifest's CI pipelines (render::ci, issue 61) are rendered too:
// each is YAML that reads back, and GitHub's has exactly its six top-level keys, whatever the
// manifest's values (a value may not add a key such as `defaults`).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "manifest/load.hpp"
#include "render/render.hpp"
#include "resolve/environment.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

bool one_line_each(const std::string& text) {
  std::size_t lines = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) return false;
    if (envpin::diag::control_at(std::string_view(text).substr(start, end - start)) != std::string_view::npos)
      return false;
    ++lines;
    start = end + 1;
  }
  return lines >= 1 && lines <= 2;
}

// The pipelines of `m` for both CIs, with valid options: YAML that reads back; GitHub's top level is
// exactly name, on, permissions, concurrency, env and jobs. A value refused is one diag::Error.
void fuzz_ci(const envpin::manifest::Manifest& m) {
  envpin::render::CiOptions o;
  o.deb_url = "https://example.org/envpin_0.1.0_amd64.deb";
  o.deb_sha256 = std::string(64, 'a');
  for (const bool github : {true, false}) {
    o.github = github;
    std::vector<envpin::render::Artifact> files;
    try {
      files = envpin::render::ci(m, o);
    } catch (const envpin::diag::Error& e) {
      check(one_line_each(envpin::diag::format(e)));
      continue;
    }
    for (const auto& a : files) {
      for (char c : a.bytes) check(c == '\n' || static_cast<unsigned char>(c) >= 0x20);
      const YAML::Node doc = YAML::Load(a.bytes);  // throws (a finding) when it does not read back
      check(doc.IsMap());
      if (!github) continue;
      std::set<std::string> keys;
      for (const auto& kv : doc) keys.insert(kv.first.as<std::string>());
      check(keys == std::set<std::string>{"name", "on", "permissions", "concurrency", "env", "jobs"});
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  try {
    // A project directory that does not exist: a requirements file is never found, nothing is read.
    const envpin::manifest::Manifest m = envpin::manifest::parse(source, "envpin.yaml", "/nonexistent-envpin-fuzz");
    const envpin::resolve::Environment env = envpin::resolve::resolve(m);
    for (const auto& a : envpin::render::render_all(m, env)) {
      for (char c : a.bytes) check(c == '\n' || static_cast<unsigned char>(c) >= 0x20);
      check(envpin::diag::invalid_utf8_at(a.bytes) == std::string_view::npos);
    }
    fuzz_ci(m);
  } catch (const envpin::diag::Error& e) {
    check(one_line_each(envpin::diag::format(e)));
  }
  return 0;
}

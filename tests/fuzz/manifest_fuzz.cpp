// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: manifest text -> load -> resolve -> render (-DENVPIN_FUZZ=ON, clang). Every
// input must end in artifacts or in a diag::Error; anything else (a crash, another exception,
// a sanitizer report) is a finding. The invariants of the hostile-input suite are asserted on
// each result: an error is one or two printable lines; no artifact holds a control character
// other than a newline.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

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
  } catch (const envpin::diag::Error& e) {
    check(one_line_each(envpin::diag::format(e)));
  }
  return 0;
}

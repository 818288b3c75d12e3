// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a hostile dependency file -> envpin init's reader -> the draft manifest
// (-DENVPIN_FUZZ=ON, clang). The first byte picks the reader (requirements, conda, pyproject,
// Dockerfile); the rest is the file, in a project that holds a .env with a planted secret and
// links to it and out of the project, beside a file outside it whose package is a canary. Every
// input must end in a draft or a diag::Error. The draft must be a manifest that envpin reads back
// with exactly the draft's packages and apt entries (no value turns into YAML structure), or one
// it refuses with a located error; no note, error or line of it holds a control or bidirectional
// character, the planted secret or the canary, or a credential secrets::redact would still find.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/init.hpp"
#include "manifest/load.hpp"
#include "secrets/rules.hpp"

namespace {

namespace fs = std::filesystem;

// Which check failed, and on what text, goes to stderr before the abort: CI keeps only the log.
std::string_view checked_text;

void check(bool ok, unsigned line = __builtin_LINE()) {
  if (ok) return;
  std::fprintf(stderr, "init_fuzz: the check at line %u failed on: %.*s\n", line,
               static_cast<int>(std::min<std::size_t>(checked_text.size(), 2000)), checked_text.data());
  std::abort();
}

constexpr std::string_view kSecret = "envpin-fuzz-secret-7c3a";
constexpr std::string_view kOutside = "envpin-fuzz-outside-91d2";

// Never destroyed: the atexit cleanup below is registered while the path is being made, so it
// runs after a function-local static's destructor would have freed the path (ASan saw that
// heap-use-after-free when libFuzzer exits at -max_total_time).
const fs::path& base_dir() {
  static const fs::path& dir = *new fs::path([] {
    fs::path d = fs::temp_directory_path() / ("envpin-fuzz-init-" + std::to_string(getpid()));
    fs::create_directories(d / "p");
    std::ofstream(d / "outside.txt") << kOutside << "==1.0\n";
    std::ofstream(d / "p/.env") << "HF_TOKEN=" << kSecret << "\n";
    std::error_code ec;
    fs::create_symlink("../outside.txt", d / "p/link.txt", ec);
    fs::create_symlink(".env", d / "p/env.txt", ec);
    fs::create_directory_symlink("..", d / "p/up", ec);
    std::atexit([] {
      std::error_code e;
      fs::remove_all(base_dir(), e);
    });
    return d;
  }());
  return dir;
}

const fs::path& work_dir() {
  static const fs::path dir = fs::canonical(base_dir() / "p");
  return dir;
}

// Without what must never be shown: the secret, the canary, a bidirectional control, a credential
// that redact would still find. The secret and the canary count only where the input did not hold
// them itself: libFuzzer learns both strings from these very comparisons and writes them into the
// file, and a line of the user's own file shown back is no leak (nor its package name, folded).
bool input_holds_secret = false;
bool input_holds_canary = false;

std::string pep503_folded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
  return out;
}

void check_shown(std::string_view text) {
  checked_text = text;
  check(input_holds_secret || text.find(kSecret) == std::string_view::npos);
  check(input_holds_canary || text.find(kOutside) == std::string_view::npos);
  check(envpin::secrets::redact(text) == text);
  for (std::size_t i = 0; i + 2 < text.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(text[i]), b1 = static_cast<unsigned char>(text[i + 1]),
               b2 = static_cast<unsigned char>(text[i + 2]);
    check(!(b0 == 0xE2 && b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xAA && b2 <= 0xAE))));
    check(!(b0 == 0xE2 && b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const char* const kNames[] = {"requirements.txt", "environment.yml", "pyproject.toml", "Dockerfile"};
  const unsigned kind = data[0] % 4;
  // Each input alone: a file an earlier input left (a requirements.txt a Dockerfile's pip -r
  // then reads) would carry that input's text, secret string included, into this one's draft.
  for (const char* name : kNames) {
    std::error_code ec;
    fs::remove(work_dir() / name, ec);
  }
  const fs::path file = work_dir() / kNames[kind];
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  // Compared as package names are (PEP 503: case folded, each run of - _ . one -): an input that
  // holds "envPin_fuzz.outside-91d2" in a name gets "envpin-fuzz-outside-91d2" in its draft.
  const std::string folded = pep503_folded(input);
  input_holds_secret = folded.find(kSecret) != std::string::npos;
  input_holds_canary = folded.find(kOutside) != std::string::npos;
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  envpin::init::Draft d;
  d.root = work_dir();
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
    check_shown(e.message());
    return 0;
  }
  // A line's refusal is recorded and reading goes on: each is shown as an error is.
  check(d.refusals.size() <= envpin::init::kMaxRefusals);
  for (const envpin::diag::Error& e : d.refusals) {
    check(envpin::diag::control_at(e.message()) == std::string_view::npos);
    check_shown(e.message());
    check_shown(e.hint());
    if (e.where()) check_shown(e.where()->file);
  }
  for (const std::string& n : d.notes) {
    check(envpin::diag::control_at(n) == std::string_view::npos);
    check_shown(n);
  }
  check(d.packages.size() <= envpin::init::kMaxPackages);
  const std::string text = envpin::init::write_manifest(d, {"fuzz", {"A100"}, std::nullopt, ""});
  for (char c : text) check(c == '\n' || static_cast<unsigned char>(c) >= 0x20);
  check_shown(text);
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

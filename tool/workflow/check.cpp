// SPDX-License-Identifier: Apache-2.0
#include "workflow/check.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "diag/cursor.hpp"
#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "io/json_input.hpp"
#include "io/process.hpp"
#include "lock/lock.hpp"
#include "manifest/load.hpp"
#include "pin/sha256.hpp"
#include "render/render.hpp"
#include "resolve/environment.hpp"
#include "workflow/project.hpp"

namespace envpin::workflow {
namespace {

namespace fs = std::filesystem;

// Lines of check_env.sh: "<status> <name> <detail>", aligned with printf '%-8s %-24s %s'.
std::vector<Verdict> parse_lines(const std::string& out) {
  std::vector<Verdict> v;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    diag::Cursor c{line};
    const std::string_view status = c.span([](char x) { return x != ' '; });
    if (status != "ok" && status != "MISMATCH" && status != "STALE" && status != "skip") continue;
    if (c.spaces() == 0) continue;
    const std::string_view name = c.span([](char x) { return x != ' ' && x != '\t' && x != '\r' && x != '\n'; });
    if (name.empty()) continue;
    c.spaces();
    v.push_back({std::string(status), std::string(name), std::string(c.rest())});
  }
  return v;
}

// Python files against the sha256 in each installed distribution's RECORD.
std::vector<Verdict> deep_python(const std::string& python, const std::vector<std::string>& only) {
  std::vector<Verdict> out;
  const auto r = io::run_process({python, "-c", "import sys, json; print(json.dumps(sys.path))"});
  if (r.exit_code != 0) return {{"skip", "deep.python", python + " did not run; not checked"}};
  const nlohmann::json path = io::parse_bounded_json(r.out);
  if (!path.is_array()) return {{"skip", "deep.python", python + " did not print its sys.path; not checked"}};
  for (const auto& entry : path) {
    if (!entry.is_string()) continue;
    const fs::path dir = entry.get<std::string>();
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& d : fs::directory_iterator(dir, ec)) {
      const std::string name = d.path().filename().string();
      if (!name.ends_with(".dist-info")) continue;
      std::string dist = name.substr(0, name.find('-'));
      std::transform(dist.begin(), dist.end(), dist.begin(),
                     [](unsigned char c) { return c == '_' ? '-' : std::tolower(c); });
      if (!only.empty() && std::find(only.begin(), only.end(), dist) == only.end()) continue;
      std::ifstream record(d.path() / "RECORD");
      std::string line;
      int files = 0, bad = 0;
      std::string first_bad;
      while (std::getline(record, line)) {
        // path,sha256=<urlsafe b64>,size — paths with commas are quoted; those are rare and skipped.
        const auto c1 = line.find(','), c2 = line.find(',', c1 + 1);
        if (c1 == std::string::npos || c2 == std::string::npos || line[0] == '"') continue;
        const std::string hash = line.substr(c1 + 1, c2 - c1 - 1);
        if (!hash.starts_with("sha256=")) continue;
        const fs::path file = fs::weakly_canonical(dir / line.substr(0, c1));
        ++files;
        std::string actual;
        try {
          actual = pin::sha256_file_b64url(file);
        } catch (const diag::Error&) {
          actual = "missing";
        }
        if (actual != hash.substr(7)) {
          ++bad;
          if (first_bad.empty()) first_bad = line.substr(0, c1);
        }
      }
      if (bad)
        out.push_back({"MISMATCH", "deep.python." + dist,
                       "expected files as in RECORD, found " + std::to_string(bad) + " of " + std::to_string(files) +
                           " changed (first: " + first_bad + "); fix: pip install --force-reinstall " + dist});
      else if (files)
        out.push_back({"ok", "deep.python." + dist, std::to_string(files) + " files match RECORD"});
    }
  }
  return out;
}

// Installed deb files against dpkg's md5sums (conffiles under /etc may be edited on purpose).
std::vector<Verdict> deep_apt(const std::vector<std::string>& packages) {
  std::vector<Verdict> out;
  for (const auto& p : packages) {
    fs::path sums = "/var/lib/dpkg/info/" + p + ".md5sums";
    if (!fs::exists(sums)) {
      for (const char* arch : {":amd64", ":arm64", ":all"})
        if (fs::exists("/var/lib/dpkg/info/" + p + arch + ".md5sums"))
          sums = "/var/lib/dpkg/info/" + p + arch + ".md5sums";
    }
    std::ifstream in(sums);
    if (!in) {
      out.push_back({"skip", "deep.apt." + p, "no md5sums from dpkg; not checked"});
      continue;
    }
    std::string line, first_bad;
    int files = 0, bad = 0;
    while (std::getline(in, line)) {
      if (line.size() < 35) continue;
      const std::string md5 = line.substr(0, 32), path = "/" + line.substr(34);
      if (path.starts_with("/etc/")) continue;
      ++files;
      std::string actual;
      try {
        actual = pin::md5_file(path);
      } catch (const diag::Error&) {
        actual = "missing";
      }
      if (actual != md5) {
        ++bad;
        if (first_bad.empty()) first_bad = path;
      }
    }
    if (bad)
      out.push_back({"MISMATCH", "deep.apt." + p,
                     "expected files as dpkg installed them, found " + std::to_string(bad) + " of " +
                         std::to_string(files) + " changed (first: " + first_bad +
                         "); fix: apt-get install --reinstall " + p});
    else
      out.push_back({"ok", "deep.apt." + p, std::to_string(files) + " files match dpkg's md5sums"});
  }
  return out;
}

}  // namespace

CheckResult check(const CheckRequest& o) {
  const manifest::Manifest m = manifest::load(o.manifest);
  resolve::Environment env = resolve::resolve(m);
  CheckResult result;
  std::vector<Verdict>& verdicts = result.verdicts;
  int& status = result.status;

  // The lock: intact and current, or bit 2.
  const fs::path lock_path = m.project_dir / "envpin.lock";
  const LockState lock = lock_state(m, lock_path, lock_path.generic_string());
  using Kind = LockState::Kind;
  switch (lock.kind) {
    case Kind::absent:
      verdicts.push_back({"skip", "lock.integrity", "no envpin.lock; versions are checked against the manifest"});
      break;
    case Kind::unreadable:
      verdicts.push_back({"STALE", "lock.integrity", lock.problem + "; fix: run 'envpin lock'"});
      break;
    case Kind::edited:
    case Kind::digest:
      verdicts.push_back(
          {"STALE", "lock.integrity", "envpin.lock was edited after envpin wrote it; fix: run 'envpin verify'"});
      break;
    case Kind::requirements:
      verdicts.push_back({"STALE", "lock.requirements", lock.problem + "; fix: run 'envpin verify'"});
      break;
    case Kind::stale:
      verdicts.push_back({"STALE", "lock.inputs", "the manifest changed after envpin.lock; fix: run 'envpin lock'"});
      break;
    case Kind::ok:
      verdicts.push_back({"ok", "lock.integrity", lock.lock->lock_digest});
      env.lock = lock.lock;
      break;
  }
  if (lock.kind != Kind::absent && lock.kind != Kind::ok) status |= 2;

  // The layers: the generated script for this manifest (and lock), run here.
  std::string script;
  for (const auto& a : render::render_all(m, env))
    if (a.path == m.outputs.check_env.value) script = a.bytes;
  char temp[] = "/tmp/envpin-check-XXXXXX";
  const int fd = ::mkstemp(temp);
  if (fd < 0) throw diag::Error("cannot create a temporary file in /tmp");
  ::close(fd);
  struct Remove {
    const char* path;
    ~Remove() { std::remove(path); }
  } remove_temp{temp};
  io::write_atomic(temp, script, false);
  std::vector<std::string> argv = {"sh", temp};
  if (o.allow_no_gpu) argv.push_back("--allow-no-gpu");
  if (o.smoke) argv.push_back("--smoke");
  if (o.require_gpu) argv.push_back("--require-gpu");
  // Outside the image, the smoke programs are the project's: envpin-smoke on PATH, .envpin/smoke.py.
  if (o.smoke && !fs::exists(render::kKernelSmokeInImage))
    if (const std::string k = io::find_on_path("envpin-smoke"); !k.empty())
      ::setenv("ENVPIN_SMOKE_KERNEL", k.c_str(), 0);
  if (o.smoke && !fs::exists(render::kFrameworkSmokeInImage))
    ::setenv("ENVPIN_SMOKE_PY", (m.project_dir / m.outputs.smoke_py.value).c_str(), 0);
  const std::string cwd_manifest = fs::absolute(o.manifest).string();
  // The script compares the manifest in the current directory; point it at ours.
  ::setenv("ENVPIN_MANIFEST", cwd_manifest.c_str(), 0);
  if (env.lock) ::setenv("ENVPIN_LOCK", lock_path.c_str(), 0);
  const io::ProcessResult r = io::run_process(argv);
  if (r.exit_code < 0 || r.exit_code == 64) throw diag::Error("cannot run the checks with sh: " + r.err);
  status |= r.exit_code;
  for (auto& v : parse_lines(r.out)) verdicts.push_back(std::move(v));

  if (o.deep) {
    std::vector<std::string> python_only, apt;
    if (env.lock) {
      for (const auto& p : env.lock->python) python_only.push_back(p.name);
      for (const auto& p : env.lock->apt) apt.push_back(p.name);
    } else {
      for (const auto& a : m.apt) apt.push_back(a.value.name);
    }
    if (m.python) {
      const char* py = std::getenv("ENVPIN_PYTHON");
      for (auto& v : deep_python(py && *py ? py : "python3", python_only)) verdicts.push_back(std::move(v));
    }
    for (auto& v : deep_apt(apt)) verdicts.push_back(std::move(v));
    for (const auto& v : verdicts)
      if (v.status == "MISMATCH" && v.name.starts_with("deep.")) status |= 1;
  }
  return result;
}

}  // namespace envpin::workflow

// SPDX-License-Identifier: Apache-2.0
// `envpin check`: this machine or container against the manifest and envpin.lock. The layer
// checks are the generated check_env.sh itself, rendered in memory for the current manifest and
// lock and run with /bin/sh: one implementation, so the CLI and the script in the image cannot
// drift apart. envpin adds what a script cannot do cheaply: the lock's integrity (bit 2 when it
// is stale or edited) and, with --deep, installed files against their RECORD and md5sums.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>

#include <unistd.h>
#include <cstdio>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/cursor.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/json_input.hpp"
#include "io/process.hpp"
#include "lock/lock.hpp"
#include "manifest/load.hpp"
#include "pin/sha256.hpp"
#include "render/render.hpp"
#include "resolve/environment.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

struct CheckOptions {
  std::string manifest = "envpin.yaml";
  bool quiet = false;
  bool allow_no_gpu = false;
  bool deep = false;
  bool json = false;
  bool smoke = false;
  bool require_gpu = false;
};

struct Verdict {
  std::string status;  // ok, MISMATCH, STALE, skip
  std::string name;
  std::string detail;
};

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

int check(const CheckOptions& o, Streams& io) {
  const manifest::Manifest m = manifest::load(o.manifest);
  resolve::Environment env = resolve::resolve(m);
  std::vector<Verdict> verdicts;
  int status = 0;

  // The lock: intact and current, or bit 2.
  const fs::path lock_path = m.project_dir / "envpin.lock";
  if (const auto text = io::read_file(lock_path)) {
    try {
      lock::Lock l = lock::parse(*text, lock_path.generic_string());
      if (lock::to_toml(l) != *text || lock::compute_lock_digest(l) != l.lock_digest) {
        verdicts.push_back(
            {"STALE", "lock.integrity", "envpin.lock was edited after envpin wrote it; fix: run 'envpin verify'"});
        status |= 2;
      } else if (const std::string problem =
                     lock::requirements_lock_problem(l, io::read_file(m.project_dir / "requirements.lock"));
                 !problem.empty()) {
        verdicts.push_back({"STALE", "lock.requirements", problem + "; fix: run 'envpin verify'"});
        status |= 2;
      } else if (l.inputs_digest != lock::inputs_digest(m)) {
        verdicts.push_back({"STALE", "lock.inputs", "the manifest changed after envpin.lock; fix: run 'envpin lock'"});
        status |= 2;
      } else {
        verdicts.push_back({"ok", "lock.integrity", l.lock_digest});
        env.lock = l;
      }
    } catch (const diag::Error& e) {
      verdicts.push_back({"STALE", "lock.integrity", e.message() + "; fix: run 'envpin lock'"});
      status |= 2;
    }
  } else {
    verdicts.push_back({"skip", "lock.integrity", "no envpin.lock; versions are checked against the manifest"});
  }

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

  int ok = 0, bad = 0, skipped = 0;
  for (const auto& v : verdicts) (v.status == "ok" ? ok : v.status == "skip" ? skipped : bad)++;
  if (o.json) {
    nlohmann::json j = {{"schema", "envpin.check/1"}, {"status", status}, {"verdicts", nlohmann::json::array()}};
    for (const auto& v : verdicts)
      j["verdicts"].push_back(
          {{"status", v.status}, {"name", diag::printable(v.name)}, {"detail", diag::printable(v.detail)}});
    io.out << j.dump(2) << "\n";
    return status;
  }
  for (const auto& v : verdicts) {
    if (o.quiet && (v.status == "ok" || v.status == "skip")) continue;
    std::string name_col = v.name;
    name_col.resize(std::max<std::size_t>(24, name_col.size()), ' ');
    // The details quote programs and files (a smoke program's line, a package's version): one
    // printable line each, as envpin prints all such text.
    io.out << diag::paint_verdict(io.out_term, v.status)
           << std::string(8 - std::min<std::size_t>(8, v.status.size()), ' ') << " " << diag::printable(name_col) << " "
           << diag::printable(v.detail) << "\n";
  }
  io.out << "envpin check: " << ok << " ok, " << bad << " mismatch, " << skipped << " skipped\n";
  return status;
}

}  // namespace

Command check_command() {
  return {"check", "check this machine or container against the manifest and envpin.lock (exit bitmask 1/2/4)",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<CheckOptions>();
            app.add_option("-f,--manifest", o->manifest, "the manifest")->capture_default_str();
            app.add_flag("-q,--quiet", o->quiet, "print only problems and the summary");
            app.add_flag("--allow-no-gpu", o->allow_no_gpu, "GPU checks become skips on machines without a GPU");
            app.add_flag("--smoke", o->smoke,
                         "also run the smoke tests (the CUDA kernel, the framework smoke); a kernel without a GPU "
                         "is a skip");
            app.add_flag("--require-gpu", o->require_gpu, "with --smoke: no GPU is a mismatch, not a skip");
            app.add_flag("--deep", o->deep, "also hash installed Python files (RECORD) and deb files (md5sums); slow");
            app.add_flag("--json", o->json, "print the verdicts as JSON (schema envpin.check/1)");
            return [o](Streams& io) { return check(*o, io); };
          }};
}

}  // namespace envpin::cli

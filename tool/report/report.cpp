// SPDX-License-Identifier: Apache-2.0
#include "report/report.hpp"

#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <set>
#include <sstream>

#include "diag/cursor.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/json_input.hpp"
#include "io/process.hpp"
#include "lock/lock.hpp"
#include "manifest/requirement.hpp"
#include "probe/gpu_probe.hpp"
#include "report/smoke.hpp"
#include "resolve/cuda_tables.hpp"

namespace envpin::report {
namespace {

// The CUDA version torch was built with, from its torch/version.py: "cuda: Optional[str] = '12.1'"
// (or "cuda = '11.8'"); "" for a CPU build ("cuda = None") or a file without it.
std::string torch_version_py_cuda(std::string_view text) {
  const auto space = [](char x) { return x == ' ' || x == '\t' || x == '\n' || x == '\r'; };
  for (std::size_t at = text.find("cuda"); at != std::string_view::npos; at = text.find("cuda", at + 1)) {
    diag::Cursor c{text, at + 4};
    if (c.eat(":")) c.span([](char x) { return x != '='; });
    c.span(space);
    if (!c.eat("=")) continue;
    c.span(space);
    if (!c.eat("'")) continue;
    const std::string_view value = c.span([](char x) { return x != '\''; });
    if (c.eat("'")) return std::string(value);
  }
  return "";
}

namespace fs = std::filesystem;
using nlohmann::json;

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  return s;
}

// KEY=value lines, values unquoted.
std::map<std::string, std::string> os_release(const std::string& file) {
  std::map<std::string, std::string> out;
  const auto text = io::read_file(file);
  if (!text) return out;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string v = line.substr(eq + 1);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
    out[line.substr(0, eq)] = v;
  }
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("model name") || line.starts_with("Model")) return trim(line.substr(line.find(':') + 1));
  return "";
}

json container() {
  if (fs::exists("/.dockerenv")) return {{"value", true}, {"how", "/.dockerenv exists"}};
  if (fs::exists("/run/.containerenv")) return {{"value", true}, {"how", "/run/.containerenv exists"}};
  const auto cgroup = io::read_file("/proc/1/cgroup");
  const auto names = [&](std::string_view runtime) { return cgroup->find(runtime) != std::string::npos; };
  if (cgroup && (names("docker") || names("kubepods") || names("containerd") || names("libpod")))
    return {{"value", true}, {"how", "/proc/1/cgroup names a container runtime"}};
  return {{"value", false}, {"how", "no /.dockerenv, /run/.containerenv or container cgroup"}};
}

json system_layer(const ReportOptions& o) {
  json s;
  const auto os = os_release(o.os_release);
  s["os"] = {{"id", os.count("ID") ? os.at("ID") : ""},
             {"version", os.count("VERSION_ID") ? os.at("VERSION_ID") : ""},
             {"name", os.count("PRETTY_NAME") ? os.at("PRETTY_NAME") : ""},
             {"how", os.empty() ? o.os_release + " missing" : o.os_release}};
  utsname u{};
  uname(&u);
  s["kernel"] = {{"value", std::string(u.release)}, {"how", "uname(2)"}};
  s["arch"] = {{"value", std::string(u.machine)}, {"how", "uname(2)"}};
  s["cpu"] = {{"value", cpu_model()}, {"how", "/proc/cpuinfo"}};
  s["glibc"] = {{"value", std::string(gnu_get_libc_version())}, {"how", "gnu_get_libc_version()"}};
  s["container"] = container();
  json compilers = json::object();
  for (const char* cc : {"gcc", "clang"}) {
    if (io::find_on_path(cc).empty()) continue;
    const auto r = io::run_process({cc, "-dumpversion"});
    if (r.exit_code == 0) compilers[cc] = {{"value", trim(r.out)}, {"how", std::string(cc) + " -dumpversion"}};
  }
  s["compilers"] = compilers;
  return s;
}

std::string cudnn_version() {
  for (const char* dir :
       {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/cuda/lib64", "/usr/local/cuda/lib"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      // libcudnn.so.MAJOR.MINOR.PATCH (the fully versioned name, not the links to it)
      constexpr std::string_view kPrefix = "libcudnn.so.";
      if (!name.starts_with(kPrefix)) continue;
      const std::string version = name.substr(kPrefix.size());
      diag::Cursor c{version};
      bool numeric = c.digits().has_value();
      while (numeric && c.eat(".")) numeric = c.digits().has_value();
      if (numeric && c.done() && std::count(name.begin(), name.end(), '.') >= 4)
        return version + " (" + e.path().string() + ")";
    }
  }
  return "";
}

json gpu_layer() {
  const probe::GpuProbe p = probe::probe_machine(probe::options_from_environment());
  json g = json::parse(probe::probe_json(p));
  const char* cuda_home = std::getenv("CUDA_HOME");
  g["cuda_home"] = cuda_home ? cuda_home : (fs::exists("/usr/local/cuda") ? "/usr/local/cuda" : "");
  g["cudnn"] = cudnn_version();
  g["how"] = p.source.empty() ? "no NVIDIA driver: NVML, nvidia-smi and /proc/driver/nvidia all absent"
                              : "driver via " + p.source;
  return g;
}

// METADATA / PKG-INFO "Name:" and "Version:" of a .dist-info or .egg-info directory, or of an
// .egg-info that is itself the PKG-INFO file (as some Debian python3-* packages install it).
std::pair<std::string, std::string> dist_name_version(const fs::path& dir) {
  std::error_code ec;
  const bool plain = fs::is_regular_file(dir, ec);
  for (const char* file : {"METADATA", "PKG-INFO"}) {
    std::ifstream in(plain ? dir : dir / file);
    if (!in) continue;
    std::string line, name, version;
    while (std::getline(in, line) && !line.empty()) {
      if (line.starts_with("Name: ")) name = trim(line.substr(6));
      if (line.starts_with("Version: ")) version = trim(line.substr(9));
    }
    return {name, version};
  }
  return {};
}

// The interpreter a pyenv shim would run, by pyenv's documented rule: the first of
// $PYENV_VERSION, the nearest .python-version from the working directory up, $PYENV_ROOT/version;
// each names versions (whitespace or ':' separated) tried in order for versions/<v>/bin/<name>.
// Empty when the rule does not settle it ("system", nothing installed, not a pyenv shim): then the
// shim itself is run. Running the shim costs ~0.08 s of bash before Python starts.
std::string pyenv_shim_target(const fs::path& shim) {
  const fs::path dir = shim.parent_path();
  if (dir.filename() != "shims") return "";
  const char* env_root = std::getenv("PYENV_ROOT");
  const fs::path root = env_root && *env_root ? fs::path(env_root) : dir.parent_path();
  std::error_code ec;
  if (fs::weakly_canonical(root / "shims", ec) != fs::weakly_canonical(dir, ec) ||
      !fs::is_directory(root / "versions", ec))
    return "";
  std::string versions;
  if (const char* v = std::getenv("PYENV_VERSION"); v && *v) {
    versions = v;
  } else {
    for (fs::path d = fs::current_path(ec); !ec && !d.empty(); d = d.parent_path()) {
      if (const auto text = io::read_file(d / ".python-version")) {
        versions = *text;
        break;
      }
      if (d == d.root_path()) break;
    }
    if (versions.empty())
      if (const auto text = io::read_file(root / "version")) versions = *text;
  }
  // Comments (to the end of the line) and ':' separators become spaces.
  std::string spaced;
  for (std::size_t i = 0; i < versions.size(); ++i) {
    if (versions[i] == '#') {
      const std::size_t eol = versions.find('\n', i);
      spaced += ' ';
      if (eol == std::string::npos) break;
      i = eol - 1;
      continue;
    }
    spaced += versions[i] == ':' ? ' ' : versions[i];
  }
  std::istringstream words(spaced);
  for (std::string v; words >> v;) {
    if (v == "system") return "";
    const fs::path exe = root / "versions" / v / "bin" / shim.filename();
    if (::access(exe.c_str(), X_OK) == 0) return exe.string();
  }
  return "";
}

json python_interpreter(const std::string& command) {
  // One run per interpreter: its version and where it looks for packages.
  const std::string behind_shim = pyenv_shim_target(command);
  const std::string exe = behind_shim.empty() ? command : behind_shim;
  const auto r = io::run_process(
      {exe, "-c",
       "import sys, json, os; print(json.dumps([sys.version.split()[0], os.path.realpath(sys.executable), sys.path]))"});
  json py = {{"command", command}};
  if (!behind_shim.empty())
    py["shim"] = "pyenv shim resolved to " + behind_shim + " by PYENV_VERSION/.python-version/version";
  if (r.exit_code != 0) {
    py["error"] = trim(r.err.empty() ? r.out : r.err);
    return py;
  }
  // The interpreter's answer is program output: read only as the three values asked for.
  const json info = io::parse_bounded_json(r.out);
  if (!info.is_array() || info.size() != 3 || !info[0].is_string() || !info[1].is_string() || !info[2].is_array()) {
    py["error"] = "it printed no answer envpin reads: " + diag::quote(trim(r.out), 200);
    return py;
  }
  py["version"] = diag::printable(info[0].get<std::string>());
  py["executable"] = diag::printable(info[1].get<std::string>());
  json packages = json::object();
  for (const auto& entry : info[2]) {
    if (!entry.is_string()) continue;
    const std::string dir = entry.get<std::string>();
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (!name.ends_with(".dist-info") && !name.ends_with(".egg-info")) continue;
      const auto [n, v] = dist_name_version(e.path());
      if (!n.empty() && !packages.contains(manifest::normalize_name(n))) packages[manifest::normalize_name(n)] = v;
      if (manifest::normalize_name(n) == "torch" && !py.contains("torch")) {
        // torch/version.py holds the CUDA it was built with; reading it needs no import.
        const auto version_py = io::read_file(fs::path(dir) / "torch/version.py");
        const std::string cuda = version_py ? torch_version_py_cuda(*version_py) : "";
        py["torch"] = {{"version", v}, {"cuda", cuda}, {"how", (fs::path(dir) / "torch/version.py").string()}};
        // The kernels the official wheel of that variant carries (envpin's table), without
        // importing torch.
        json archs = json::array();
        if (const resolve::TorchVariant* wheel = resolve::find_torch_variant(v, cuda)) {
          for (int sm : wheel->sass) archs.push_back("sm_" + std::to_string(sm));
          if (wheel->ptx) archs.push_back("compute_" + std::to_string(wheel->ptx));
        }
        py["torch"]["archs"] = archs;
        py["torch"]["archs_how"] = "envpin's table of official " + v + " wheels (a custom build may differ)";
      }
    }
  }
  py["packages"] = packages;
  py["how"] = "installed metadata (*.dist-info, *.egg-info) in every directory of the interpreter's sys.path";
  return py;
}

json dpkg_packages(const std::string& status) {
  json out = json::object();
  std::ifstream in(status);
  if (!in) return out;
  std::string line, name, version, state;
  auto flush = [&] {
    if (!name.empty() && state.find(" installed") != std::string::npos) out[name] = version;
    name.clear();
    version.clear();
    state.clear();
  };
  while (std::getline(in, line)) {
    if (line.empty())
      flush();
    else if (line.starts_with("Package: "))
      name = line.substr(9);
    else if (line.starts_with("Version: "))
      version = line.substr(9);
    else if (line.starts_with("Status: "))
      state = line.substr(8);
  }
  flush();
  return out;
}

json packages_layer(const manifest::Manifest* m, const ReportOptions& o) {
  json p;
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("ENVPIN_PYTHON"); e && *e) candidates.push_back(e);
  for (const char* name : {"python3", "python"})
    if (const std::string path = io::find_on_path(name); !path.empty()) candidates.push_back(path);
  (void)m;
  // Asked in parallel (version managers' shims take ~0.1 s each to start), listed once per
  // interpreter they turn out to be.
  // A version manager's shims directory (pyenv, asdf: .../shims/python and .../shims/python3,
  // bash scripts that cost ~0.08 s each to resolve) is asked once, through its first name: both
  // names resolve to the same selected version there.
  std::set<std::string> seen;
  std::vector<std::future<json>> asked;
  for (const auto& c : candidates) {
    std::error_code ec;
    const std::string real = fs::canonical(c, ec).string();
    const fs::path dir = fs::path(c).parent_path();
    const std::string key = dir.filename() == "shims" ? dir.string() : ec ? c : real;
    if (!seen.insert(key).second) continue;
    asked.push_back(std::async(std::launch::async, python_interpreter, c));
  }
  std::set<std::string> executables;
  p["python"] = json::array();
  for (auto& f : asked) {
    json py = f.get();
    if (executables.insert(py.value("executable", py.value("command", ""))).second) p["python"].push_back(py);
  }
  p["dpkg"] = dpkg_packages(o.dpkg_status);
  p["dpkg_how"] = fs::exists(o.dpkg_status) ? o.dpkg_status : o.dpkg_status + " missing (not a Debian system)";
  return p;
}

json config_layer(const manifest::Manifest* m) {
  json c = {{"env", json::object()}, {"secrets", json::object()}, {"paths", json::object()}};
  if (!m) {
    c["how"] = "no manifest";
    return c;
  }
  for (const auto& e : m->env) {
    const char* v = std::getenv(e.name.value.c_str());
    c["env"][e.name.value] = v ? json(v) : json(nullptr);
  }
  for (const auto& s : m->secrets) {
    const char* v = std::getenv(s.value.c_str());
    c["secrets"][s.value] = v && *v ? "set" : "unset";  // never the value
  }
  for (const auto& p : m->paths) {
    std::string path = p.value.value;
    // ${NAME} from this environment, else the manifest's env default.
    // Each ${NAME} once, left to right; a value is never expanded again.
    std::string expanded;
    for (std::size_t i = 0; i < path.size();) {
      const std::size_t open = path.find("${", i);
      const std::size_t close = open == std::string::npos ? open : path.find('}', open + 2);
      const std::string name = close == std::string::npos ? "" : path.substr(open + 2, close - open - 2);
      if (name.empty() || diag::is_digit(name[0]) || !diag::only_ascii(name, "_")) {
        const std::size_t next = open == std::string::npos ? path.size() : open + 1;
        expanded += path.substr(i, next - i);
        i = next;
        continue;
      }
      std::string value;
      if (const char* v = std::getenv(name.c_str()))
        value = v;
      else
        for (const auto& e : m->env)
          if (e.name.value == name) value = e.value.value;
      expanded += path.substr(i, open - i) + value;
      i = close + 1;
    }
    path = expanded;
    c["paths"][p.name.value] = {{"path", path}, {"exists", fs::exists(path)}};
  }
  const auto lock = io::read_file(m->project_dir / "envpin.lock");
  std::string lock_digest;
  if (const std::size_t at = lock ? lock->find("\nlock-digest = \"") : std::string::npos; at != std::string::npos) {
    const std::size_t start = at + std::string_view("\nlock-digest = \"").size();
    const std::size_t end = lock->find('"', start);
    if (end != std::string::npos && end > start) lock_digest = lock->substr(start, end - start);
  }
  c["lock_digest"] = lock_digest;
  c["manifest"] = m->file;
  c["how"] = "environment of this process, checked against " + m->file;
  return c;
}

}  // namespace

ReportOptions options_from_environment() {
  ReportOptions o;
  if (const char* p = std::getenv("ENVPIN_OS_RELEASE"); p && *p) o.os_release = p;
  if (const char* p = std::getenv("ENVPIN_DPKG_STATUS"); p && *p) o.dpkg_status = p;
  return o;
}

json collect(const manifest::Manifest* m, const ReportOptions& o) {
  json r;
  r["schema"] = kSchema;
  // The layers ask different programs (python interpreters behind version-manager shims, gcc,
  // nvcc, nvidia-smi) and share nothing: they are collected at the same time.
  auto packages = std::async(std::launch::async, packages_layer, m, std::cref(o));
  auto gpu = std::async(std::launch::async, gpu_layer);
  r["system"] = system_layer(o);
  r["gpu"] = gpu.get();
  r["packages"] = packages.get();
  r["config"] = config_layer(m);
  return r;
}

static std::string indent(const std::string& lines) {
  std::string out;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);) out += "  " + line + "\n";
  return out;
}

std::string format(const json& r) {
  std::ostringstream out;
  auto row = [&](const std::string& key, const std::string& value) {
    out << "  " << key << std::string(key.size() < 14 ? 14 - key.size() : 1, ' ') << value << "\n";
  };
  const json& s = r["system"];
  out << "system\n";
  row("os", s["os"].value("name", "") + (s["os"].value("id", "").empty() ? "unknown" : ""));
  row("arch", s["arch"].value("value", ""));
  row("kernel", s["kernel"].value("value", ""));
  row("cpu", s["cpu"].value("value", ""));
  row("glibc", s["glibc"].value("value", ""));
  row("container", s["container"].value("value", false) ? "yes (" + s["container"].value("how", "") + ")" : "no");
  for (auto& [k, v] : s["compilers"].items()) row(k, v.value("value", ""));
  const json& g = r["gpu"];
  out << "gpu\n";
  if (g.value("source", "").empty()) {
    row("driver", "none: no NVIDIA driver or GPU found");
  } else {
    row("driver", g.value("driver", "") +
                      (g.value("cuda_driver", "").empty() ? "" : " (CUDA " + g.value("cuda_driver", "") + ")"));
    for (const auto& gpu : g["gpus"])
      row("gpu", gpu.value("name", "") + ", sm_" + std::to_string(gpu.value("sm", 0)) + ", " +
                     std::to_string(gpu.value("memory_mib", 0)) + " MiB");
  }
  row("cuda runtime", g.value("cuda_runtime", "").empty() ? "none" : g.value("cuda_runtime", ""));
  row("nvcc", g.value("nvcc", "").empty() ? "none" : g.value("nvcc", ""));
  row("cudnn", g.value("cudnn", "").empty() ? "none" : g.value("cudnn", ""));
  const json& p = r["packages"];
  out << "packages\n";
  for (const auto& py : p["python"]) {
    row("python", py.value("version", "?") + " (" + py.value("executable", py.value("command", "")) + "), " +
                      std::to_string(py.contains("packages") ? py["packages"].size() : 0) + " distributions");
    if (py.contains("torch"))
      row("torch",
          py["torch"].value("version", "") +
              (py["torch"].value("cuda", "").empty() ? " (CPU)" : " (CUDA " + py["torch"].value("cuda", "") + ")"));
  }
  row("dpkg", std::to_string(p["dpkg"].size()) + " installed packages");
  const json& c = r["config"];
  out << "config\n";
  if (c.value("how", "") == "no manifest") row("manifest", "none given");
  for (auto& [k, v] : c["env"].items()) row(k, v.is_null() ? "unset" : v.get<std::string>());
  for (auto& [k, v] : c["secrets"].items()) row(k, v.get<std::string>() + " (value not shown)");
  for (auto& [k, v] : c["paths"].items())
    row("path." + k, v.value("path", "") + (v.value("exists", false) ? " exists" : " missing"));
  if (c.contains("lock_digest"))
    row("lock", c["lock_digest"].get<std::string>().empty() ? "none" : c["lock_digest"].get<std::string>());
  if (r.contains("smoke")) out << "smoke\n" << indent(format_smoke(r["smoke"]));
  return out.str();
}

}  // namespace envpin::report

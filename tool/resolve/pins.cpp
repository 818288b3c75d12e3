// SPDX-License-Identifier: Apache-2.0
#include "resolve/pins.hpp"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "diag/cursor.hpp"
#include "diag/error.hpp"
#include "envpin_version.hpp"
#include "io/atomic_file.hpp"
#include "io/decompress.hpp"
#include "io/process.hpp"
#include "manifest/requirement.hpp"
#include "net/http.hpp"
#include "net/registry.hpp"
#include "pin/sha256.hpp"
#include "resolve/torch_range.hpp"

namespace envpin::resolve {
namespace {

namespace fs = std::filesystem;
using diag::Error;
using lock::AptPackage;
using lock::AptSource;
using lock::Cuda;
using lock::Image;
using lock::inputs_digest;
using lock::Lock;
using lock::PythonPackage;
using lock::seal;
using nlohmann::json;

std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The first lines starting with "E:" or "ERROR:" (what apt and pip say is wrong).
std::string tool_errors(const std::string& err) {
  std::istringstream lines(err);
  std::string line, out;
  while (std::getline(lines, line))
    if (line.starts_with("E: ") || line.starts_with("ERROR: ")) out += (out.empty() ? "" : "; ") + line;
  if (out.empty()) {
    std::istringstream again(err);
    while (std::getline(again, line))
      if (!line.empty()) out = line;  // the last non-empty line
  }
  return out;
}

std::string container_engine(const ResolveOptions& o) {
  return o.engine.empty() ? io::find_container_engine({"ENVPIN_CONTAINER_ENGINE"}) : o.engine;
}

// `reference` by digest, for the manifest's platforms; errors are placed at `where`.
Image resolve_image(const std::string& reference, const resolve::Environment& env, std::optional<diag::Location> where,
                    const ResolveOptions& o) {
  net::RegistryOptions ro;
  ro.insecure = o.insecure_registries;
  if (const char* e = std::getenv("ENVPIN_INSECURE_REGISTRIES"); e && *e) {
    std::istringstream list(e);
    std::string item;
    while (std::getline(list, item, ',')) ro.insecure.push_back(item);
  }
  ro.http.progress = o.progress;
  if (o.progress) o.progress("resolving image " + reference);
  net::ResolvedImage r;
  try {
    r = net::resolve_image(reference, env.platforms, ro);
  } catch (const Error& e) {
    throw Error(e.message(), where, e.hint());
  }
  Image image;
  image.requested = reference;
  image.reference = reference.substr(0, reference.find('@')) + "@" + r.digest;
  image.digest = r.digest;
  image.media_type = r.media_type;
  for (const auto& p : r.platforms) image.platforms.push_back({p.platform, p.manifest, p.config, p.size});
  return image;
}

const manifest::Located<manifest::AptPackage>* apt_entry(const manifest::Manifest& m, const std::string& message) {
  for (const auto& a : m.apt)
    if (message.find("'" + a.value.name + "'") != std::string::npos ||
        message.find("package " + a.value.name) != std::string::npos)
      return &a;
  return nullptr;
}

// Without a container engine: the distribution's Packages index over HTTP, for the requested
// packages only. Their dependencies are not resolved, and the lock says so (apt-closure = "partial").
void resolve_apt_from_index(const manifest::Manifest& m, const resolve::Environment& env, const ResolveOptions& o,
                            Lock& lock) {
  if (env.os_id.empty() || env.codename.empty())
    throw Error("no container engine to run apt, and the OS of the base image is unknown", m.apt.front().where,
                "set os (e.g. 'os: debian12'), or install docker.io or podman");
  const std::string arch = env.machines.empty() || env.machines.front() == "x86_64" ? "amd64" : "arm64";
  std::string mirror;
  if (const char* e = std::getenv("ENVPIN_APT_MIRROR"); e && *e)
    mirror = e;
  else if (env.os_id == "debian")
    mirror = "http://deb.debian.org/debian";
  else
    mirror = arch == "amd64" ? "http://archive.ubuntu.com/ubuntu" : "http://ports.ubuntu.com/ubuntu-ports";
  while (mirror.ends_with("/")) mirror.pop_back();
  const std::string dir = mirror + "/dists/" + env.codename + "/main/binary-" + arch + "/";
  net::HttpOptions http;
  http.progress = o.progress;
  std::string text;
  for (const char* name : {"Packages.xz", "Packages.gz"}) {
    if (o.progress) o.progress("no container engine: reading " + dir + name + " (requested packages only)");
    const net::Response r = net::fetch(net::Request{"GET", dir + name, {}, {}, false}, http);
    if (r.status == 200) {
      text = io::decompress(r.body, dir + name);
      break;
    }
  }
  if (text.empty())
    throw Error("cannot read the Packages index under " + dir, m.apt.front().where,
                "set ENVPIN_APT_MIRROR to a reachable mirror, or install docker.io or podman");
  std::vector<std::string> names;
  for (const auto& a : m.apt) names.push_back(a.value.name);
  const std::vector<IndexEntry> entries = scan_packages_index(text, names);
  const std::string id = mirror.substr(mirror.find("://") == std::string::npos ? 0 : mirror.find("://") + 3);
  lock.apt_sources.push_back({id, mirror});
  for (const auto& a : m.apt) {
    const IndexEntry* hit = nullptr;
    for (const auto& e : entries)
      if (e.name == a.value.name && (a.value.version.empty() || e.version == a.value.version)) hit = &e;
    if (!hit)
      throw Error("'" + (a.value.version.empty() ? a.value.name : a.value.name + "=" + a.value.version) +
                      "' is not in " + dir + "Packages",
                  a.where, "check the name and version (apt-cache policy " + a.value.name + ")");
    AptPackage p;
    p.name = a.value.name;
    p.version = hit->version;
    p.arch = hit->arch.empty() ? arch : hit->arch;
    p.requested = a.value.version.empty() ? a.value.name : a.value.name + "=" + a.value.version;
    p.source = id;
    p.filename = hit->filename;
    p.size = hit->size;
    p.sha256 = hit->sha256;
    lock.apt.push_back(p);
  }
  lock.apt_closure = "partial";
  if (o.progress)
    o.progress(
        "warning: the apt closure is partial: only the requested packages are pinned, not their "
        "dependencies; install docker.io or podman for the full closure");
}

void resolve_apt(const manifest::Manifest& m, const resolve::Environment& env, const Image& image,
                 const ResolveOptions& o, Lock& lock) {
  const std::string engine = container_engine(o);
  if (engine.empty() || engine == "none") return resolve_apt_from_index(m, env, o, lock);
  std::string packages;
  for (const auto& a : m.apt)
    packages += " '" + (a.value.version.empty() ? a.value.name : a.value.name + "=" + a.value.version) + "'";
  std::string names;
  for (const auto& a : m.apt) names += " '" + a.value.name + "'";
  // apt's own solver in the pinned image: what would be installed (simulation), plus the
  // requested packages the image already has, then the exact file and SHA256 of each.
  const std::string script =
      "set -e\n"
      "export DEBIAN_FRONTEND=noninteractive\n"
      "apt-get update -qq >/dev/null\n"
      "apt-get install -s -y --no-install-recommends" +
      packages +
      " > /tmp/envpin-sim\n"
      "sed -n 's/^Inst \\([^ ]*\\) (\\([^ ]*\\) .*/\\1=\\2/p' /tmp/envpin-sim > /tmp/envpin-pins\n"
      "for p in" +
      names +
      "; do\n"
      "  grep -q \"^$p=\" /tmp/envpin-pins || dpkg-query -W -f='${Package}=${Version}\\n' \"$p\" >> /tmp/envpin-pins\n"
      "done\n"
      "cd /tmp && xargs apt-get download --print-uris < /tmp/envpin-pins\n";
  if (o.progress) o.progress("resolving the apt closure with " + engine + " in " + image.reference);
  std::vector<std::string> argv = {engine, "run", "--rm", "--network", "host"};
  if (env.platforms.size() == 1) argv.insert(argv.end(), {"--platform", env.platforms.front()});
  argv.insert(argv.end(), {"--entrypoint", "sh", image.reference, "-c", script});
  const io::ProcessResult r = io::run_process(argv);
  if (r.exit_code != 0) {
    const std::string why = tool_errors(r.err);
    const auto* entry = apt_entry(m, why);
    throw Error("apt cannot resolve the packages in " + image.reference + ": " + why,
                entry ? std::optional(entry->where) : std::optional(m.apt.front().where),
                "check the package names and versions exist in that image's apt sources");
  }
  lock.apt = parse_apt_print_uris(r.out, lock.apt_sources);
  lock.apt_closure = "full";
  std::set<std::string> found;
  for (auto& p : lock.apt) {
    found.insert(p.name);
    for (const auto& a : m.apt)
      if (a.value.name == p.name)
        p.requested = a.value.version.empty() ? a.value.name : a.value.name + "=" + a.value.version;
  }
  for (const auto& a : m.apt)
    if (!found.count(a.value.name))
      throw Error("apt gave no download for '" + a.value.name + "' in " + image.reference +
                      " (its installed version is in no index the image knows)",
                  a.where, "pin a version the image's sources still carry");
}

}  // namespace

// Each wheel's size, for `envpin size` and the layers by weight. A file the previous lock holds
// with the same sha256 keeps its size there: the same bytes, and a lock that does not change
// when the index is slow or down. Else a HEAD of its URL, eight at a time, each given 10 s and
// one try. Content-Length is the server's word, so it is only taken as a whole number of bytes
// up to 1 TiB; a wheel whose server does not say (or refuses a HEAD, or needs credentials), or
// that is not asked once a minute has passed, keeps size 0, and `envpin size` counts it as unknown.
void record_wheel_sizes(std::vector<PythonPackage>& packages, const std::optional<lock::Lock>& previous) {
  std::map<std::string, std::int64_t> known;  // sha256 -> size
  if (previous)
    for (const auto& p : previous->python)
      for (const auto& f : p.files)
        if (f.size > 0) known.emplace(f.sha256, f.size);
  std::vector<lock::WheelFile*> files;
  for (auto& p : packages)
    for (auto& f : p.files) {
      if (const auto it = known.find(f.sha256); it != known.end()) {
        f.size = it->second;
        continue;
      }
      files.push_back(&f);
    }
  net::HttpOptions http;
  http.stall_s = std::min<long>(10, net::network_timeout_s());
  http.connect_timeout_s = 10;
  http.timeout_s = 30;
  http.attempts = 1;
  const auto size_of = [&](const std::string& url) -> std::int64_t {
    try {
      const net::Response r = net::fetch({"HEAD", url, {}, {}, true}, http);
      const std::string length = r.header("content-length");
      if (r.status != 200 || length.empty() || length.size() > 13 ||
          length.find_first_not_of("0123456789") != std::string::npos)
        return 0;
      const std::int64_t n = std::stoll(length);
      return n <= (std::int64_t{1} << 40) ? n : 0;
    } catch (const Error&) {
      return 0;
    }
  };
  constexpr std::size_t kParallel = 8;
  // The index's answers are not worth more than a minute of the lock: the rest stay unknown.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (std::size_t from = 0; from < files.size() && std::chrono::steady_clock::now() < deadline; from += kParallel) {
    std::vector<std::future<std::int64_t>> sizes;
    for (std::size_t i = from; i < std::min(files.size(), from + kParallel); ++i)
      sizes.push_back(std::async(std::launch::async, size_of, files[i]->url));
    for (std::size_t i = 0; i < sizes.size(); ++i) files[from + i]->size = sizes[i].get();
  }
}

namespace {

void resolve_python(const manifest::Manifest& m, const resolve::Environment& env, const ResolveOptions& o, Lock& lock) {
  const manifest::Python& py = *m.python;
  std::string python = o.python;
  if (python.empty()) {
    const char* e = std::getenv("ENVPIN_PIP_PYTHON");
    python = e && *e ? e : "python3";
  }
  const fs::path scratch = fs::temp_directory_path() / ("envpin-pip-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{scratch};

  std::string requirements;
  // A torch range resolves to the release the CUDA policy chose, as the Dockerfile installs it.
  const std::string torch_minor = resolve::torch_range_minor(env);
  for (const auto& r : py.packages) requirements += resolve::pin_torch_range(r.value, torch_minor).text() + "\n";
  for (const auto& r : py.requirement_lines)
    requirements += resolve::pin_torch_range(r.value, torch_minor).text() + "\n";
  io::write_atomic(scratch / "requirements.in", requirements, false);

  const std::string machine = env.machines.empty() ? "x86_64" : env.machines.front();
  const std::string glibc = env.glibc.empty() ? "2.28" : env.glibc;
  std::string glibc_tag = glibc;
  std::replace(glibc_tag.begin(), glibc_tag.end(), '.', '_');
  const std::string version = py.version.value.substr(0, py.version.value.find('.', py.version.value.find('.') + 1));
  std::string abi = "cp" + version;
  abi.erase(std::remove(abi.begin(), abi.end(), '.'), abi.end());
  // pip's resolver for the target, not for this host (pip 23 wants --target with --platform).
  std::vector<std::string> argv = {python, "-m", "pip", "--isolated", "--disable-pip-version-check", "install",
                                   "--dry-run", "--ignore-installed", "--quiet",
                                   // pip's own wait per request and retries (its defaults: 15 s, 5).
                                   "--timeout", std::to_string(net::network_timeout_s()), "--retries", "1", "--report",
                                   (scratch / "report.json").string(), "--target", (scratch / "target").string(),
                                   "--only-binary=:all:", "--platform", "manylinux_" + glibc_tag + "_" + machine,
                                   "--python-version", version, "--implementation", "cp", "--abi", abi, "--abi", "abi3",
                                   "--abi", "none"};
  lock.python_index = py.index ? py.index->value : "https://pypi.org/simple";
  argv.insert(argv.end(), {"--index-url", lock.python_index});
  for (const auto& u : py.extra_index) argv.insert(argv.end(), {"--extra-index-url", u.value});
  if (env.cuda && env.cuda->torch) {
    bool has = false;
    for (const auto& u : py.extra_index) has = has || u.value == env.cuda->torch->index_url;
    if (!has && (!py.index || py.index->value != env.cuda->torch->index_url))
      argv.insert(argv.end(), {"--extra-index-url", env.cuda->torch->index_url});
  }
  argv.insert(argv.end(), {"-r", (scratch / "requirements.in").string()});
  if (o.progress) o.progress("resolving wheels with " + python + " -m pip for " + abi + " " + machine);
  const io::ProcessResult r = io::run_process(argv);
  if (r.exit_code != 0) {
    const std::string why = tool_errors(r.err);
    // Name the manifest entry pip complains about.
    std::optional<diag::Location> where = py.version.where;
    for (const auto* list : {&py.packages, &py.requirement_lines})
      for (const auto& req : *list)
        if (why.find(req.value.name) != std::string::npos) where = req.where;
    throw Error("pip cannot resolve the Python packages for " + abi + " " + machine + ": " + why, where,
                "check that every package has a wheel for this Python and platform on the index");
  }
  const auto report = io::read_file(scratch / "report.json");
  if (!report) throw Error("pip wrote no report (" + (scratch / "report.json").string() + ")");
  lock.python = parse_pip_report(*report);
  if (o.progress) o.progress("asking the index for the size of each wheel");
  record_wheel_sizes(lock.python, o.previous);
  for (auto& p : lock.python)
    for (const auto* list : {&py.packages, &py.requirement_lines})
      for (const auto& req : *list)
        if (req.value.normalized == p.name) p.requested = req.value.text();
}

}  // namespace

std::vector<IndexEntry> scan_packages_index(std::string_view text, const std::vector<std::string>& wanted) {
  // One pass from stanza to stanza ("\n\n"); a stanza's first field is its Package, so the
  // fields of the other 99.9% of packages are never looked at.
  std::vector<IndexEntry> out;
  const std::set<std::string_view> names(wanted.begin(), wanted.end());
  constexpr std::string_view kPackage = "Package: ";
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find("\n\n", start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view stanza = text.substr(start, end - start);
    start = end + 2;
    if (!stanza.starts_with(kPackage)) continue;
    const std::size_t name_end = std::min(stanza.find('\n'), stanza.size());
    const std::string_view name = stanza.substr(kPackage.size(), name_end - kPackage.size());
    if (!names.count(name)) continue;
    IndexEntry e;
    e.name = std::string(name);
    for (std::size_t line_start = name_end + 1; line_start < stanza.size();) {
      const std::size_t line_end = std::min(stanza.find('\n', line_start), stanza.size());
      const std::string_view line = stanza.substr(line_start, line_end - line_start);
      line_start = line_end + 1;
      const auto colon = line.find(": ");
      if (colon == std::string_view::npos || line[0] == ' ') continue;
      const std::string_view key = line.substr(0, colon), value = line.substr(colon + 2);
      if (key == "Version")
        e.version = std::string(value);
      else if (key == "Architecture")
        e.arch = std::string(value);
      else if (key == "Filename")
        e.filename = std::string(value);
      else if (key == "Size")
        e.size = std::stoll(std::string(value));
      else if (key == "SHA256")
        e.sha256 = std::string(value);
    }
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

struct PrintUrisLine {
  std::string_view uri, file;
  long long size = 0;
  std::string_view sha256;
};

std::optional<PrintUrisLine> parse_print_uris_line(std::string_view line) {
  diag::Cursor c{line};
  PrintUrisLine out;
  if (!c.eat("'")) return std::nullopt;
  out.uri = c.span([](char x) { return x != '\''; });
  if (out.uri.empty() || !c.eat("' ")) return std::nullopt;
  out.file = c.span([](char x) { return x != ' ' && x != '\t'; });
  if (out.file.empty() || !c.eat(" ")) return std::nullopt;
  const auto size = c.digits(1, 18);  // up to 18 digits: a long long, whatever the line says
  if (!size || !c.eat(" SHA256:")) return std::nullopt;
  for (char d : *size) out.size = out.size * 10 + (d - '0');
  out.sha256 = c.span([](char x) { return diag::is_digit(x) || (x >= 'a' && x <= 'f'); });
  c.span([](char x) { return x == ' ' || x == '\t' || x == '\r'; });
  if (out.sha256.size() != 64 || !c.done()) return std::nullopt;
  return out;
}

}  // namespace

std::vector<AptPackage> parse_apt_print_uris(const std::string& text, std::vector<AptSource>& sources) {
  std::vector<AptPackage> out;
  std::map<std::string, std::string> source_ids;
  for (const auto& s : sources) source_ids[s.uri] = s.id;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // 'URI' FILE SIZE SHA256:HEX, as apt-get --print-uris writes each download.
    const std::optional<PrintUrisLine> m = parse_print_uris_line(line);
    if (!m) continue;
    const std::string uri = percent_decode(std::string(m->uri));
    const std::string file = percent_decode(std::string(m->file));
    const auto pool = uri.find("/pool/");
    if (pool == std::string::npos || !file.ends_with(".deb")) continue;
    const auto first = file.find('_'), last = file.rfind('_');
    if (first == std::string::npos || first == last) continue;
    AptPackage p;
    p.name = file.substr(0, first);
    p.version = file.substr(first + 1, last - first - 1);
    p.arch = file.substr(last + 1, file.size() - last - 5);
    const std::string base = uri.substr(0, pool);
    if (!source_ids.count(base)) {
      std::string id = base.substr(base.find("://") == std::string::npos ? 0 : base.find("://") + 3);
      source_ids[base] = id;
      sources.push_back({id, base});
    }
    p.source = source_ids[base];
    p.filename = uri.substr(pool + 1);
    p.size = m->size;
    p.sha256 = std::string(m->sha256);
    out.push_back(p);
  }
  return out;
}

std::vector<PythonPackage> parse_pip_report(const std::string& json_text) {
  json report;
  try {
    report = json::parse(json_text);
  } catch (const json::exception& e) {
    throw Error(std::string("pip's report is not valid JSON: ") + e.what());
  }
  std::vector<PythonPackage> out;
  for (const json& item : report.value("install", json::array())) {
    PythonPackage p;
    const json& meta = item.value("metadata", json::object());
    p.name = manifest::normalize_name(meta.value("name", ""));
    p.version = meta.value("version", "");
    const json& info = item.value("download_info", json::object());
    const std::string url = info.value("url", "");
    const json& archive = info.value("archive_info", json::object());
    std::string sha256;
    if (archive.contains("hashes") && archive["hashes"].contains("sha256"))
      sha256 = archive["hashes"]["sha256"].get<std::string>();
    else if (archive.value("hash", "").starts_with("sha256="))
      sha256 = archive.value("hash", "").substr(7);
    if (p.name.empty() || p.version.empty() || url.empty() || sha256.empty())
      throw Error("pip's report has an entry without name, version, URL or sha256 (" + item.dump() + ")", std::nullopt,
                  "envpin needs wheels from an index that publishes sha256 (PEP 503 #sha256= fragments)");
    std::string file = url.substr(url.rfind('/') + 1);
    file = percent_decode(file.substr(0, file.find('#')));
    p.files.push_back({file, url.substr(0, url.find('#')), sha256});
    out.push_back(p);
  }
  return out;
}

Lock resolve_lock(const manifest::Manifest& m, const resolve::Environment& env, const ResolveOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  const Clock::time_point start = Clock::now();
  Lock lock;
  lock.created_by = std::string("envpin ") + kEnvpinVersion;
  lock.platforms = env.platforms;
  lock.inputs_digest = inputs_digest(m);
  // pip needs nothing from the image: its resolution runs beside the registry and apt phases
  // (each writes its own members of `lock`; `o.progress` must take lines from two threads).
  double python_s = -1;
  std::future<void> python;
  if (m.python && (!m.python->packages.empty() || m.python->requirements))
    python = std::async(std::launch::async, [&] {
      const Clock::time_point t = Clock::now();
      resolve_python(m, env, o, lock);
      python_s = seconds_since(t);
    });
  Clock::time_point t = Clock::now();
  lock.image = resolve_image(env.base_image, env, m.base ? std::optional(m.base->where) : std::nullopt, o);
  // The uv that installs a standalone Python is pinned like the base (COPY --from runs its code).
  if (!env.uv_image.empty())
    lock.uv_image = resolve_image(
        env.uv_image, env,
        m.python->uv_image ? std::optional(m.python->uv_image->where) : std::optional(m.python->version.where), o);
  // The smoke stage's nvcc image is pinned like the base: its compiler builds what the image ships.
  if (env.cuda)
    lock.devel_image = env.cuda->devel_image == env.base_image
                           ? lock.image
                           : resolve_image(env.cuda->devel_image, env, m.cuda->version.where, o);
  const double registry_s = seconds_since(t);
  if (env.cuda)
    lock.cuda = Cuda{env.cuda->toolkit, env.cuda->cmake_architectures, env.cuda->driver_packaged,
                     env.cuda->torch ? env.cuda->torch->variant : ""};
  t = Clock::now();
  double apt_s = -1;
  if (!m.apt.empty()) {
    resolve_apt(m, env, *lock.image, o, lock);
    apt_s = seconds_since(t);
  }
  if (python.valid()) python.get();  // rethrows pip's error
  if (o.phases) {
    o.phases->push_back({"registry", registry_s});
    if (apt_s >= 0) o.phases->push_back({"apt", apt_s});
    if (python_s >= 0) o.phases->push_back({"python (beside registry and apt)", python_s});
  }
  if (m.python && m.python->requirements) {
    const fs::path path = m.project_dir / m.python->requirements->value;
    struct stat st {};
    ::stat(path.c_str(), &st);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    lock.files.push_back(
        {m.python->requirements->value, static_cast<std::int64_t>(fs::file_size(path)), mode, pin::sha256_file(path)});
  }
  seal(lock);
  if (o.phases) o.phases->push_back({"total", seconds_since(start)});
  return lock;
}

}  // namespace envpin::resolve

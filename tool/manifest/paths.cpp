// SPDX-License-Identifier: Apache-2.0
// The manifest's paths and names as hostile input: the characters a path may hold, container
// paths kept out of system directories, outputs kept off files envpin must not write, and the
// build context's patterns.
#include "manifest/paths.hpp"
#include "manifest/keys.hpp"

#include <climits>

#include <algorithm>

#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "secrets/rules.hpp"

namespace envpin::manifest::detail {
namespace {

using diag::quote;

}  // namespace

// System directories a workdir or container mount point must not be (or be under, for the
// second list): the image chowns the workdir to the user and the devcontainer and jobs mount
// over these paths, which would hide or hand over the system itself.
constexpr std::string_view kSystemDirs[] = {"/",     "/usr", "/usr/local", "/var",   "/opt",
                                            "/home", "/srv", "/mnt",       "/media", "/tmp"};
constexpr std::string_view kSystemTrees[] = {"/bin",           "/boot",           "/dev",         "/etc",
                                             "/lib",           "/lib32",          "/lib64",       "/libx32",
                                             "/proc",          "/root",           "/run",         "/sbin",
                                             "/sys",           "/usr/bin",        "/usr/include", "/usr/lib",
                                             "/usr/libexec",   "/usr/sbin",       "/usr/share",   "/usr/local/bin",
                                             "/usr/local/lib", "/usr/local/sbin", "/var/lib",     "/var/run"};

// Linux's limits on a name (a path component) and on a whole path with its final NUL.
constexpr std::size_t kNameMax = NAME_MAX;
constexpr std::size_t kPathMax = PATH_MAX;

// A system directory, or under one of those of the second list (`dir` normalised, no trailing '/').
bool is_system_directory(std::string_view dir) {
  const auto under = [&](std::string_view sys) {
    return dir == sys || (dir.starts_with(sys) && dir.size() > sys.size() && dir[sys.size()] == '/');
  };
  return std::find(std::begin(kSystemDirs), std::end(kSystemDirs), dir) != std::end(kSystemDirs) ||
         std::any_of(std::begin(kSystemTrees), std::end(kSystemTrees), under);
}

bool is_env_name(const std::string& s) { return !s.empty() && !(s[0] >= '0' && s[0] <= '9') && only(s, "_"); }

void check_path_chars(const Located<std::string>& s, std::string_view key) {
  if (!only(s.value, kPathExtra))
    throw Error(
        "'" + std::string(key) + "' " + quote(s.value) + " has characters other than letters, digits and ._-+@/",
        s.where, "rename it with those characters only; paths reach shell scripts and the Dockerfile");
}

void check_path_length(const Located<std::string>& s, std::string_view key, const fs::path& base, bool written) {
  // A longer name or path fails every system call with ENAMETOOLONG, far from the manifest. A
  // written file's temporary (.NAME.envpin-XXXXXX) is the longest name envpin makes of it.
  const std::size_t extra = written ? io::temporary_template("x").string().size() - 1 : 0;
  const std::string k = "'" + std::string(key) + "'";
  for (std::size_t start = 0; start < s.value.size();) {
    const std::size_t end = std::min(s.value.find('/', start), s.value.size());
    const std::size_t length = end - start;
    if (written && end == s.value.size() && length + extra > kNameMax)
      throw Error(k + " names a file of " + std::to_string(length) + " bytes, longer than envpin can write (" +
                      std::to_string(kNameMax - extra) + ": a name holds at most " + std::to_string(kNameMax) +
                      " bytes, and the temporary it is written through " + std::to_string(extra) + " more)",
                  s.where, "shorten the file name");
    if (length > kNameMax)
      throw Error(k + " holds a name of " + std::to_string(length) + " bytes, longer than a file name may be (" +
                      std::to_string(kNameMax) + " bytes)",
                  s.where, "shorten that part of the path");
    start = end + 1;
  }
  fs::path full = s.value;
  std::error_code ec;
  if (!base.empty() && full.is_relative()) full = fs::absolute(base / full, ec).lexically_normal();
  const std::size_t most = kPathMax - 1 - extra;  // PATH_MAX counts the final NUL
  if (full.native().size() <= most) return;
  const std::string why = written ? " (" + std::to_string(kPathMax - 1) +
                                        " bytes at most, and the temporary it is written through " +
                                        std::to_string(extra) + " more)"
                                  : "";
  if (!base.empty() && fs::path(s.value).is_relative())
    throw Error(k + " gives a path longer than " + std::to_string(most) + " bytes inside the project directory" + why,
                s.where, "shorten it, or move the project to a directory with a shorter path");
  throw Error(k + " is a path longer than " + std::to_string(most) + " bytes" + why, s.where, "shorten it");
}

// An absolute path inside the container, normalised: no '..', no trailing '/', not a
// system directory.
Located<std::string> container_path(const Reader& r, const YAML::Node& n, std::string_view key) {
  Located<std::string> s = r.string(n, key);
  check_path_chars(s, key);
  if (!s.value.starts_with("/"))
    r.fail(n, std::string(key) + " must be an absolute path inside the container, found " + quote(s.value),
           key == "workdir" ? "write it as '/workspace'" : "write it as '/checkpoints'");
  for (std::string_view rest = s.value; !rest.empty();) {
    const std::size_t slash = rest.find('/', 1);
    const std::string_view part = rest.substr(1, slash == std::string_view::npos ? rest.npos : slash - 1);
    if (part == "..")
      r.fail(n, "'" + std::string(key) + "' " + quote(s.value) + " climbs with '..'", "write the path out");
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  }
  s.value = fs::path(s.value).lexically_normal().generic_string();
  while (s.value.size() > 1 && s.value.back() == '/') s.value.pop_back();
  check_path_length(s, key, {});
  if (is_system_directory(s.value))
    r.fail(n, "'" + std::string(key) + "' must not be the system directory " + quote(s.value) + " or under it",
           "use a directory of the project's own, such as '/workspace'");
  return s;
}

// A host directory: absolute, or relative to the project (kept inside it). The jobs write logs
// and checkpoints there, and the container mounts it: never the root or a system directory.
Located<std::string> host_dir(const Reader& r, const YAML::Node& n, const std::string& key, std::string_view example) {
  Located<std::string> s = r.string(n, key);
  check_path_chars(s, key);
  if (!fs::path(s.value).is_absolute()) {
    s = r.project_path(n, key);
    check_path_length(s, key, r.project_dir());
    return s;
  }
  s.value = fs::path(s.value).lexically_normal().generic_string();
  check_path_length(s, key, {});
  std::string dir = s.value;  // '/./etc', '//usr/' and '/etc/..' are '/etc', '/usr' and '/'
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (is_system_directory(dir))
    r.fail(n, "'" + key + "' must not be the system directory " + quote(dir) + " or under it",
           "use a directory of the project's own, such as '" + std::string(example) + "'");
  return s;
}

// context.exclude: .dockerignore patterns, one per line of the generated file. Docker trims
// the spaces around a pattern (so " !.env" is "!.env" to it) and reads '#' as a comment.
std::vector<Located<std::string>> exclude_patterns(const Reader& r, const YAML::Node& node) {
  std::vector<Located<std::string>> out = r.string_list(node, "context.exclude");
  for (const auto& e : out) {
    if (e.value.front() == ' ' || e.value.back() == ' ')
      throw Error("context.exclude pattern " + quote(e.value) + " starts or ends with a space", e.where,
                  "remove the spaces: docker trims them, so the pattern would not mean what it says");
    if (e.value.front() == '#')
      throw Error(
          "context.exclude pattern " + quote(e.value) + " starts with '#', which .dockerignore reads as a comment",
          e.where, "write it as '\\#...' or remove it");
  }
  return out;
}

// context.allow_secrets: the secret files the build context may carry, as project paths.
std::vector<Located<std::string>> allowed_secrets(const Reader& r, const YAML::Node& node) {
  std::vector<Located<std::string>> out;
  for (const YAML::Node& item : r.list(node, "context.allow_secrets")) {
    Located<std::string> p = r.project_path(item, "context.allow_secrets item");
    check_path_chars(p, "context.allow_secrets item");
    check_path_length(p, "context.allow_secrets item", r.project_dir());
    out.push_back(std::move(p));
  }
  return out;
}

// A '!' pattern in context.exclude that names a secret file is refused unless
// context.allow_secrets lists it (the .dockerignore keeps secrets out after every '!' anyway;
// this says so instead of silently ignoring the pattern).
void check_reincludes(const Manifest& m) {
  for (const auto& e : m.context_exclude) {
    if (!e.value.starts_with("!")) continue;
    std::string target = e.value.substr(1);
    while (target.starts_with("/")) target.erase(0, 1);
    if (!secrets::is_secret_path(target)) continue;
    const bool allowed =
        std::any_of(m.context_allow_secrets.begin(), m.context_allow_secrets.end(),
                    [&](const auto& a) { return a.value == fs::path(target).lexically_normal().generic_string(); });
    if (!allowed)
      throw Error("context.exclude pattern " + quote(e.value) + " would bring the secret file " + quote(target) +
                      " into the build context",
                  e.where, "remove that '!' pattern, or list the file under context.allow_secrets");
  }
}

void read_outputs(const Reader& r, const YAML::Node& node, Manifest& m) {
  for (const auto& [key, k, v] : r.entries(node, "outputs", keys_in("outputs"))) {
    Located<std::string> p = r.project_path(v, "outputs." + key);
    check_path_chars(p, "outputs." + key);
    check_path_length(p, "outputs." + key, r.project_dir(), true);
    // envpin writes only files of its own: never the manifest, the locks, version control or a
    // secret, whatever the manifest says.
    const std::string manifest_file = fs::path(r.file()).filename().generic_string();
    const std::string first = fs::path(p.value).begin()->generic_string();
    if (p.value == manifest_file || p.value == "envpin.lock" || p.value == "requirements.lock" ||
        p.value == ".envpin/generated.json")
      r.fail(v, "outputs." + key + " must not be " + quote(p.value) + ", a file envpin reads or keeps",
             "choose another path, e.g. the default (remove outputs." + key + ")");
    if (first == ".git")
      r.fail(v, "outputs." + key + " must not be inside .git", "choose a path outside version control's own directory");
    if (secrets::is_secret_path(p.value))
      r.fail(v, "outputs." + key + " " + quote(p.value) + " is named like a secret file",
             "choose a name that .dockerignore does not treat as a secret");
    if (key == "dockerfile") m.outputs.dockerfile = p;
    if (key == "devcontainer") m.outputs.devcontainer = p;
    if (key == "check_env") m.outputs.check_env = p;
    if (key == "dockerignore") m.outputs.dockerignore = p;
  }
  const Located<std::string>* all[] = {&m.outputs.dockerfile,    &m.outputs.devcontainer, &m.outputs.check_env,
                                       &m.outputs.dockerignore,  &m.outputs.cmake,        &m.outputs.run,
                                       &m.outputs.sbatch,        &m.outputs.ckpt_helper,  &m.outputs.record,
                                       &m.outputs.rsync_exclude, &m.outputs.kubernetes,   &m.outputs.heavy_lock,
                                       &m.outputs.rest_lock,     &m.outputs.schema,       &m.outputs.dev};
  // Each artifact its own path, and none a directory of another.
  const auto inside = [](const std::string& file, const std::string& dir) {
    return file.size() > dir.size() && file.starts_with(dir) && file[dir.size()] == '/';
  };
  for (std::size_t i = 0; i < std::size(all); ++i)
    for (std::size_t j = i + 1; j < std::size(all); ++j)
      if (all[i]->value == all[j]->value)
        throw Error("two outputs are written to the same path " + quote(all[j]->value),
                    all[j]->where.line ? all[j]->where : all[i]->where,
                    "give each artifact its own path under outputs");
      else if (inside(all[i]->value, all[j]->value) || inside(all[j]->value, all[i]->value))
        throw Error("outputs " + quote(all[j]->value) + " and " + quote(all[i]->value) +
                        " collide: one is a directory of the other",
                    all[j]->where.line ? all[j]->where : all[i]->where,
                    "give each artifact its own path under outputs");
}

}  // namespace envpin::manifest::detail

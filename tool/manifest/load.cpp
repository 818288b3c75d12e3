// SPDX-License-Identifier: Apache-2.0
// The only user of yaml-cpp. Turns envpin.yaml into a Manifest, validating as it goes,
// so that every message can name the line and column the user wrote.
#include "manifest/load.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "diag/suggest.hpp"
#include "diag/text.hpp"
#include "manifest/gitignore.hpp"
#include "manifest/keys.hpp"
#include "manifest/paths.hpp"
#include "manifest/yaml_reader.hpp"
#include "secrets/rules.hpp"

namespace envpin::manifest {
namespace {

namespace fs = std::filesystem;
using detail::allowed_secrets;
using detail::check_path_chars;
using detail::check_path_length;
using detail::check_reincludes;
using detail::container_path;
using detail::describe_yaml_error;
using detail::exclude_patterns;
using detail::is_digit;
using detail::is_env_name;
using detail::kPathExtra;
using detail::only;
using detail::read_dev;
using detail::read_jobs;
using detail::read_outputs;
using detail::Reader;
using detail::reject_tabs;
using diag::Error;
using diag::quote;

constexpr std::string_view kPythonSources[] = {"auto", "system"};
constexpr std::string_view kOsValues[] = {"ubuntu20.04", "ubuntu22.04", "ubuntu24.04",
                                          "debian11",    "debian12",    "debian13"};
constexpr std::string_view kPlatforms[] = {"linux/amd64", "linux/arm64"};
constexpr std::string_view kFlavors[] = {"base", "runtime", "devel"};
constexpr std::string_view kGpuValues[] = {"required", "optional", "none"};

Located<Requirement> requirement(const Reader& r, const YAML::Node& n, std::string_view key) {
  Located<std::string> s = r.string(n, key);
  std::string error;
  std::size_t column = 0;
  auto req = parse_requirement(s.value, error, column);
  if (!req) {
    Location where = s.where;
    // A plain scalar starts where the text starts; quoted ones one column later.
    if (where.column > 0) where.column += static_cast<int>(column) + (n.Tag() == "!" ? 1 : 0);
    throw Error("invalid package spec '" + s.value + "': " + error, where,
                "write it as pip does, e.g. 'numpy==1.26.4' or 'torch>=2.4,<2.5'");
  }
  return {std::move(*req), s.where};
}

Located<std::string> image_reference(const Reader& r, const YAML::Node& v, std::string_view key,
                                     std::string_view example) {
  Located<std::string> image = r.string(v, key);
  const std::string& s = image.value;
  if (s.size() < 2 || !only(s, "._/:@-") || !only(s.substr(0, 1), "") || !only(s.substr(s.size() - 1), "") ||
      s.find("//") != std::string::npos)
    r.fail(v, "invalid image reference " + quote(s), "write it as docker does, e.g. '" + std::string(example) + "'");
  return image;
}

void read_cuda(const Reader& r, const YAML::Node& node, Manifest& m) {
  Cuda cuda;
  cuda.gpus_where = r.at(node);
  bool has_version = false;
  for (const auto& [key, k, v] : r.entries(node, "cuda", keys_in("cuda"))) {
    if (key == "version") {
      cuda.version = r.string(v, "cuda.version");
      const auto numeric = [](std::string_view t) {
        int parts = 0;
        for (std::size_t start = 0;; ++parts) {
          const std::size_t dot = t.find('.', start);
          const std::string_view p = t.substr(start, dot == t.npos ? t.npos : dot - start);
          if (p.empty() || p.size() > 2 || !std::all_of(p.begin(), p.end(), is_digit)) return false;
          if (dot == t.npos) return parts >= 1 && parts <= 2;
          start = dot + 1;
        }
      };
      if (cuda.version.value != "auto" && !numeric(cuda.version.value))
        r.fail(v, "invalid CUDA version " + quote(cuda.version.value),
               "write the toolkit as 'major.minor' or 'major.minor.patch', e.g. '12.4'");
      has_version = true;
    } else if (key == "flavor") {
      Located<std::string> f = r.choice(v, "cuda.flavor", kFlavors);
      cuda.flavor = {f.value == "base"    ? CudaFlavor::base
                     : f.value == "devel" ? CudaFlavor::devel
                                          : CudaFlavor::runtime,
                     f.where};
    } else if (key == "cudnn") {
      cuda.cudnn = r.boolean(v, "cuda.cudnn");
    } else if (key == "forward_compat") {
      cuda.forward_compat = r.boolean(v, "cuda.forward_compat");
    } else if (key == "require_check") {
      cuda.require_check = r.boolean(v, "cuda.require_check");
    } else if (key == "repository") {
      // A repository, not an image: envpin appends the tag it chose (":12.4.1-runtime-ubuntu22.04").
      Located<std::string> repo = image_reference(r, v, "cuda.repository", "registry.internal/mirror/nvidia/cuda");
      const std::string_view last = std::string_view(repo.value).substr(repo.value.rfind('/') + 1);
      if (repo.value.find('@') != std::string::npos || last.find(':') != std::string_view::npos)
        r.fail(v, "cuda.repository names a repository, found a tag or digest in " + quote(repo.value),
               "drop the tag: envpin chooses it from the CUDA version (e.g. 'registry.internal/mirror/nvidia/cuda')");
      cuda.repository = repo;
    } else if (key == "gpus") {
      cuda.gpus = r.string_list(v, "cuda.gpus");
      cuda.gpus_where = r.at(v);
    } else if (key == "driver") {
      Located<std::string> d = r.string(v, "cuda.driver");
      std::string version = d.value;
      if (version.starts_with(">=")) version = version.substr(2);
      while (!version.empty() && version.front() == ' ') version.erase(0, 1);
      if (!is_driver_version(version))
        r.fail(v, "invalid driver version " + quote(d.value),
               "write the fleet's driver floor as '>=535.104.05' (what nvidia-smi prints)");
      cuda.driver = Located<std::string>{version, d.where};
    }
  }
  if (!has_version) r.fail(node, "the cuda section needs 'version'", "add 'version: \"12.4\"' under cuda");
  if (cuda.cudnn.value && cuda.flavor.value == CudaFlavor::base)
    throw Error("cuDNN images exist only for the runtime and devel flavors", cuda.cudnn.where,
                "set cuda.flavor to 'runtime' or 'devel'");
  m.cuda = std::move(cuda);
}

// An image reference in the characters docker (and the lock reader) allow, starting and ending
// with a letter or digit.

std::vector<Located<Requirement>> read_requirements_file(const Reader& r, const YAML::Node& n,
                                                         const Located<std::string>& rel, std::string& bytes) {
  check_path_chars(rel, "python.requirements");
  check_path_length(rel, "python.requirements", r.project_dir());
  const fs::path path = r.project_dir() / rel.value;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st))
    r.fail(n, "requirements file " + quote(rel.value) + " does not exist",
           "create it, or list packages under python.packages instead");
  // A FIFO or device would block or never end: only regular files are read.
  if (!fs::is_regular_file(st))
    r.fail(n, "requirements file " + quote(rel.value) + " is not a regular file", "point it at a requirements.txt");
  if (fs::file_size(path, ec) > detail::kMaxManifestBytes)
    r.fail(n, "requirements file " + quote(rel.value) + " is larger than 1 MiB", "split it or list fewer packages");
  std::ifstream in(path, std::ios::binary);
  if (!in) r.fail(n, "requirements file " + quote(rel.value) + " cannot be read", "check its permissions");
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (bytes.size() > detail::kMaxManifestBytes)
    r.fail(n, "requirements file " + quote(rel.value) + " is larger than 1 MiB", "split it or list fewer packages");
  std::istringstream lines(bytes);
  std::vector<Located<Requirement>> out;
  std::map<std::string, int> seen;
  std::string line;
  int number = 0;
  const std::string shown = (fs::path(r.file()).parent_path() / rel.value).generic_string();
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (const std::size_t bad = std::min(diag::invalid_utf8_at(line), diag::control_at(line)); bad != std::string::npos)
      throw Error("the requirements file holds " + diag::describe_char_at(line, bad),
                  Location{shown, number, static_cast<int>(bad) + 1}, "save it as UTF-8 text, one requirement a line");
    std::string text = line;
    if (auto hash = text.find(" #"); hash != std::string::npos) text.erase(hash);
    if (auto first = text.find_first_not_of(" \t"); first == std::string::npos || text[first] == '#') continue;
    std::size_t indent = text.find_first_not_of(" \t");
    if (text[indent] == '-')
      throw Error("pip options in a requirements file are not supported: '" + text.substr(indent) + "'",
                  Location{shown, number, static_cast<int>(indent) + 1},
                  "set the index with python.index in the manifest and list only packages here");
    std::string error;
    std::size_t column = 0;
    auto req = parse_requirement(text, error, column);
    if (!req)
      throw Error("invalid package spec '" + text.substr(indent) + "': " + error,
                  Location{shown, number, static_cast<int>(column) + 1}, "write it as pip does, e.g. 'numpy==1.26.4'");
    if (auto it = seen.find(req->normalized); it != seen.end())
      throw Error("'" + req->name + "' is listed twice (first at line " + std::to_string(it->second) + ")",
                  Location{shown, number, static_cast<int>(indent) + 1});
    seen.emplace(req->normalized, number);
    out.push_back({std::move(*req), Location{shown, number, static_cast<int>(indent) + 1}});
  }
  return out;
}

void read_python(const Reader& r, const YAML::Node& node, Manifest& m) {
  Python py;
  bool has_version = false;
  std::optional<Location> packages_at;
  for (const auto& [key, k, v] : r.entries(node, "python", keys_in("python"))) {
    if (key == "version") {
      py.version = r.string(v, "python.version");
      if (!is_python_version(py.version.value))
        r.fail(v, "invalid Python version '" + py.version.value + "'",
               "write it as '3.11' or '3.11.9' (quote it: YAML reads 3.10 as 3.1)");
      has_version = true;
    } else if (key == "packages") {
      std::map<std::string, int> seen;
      for (const YAML::Node& item : r.list(v, "python.packages")) {
        Located<Requirement> req = requirement(r, item, "python.packages item");
        if (auto it = seen.find(req.value.normalized); it != seen.end())
          r.fail(item, "'" + req.value.name + "' is listed twice in python.packages (first at line " +
                           std::to_string(it->second) + ")");
        seen.emplace(req.value.normalized, req.where.line);
        py.packages.push_back(std::move(req));
      }
      packages_at = r.at(k);
    } else if (key == "requirements") {
      py.requirements = r.project_path(v, "python.requirements");
      py.requirement_lines = read_requirements_file(r, v, *py.requirements, py.requirements_bytes);
    } else if (key == "index") {
      py.index = r.string(v, "python.index");
    } else if (key == "extra_index") {
      py.extra_index = r.string_list(v, "python.extra_index");
    } else if (key == "uv_image") {
      py.uv_image = image_reference(r, v, "python.uv_image", "registry.internal/astral-sh/uv:0.12.9");
    } else if (key == "source") {
      const Located<std::string> source = r.choice(v, "python.source", kPythonSources);
      py.system = source.value == "system";
      py.source_where = source.where;
    }
  }
  // The lock keeps the index, and the lock reader refuses any other shape.
  // The errors quote a URL without its credentials.
  if (py.index && !is_index_url(py.index->value))
    throw Error("python.index must be an http(s) URL, found " + quote(secrets::redact(py.index->value)),
                py.index->where, "write it as 'https://host/simple' (percent-encode other characters)");
  for (const auto& u : py.extra_index)
    if (!is_index_url(u.value))
      throw Error("python.extra_index must hold http(s) URLs, found " + quote(secrets::redact(u.value)), u.where,
                  "write it as 'https://host/simple' (percent-encode other characters)");
  // Credentials in an index URL (userinfo, or a query parameter such as ?token=) would be written
  // into the Dockerfile, the lock and the image's history. The error does not repeat them.
  std::vector<const Located<std::string>*> urls;
  if (py.index) urls.push_back(&*py.index);
  for (const auto& u : py.extra_index) urls.push_back(&u);
  for (const Located<std::string>* u : urls) {
    if (!index_url_credentials(u->value).empty())
      throw Error(
          "the package index URL holds credentials (the part before '@'): they would be written into the Dockerfile, "
          "envpin.lock and the image's history",
          u->where,
          "remove them from the URL and give pip its credentials on the build machine (a netrc or keyring), not in the manifest");
    if (const std::string_view name = secrets::credential_parameter(u->value); !name.empty())
      throw Error("the package index URL holds a credential in its query (" + quote(std::string(name) + "=") +
                      "): it would be written into the Dockerfile, envpin.lock and the image's history",
                  u->where,
                  "remove it from the URL and give pip its credentials on the build machine (a netrc or keyring), not "
                  "in the manifest");
  }
  if (!has_version) r.fail(node, "the python section needs 'version'", "add 'version: \"3.11\"' under python");
  if (packages_at && py.requirements)
    throw Error("python.packages and python.requirements are both set", *packages_at,
                "keep one: list the packages in the manifest or in the requirements file");
  m.python = std::move(py);
}

void read_apt(const Reader& r, const YAML::Node& node, Manifest& m) {
  std::map<std::string, int> seen;
  for (const YAML::Node& item : r.list(node, "apt")) {
    Located<std::string> s = r.string(item, "apt item");
    AptPackage pkg;
    const auto eq = s.value.find('=');
    pkg.name = s.value.substr(0, eq);
    if (eq != std::string::npos) pkg.version = s.value.substr(eq + 1);
    if (!is_deb_name(pkg.name))
      r.fail(item, "invalid Debian package name '" + pkg.name + "'",
             "names are lowercase letters, digits and + - . (e.g. 'libgl1')");
    if (eq != std::string::npos && !is_deb_version(pkg.version))
      r.fail(item, "invalid Debian version '" + pkg.version + "' for '" + pkg.name + "'",
             "write 'name=version' as apt-cache policy prints it, e.g. 'git=1:2.39.5-0+deb12u2'");
    if (auto it = seen.find(pkg.name); it != seen.end())
      r.fail(item, "'" + pkg.name + "' is listed twice in apt (first at line " + std::to_string(it->second) + ")");
    seen.emplace(pkg.name, s.where.line);
    m.apt.push_back({std::move(pkg), s.where});
  }
}

void read_env(const Reader& r, const YAML::Node& node, Manifest& m) {
  if (node.IsNull()) return;
  for (const auto& [key, k, v] : r.entries(node, "env", {})) {
    if (!is_env_name(key))
      r.fail(k, "invalid environment variable name '" + key + "'",
             "use letters, digits and '_', not starting with a digit");
    if (!v.IsScalar()) r.fail(v, "env '" + key + "' must be a string, found " + Reader::kind(v));
    const std::string& value = v.Scalar();
    if (value.find('\n') != std::string::npos)
      r.fail(v, "env '" + key + "' spans several lines", "environment values must be one line");
    r.check_text(v, value, "env." + key);
    m.env.push_back({{key, r.at(k)}, {value, r.at(v)}});
  }
}

void read_secrets(const Reader& r, const YAML::Node& node, Manifest& m) {
  m.secrets = r.string_list(node, "secrets");
  for (const auto& s : m.secrets) {
    if (!is_env_name(s.value))
      throw Error("invalid secret name '" + s.value + "'", s.where,
                  "secrets are environment variable names, e.g. 'WANDB_API_KEY'");
  }
}

void read_paths(const Reader& r, const YAML::Node& node, Manifest& m) {
  if (node.IsNull()) return;
  for (const auto& [key, k, v] : r.entries(node, "paths", {})) {
    if (!only(key, "_-") || !std::isalpha(static_cast<unsigned char>(key[0])))
      r.fail(k, "invalid path name " + quote(key), "use letters, digits, '_' and '-', starting with a letter");
    Located<std::string> s = r.string(v, "paths." + key);
    m.paths.push_back({{key, r.at(k)}, std::move(s)});
  }
}

void read_user(const Reader& r, const YAML::Node& node, Manifest& m) {
  // yaml-cpp's Node::operator= assigns through to the node, so keep handles in a vector.
  std::vector<YAML::Node> name_node;
  if (node.IsMap()) {
    for (const auto& [key, k, v] : r.entries(node, "user", keys_in("user"))) {
      if (key == "name") name_node.push_back(v);
      if (key == "uid") m.user.uid = r.integer(v, "user.uid", 1, 60000);
    }
    if (name_node.empty()) r.fail(node, "the user section needs 'name'", "add 'name: dev' under user");
  } else {
    name_node.push_back(node);
  }
  const YAML::Node& n = name_node.front();
  m.user.name = r.string(n, "user");
  if (m.user.name.value == "root")
    r.fail(n, "the container user must not be root",
           "choose a non-root name such as 'dev'; root in an image is a security finding");
  const std::string& user = m.user.name.value;
  const auto lower_or = [](std::string_view t, std::string_view extra) {
    return std::all_of(t.begin(), t.end(), [&](char c) {
      return (c >= 'a' && c <= 'z') || is_digit(c) || extra.find(c) != std::string_view::npos;
    });
  };
  if (user.size() > 32 || !(user[0] == '_' || (user[0] >= 'a' && user[0] <= 'z')) || !lower_or(user, "_-"))
    r.fail(n, "invalid user name " + quote(user), "use lowercase letters, digits, '_' and '-', starting with a letter");
}

void read_devcontainer(const Reader& r, const YAML::Node& node, Manifest& m, bool& gpu_set) {
  for (const auto& [key, k, v] : r.entries(node, "devcontainer", keys_in("devcontainer"))) {
    if (key == "extensions") {
      m.devcontainer.extensions = r.string_list(v, "devcontainer.extensions");
      for (const auto& e : m.devcontainer.extensions)
        if (const std::size_t dot = e.value.find('.');
            dot == std::string::npos || dot == 0 || dot + 1 == e.value.size() || e.value[0] == '-' ||
            e.value[dot + 1] == '.' || e.value[dot + 1] == '-' || !only(e.value.substr(0, dot), "-") ||
            !only(e.value.substr(dot + 1), ".-"))
          throw Error("invalid VS Code extension id " + quote(e.value), e.where,
                      "write it as 'publisher.name', e.g. 'ms-python.python'");
    } else if (key == "forward_ports") {
      std::set<int> seen;
      for (const YAML::Node& p : r.list(v, "devcontainer.forward_ports")) {
        Located<int> port = r.integer(p, "devcontainer.forward_ports item", 1, 65535);
        if (!seen.insert(port.value).second) r.fail(p, "port " + std::to_string(port.value) + " is listed twice");
        m.devcontainer.forward_ports.push_back(port);
      }
    } else if (key == "gpu") {
      Located<std::string> g;
      if (v.IsScalar() && (v.Scalar() == "true" || v.Scalar() == "false"))
        g = {v.Scalar() == "true" ? "required" : "none", r.at(v)};
      else
        g = r.choice(v, "devcontainer.gpu", kGpuValues);
      m.devcontainer.gpu = {g.value == "required"   ? GpuRequirement::required
                            : g.value == "optional" ? GpuRequirement::optional
                                                    : GpuRequirement::none,
                            g.where};
      gpu_set = true;
    }
  }
}

}  // namespace

std::span<const std::string_view> top_level_keys() { return keys_in(""); }

std::vector<std::string> known_keys() {
  std::vector<std::string> out;
  for (const KeyDoc& k : manifest_keys()) out.emplace_back(k.path);
  return out;
}

Manifest parse(std::string source, const std::string& display_name, const fs::path& project_dir) {
  Manifest m;
  m.file = display_name;
  m.project_dir = project_dir;
  m.source = std::move(source);
  if (m.source.size() > detail::kMaxManifestBytes)
    throw Error("the manifest is " + std::to_string(m.source.size()) + " bytes, more than 1 MiB",
                Location{display_name, 0, 0},
                "a manifest lists intent, not data: move large lists to a requirements file");
  detail::check_encoding(m.source, display_name);
  reject_tabs(m.source, display_name);

  YAML::Node root;
  try {
    root = YAML::Load(m.source);
  } catch (const YAML::Exception& e) {
    Location where{display_name, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1};
    throw Error(describe_yaml_error(e.msg), where, "fix the YAML syntax at this position");
  }
  if (!root.IsDefined() || root.IsNull())
    throw Error("the manifest is empty", Location{display_name, 0, 0},
                "start it with 'envpin: 1' and a 'name:' (see examples/)");
  const Reader r(display_name, project_dir);
  if (!root.IsMap())
    r.fail(root, "the manifest must be a mapping of keys, found " + Reader::kind(root),
           "start it with 'envpin: 1' and a 'name:' (see examples/)");

  bool has_schema = false, has_name = false, has_platforms = false, gpu_set = false;
  Location cuda_at;
  std::optional<YAML::Node> jobs_node;  // a default Node is a defined null
  for (const auto& [key, k, v] : r.entries(root, "the manifest", keys_in(""))) {
    try {
      if (key == "envpin") {
        if (!v.IsScalar() || v.Scalar() != "1")
          r.fail(v, "unsupported schema version " + Reader::kind(v),
                 "this envpin reads schema version 1: write 'envpin: 1'");
        m.schema = {1, r.at(v)};
        has_schema = true;
      } else if (key == "name") {
        m.name = r.string(v, "name");
        const std::string& name = m.name.value;
        const bool lower = std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
        if (name.size() > 128 || !lower || !only(name, "._-") || !only(name.substr(0, 1), ""))
          r.fail(v, "invalid name " + quote(name),
                 "use lowercase letters, digits, '.', '_' and '-' (it names the image)");
        has_name = true;
      } else if (key == "platforms") {
        has_platforms = true;
        const auto items = r.list(v, "platforms");
        if (items.empty()) r.fail(v, "'platforms' must list at least one platform");
        std::set<std::string> seen;
        for (const YAML::Node& item : items) {
          Located<std::string> p = r.choice(item, "platform", kPlatforms);
          if (!seen.insert(p.value).second) r.fail(item, "platform '" + p.value + "' is listed twice");
          m.platforms.push_back({{p.value == "linux/arm64" ? Arch::arm64 : Arch::amd64}, p.where});
        }
      } else if (key == "os") {
        m.os = r.choice(v, "os", kOsValues);
      } else if (key == "base") {
        m.base = image_reference(r, v, "base", "debian:bookworm-slim");
      } else if (key == "cuda") {
        read_cuda(r, v, m);
        cuda_at = r.at(k);
      } else if (key == "python") {
        read_python(r, v, m);
      } else if (key == "apt") {
        read_apt(r, v, m);
      } else if (key == "env") {
        read_env(r, v, m);
      } else if (key == "secrets") {
        read_secrets(r, v, m);
      } else if (key == "paths") {
        read_paths(r, v, m);
      } else if (key == "workdir") {
        m.workdir = container_path(r, v, "workdir");
      } else if (key == "user") {
        read_user(r, v, m);
      } else if (key == "context") {
        for (const auto& [ckey, ck, cv] : r.entries(v, "context", keys_in("context")))
          if (ckey == "exclude")
            m.context_exclude = exclude_patterns(r, cv);
          else if (ckey == "allow_secrets")
            m.context_allow_secrets = allowed_secrets(r, cv);
          else if (ckey == "include_gitignored")
            m.context_include_gitignored = r.boolean(cv, "context.include_gitignored").value;
      } else if (key == "devcontainer") {
        read_devcontainer(r, v, m, gpu_set);
      } else if (key == "jobs") {
        jobs_node = v;  // read after the others: its defaults depend on cuda and secrets
      } else if (key == "dev") {
        read_dev(r, v, m);
      } else if (key == "outputs") {
        read_outputs(r, v, m);
      }
    } catch (const YAML::Exception&) {
      r.fail(v, "cannot read '" + key + "'");
    }
  }

  if (!has_schema)
    throw Error("missing 'envpin' (the schema version)", Location{display_name, 1, 1},
                "add 'envpin: 1' as the first line");
  if (!has_name)
    throw Error("missing 'name'", Location{display_name, 1, 1},
                "add 'name: my-project' (it names the image and the devcontainer)");
  if (!has_platforms) m.platforms.push_back({{Arch::amd64}, {}});

  if (m.cuda && m.base)
    throw Error("'base' conflicts with 'cuda' (line " + std::to_string(cuda_at.line) +
                    "), which picks the nvidia/cuda base image",
                m.base->where, "remove 'base', or remove the cuda section");
  if (m.cuda && m.os && !m.os->value.starts_with("ubuntu"))
    throw Error("nvidia/cuda images are built on Ubuntu, not '" + m.os->value + "'", m.os->where,
                "set os to 'ubuntu22.04' or 'ubuntu24.04'");

  std::map<std::string, Location> env_names;
  for (const auto& e : m.env) env_names.emplace(e.name.value, e.name.where);
  for (const auto& s : m.secrets)
    if (auto it = env_names.find(s.value); it != env_names.end())
      throw Error("secret '" + s.value + "' is also set in env (line " + std::to_string(it->second.line) +
                      "), which would bake it into the image",
                  s.where, "remove '" + s.value + "' from env; secrets are passed at run time");

  // Paths may refer to env variables as ${NAME}; each must be defined in env.
  for (const auto& p : m.paths) {
    const std::string& v = p.value.value;
    // Each ${NAME} must name an env variable; everything else is a plain path character.
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v.compare(i, 2, "${") == 0) {
        const std::size_t end = v.find('}', i + 2);
        const std::string name = end == std::string::npos ? "" : v.substr(i + 2, end - i - 2);
        if (end == std::string::npos || !is_env_name(name))
          throw Error("path '" + p.name.value + "' may only refer to variables as ${NAME}", p.value.where,
                      "write the reference as ${DATA_DIR}");
        if (!env_names.count(name))
          throw Error("path '" + p.name.value + "' refers to '${" + name + "}', which is not set in env", p.value.where,
                      "add " + name + " to env, or write the path out");
        i = end;
      } else if (!only(v.substr(i, 1), kPathExtra)) {
        throw Error("path '" + p.name.value + "' " + quote(v) +
                        " has characters other than letters, digits, ._-+@/ and ${NAME}",
                    p.value.where, "rename it with those characters only");
      }
    }
    if (!v.starts_with("/") && !v.starts_with("${"))
      throw Error("path '" + p.name.value + "' must be absolute inside the container, found '" + v + "'", p.value.where,
                  "write it as '/workspace/data' or '${DATA_DIR}'");
    check_path_length(p.value, "paths." + p.name.value, {});
  }

  if (jobs_node) {
    try {
      read_jobs(r, *jobs_node, m);
    } catch (const YAML::Exception&) {
      r.fail(*jobs_node, "cannot read 'jobs'");
    }
  }

  check_reincludes(m);

  if (!gpu_set)
    m.devcontainer.gpu.value = m.cuda ? GpuRequirement::optional : GpuRequirement::none;
  else if (m.devcontainer.gpu.value != GpuRequirement::none && !m.cuda)
    throw Error("devcontainer.gpu asks for a GPU but the manifest has no cuda section", m.devcontainer.gpu.where,
                "add a cuda section, or set devcontainer.gpu to 'none'");
  return m;
}

Manifest load(const std::string& file) {
  const fs::path path(file);
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error("cannot read manifest: no such file", Location{file, 0, 0},
                "create it (see examples/) or pass its path with --manifest");
  if (fs::is_directory(path, ec))
    throw Error("cannot read manifest: it is a directory", Location{file, 0, 0},
                "pass the manifest file itself, e.g. --manifest " + (path / "envpin.yaml").generic_string());
  // A FIFO or a device would block or never end: only regular files are read.
  if (!fs::is_regular_file(path, ec))
    throw Error("cannot read manifest: not a regular file", Location{file, 0, 0},
                "pass the manifest file itself, e.g. --manifest envpin.yaml");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read manifest: permission denied", Location{file, 0, 0});
  std::ostringstream buffer;
  buffer << in.rdbuf();
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  Manifest m = parse(buffer.str(), file, dir);
  if (!m.context_include_gitignored) {
    for (const io::GitIgnoreFile& f : io::gitignore_files(dir)) {
      // Messages name the file as the user reaches it; the artifact names it relative to the
      // project, so the .dockerignore does not depend on how the manifest path was given.
      const std::string shown = (path.parent_path() / f.path).lexically_normal().generic_string();
      m.gitignore.emplace_back(f.path, dockerignore_patterns(f, shown));
    }
  }
  return m;
}

}  // namespace envpin::manifest

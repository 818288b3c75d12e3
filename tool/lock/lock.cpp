// SPDX-License-Identifier: Apache-2.0
#include "lock/lock.hpp"

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "manifest/requirement.hpp"
#include "pin/sha256.hpp"
#include "secrets/rules.hpp"

namespace envpin::lock {
namespace {

using diag::Error;
using nlohmann::json;

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static const char* hex = "0123456789ABCDEF";
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

class Writer {
 public:
  void key(const char* k, const std::string& v) { out_ << k << " = " << quoted(v) << "\n"; }
  void key_if(const char* k, const std::string& v) {
    if (!v.empty()) key(k, v);
  }
  void key(const char* k, std::int64_t v) { out_ << k << " = " << v << "\n"; }
  void strings(const char* k, const std::vector<std::string>& v) {
    out_ << k << " = [";
    for (std::size_t i = 0; i < v.size(); ++i) out_ << (i ? ", " : "") << quoted(v[i]);
    out_ << "]\n";
  }
  void raw(const std::string& s) { out_ << s; }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

// The JSON projection, keyed exactly as the TOML.
json project(const Lock& l, bool for_digest) {
  json j;
  j["lock-version"] = l.lock_version;
  j["created-by"] = l.created_by;
  j["platforms"] = l.platforms;
  j["inputs-digest"] = l.inputs_digest;
  if (!for_digest) j["lock-digest"] = l.lock_digest;
  const auto image = [](const Image& i) {
    json pm = json::array();
    for (const auto& p : i.platforms) {
      json e = {{"platform", p.platform}, {"manifest", p.manifest}, {"config", p.config}};
      if (p.size > 0) e["size"] = p.size;  // locks written before sizes were recorded keep their digest
      pm.push_back(e);
    }
    return json{{"requested", i.requested},
                {"reference", i.reference},
                {"digest", i.digest},
                {"media-type", i.media_type},
                {"platform-manifests", pm}};
  };
  if (l.image) j["image"] = image(*l.image);
  if (l.devel_image) j["devel-image"] = image(*l.devel_image);
  if (l.uv_image) j["uv-image"] = image(*l.uv_image);
  if (l.cuda)
    j["cuda"] = {{"toolkit", l.cuda->toolkit},
                 {"architectures", l.cuda->architectures},
                 {"driver-min", l.cuda->driver_min},
                 {"torch-variant", l.cuda->torch_variant}};
  if (!l.apt_sources.empty()) {
    j["apt-source"] = json::array();
    for (const auto& s : l.apt_sources) j["apt-source"].push_back({{"id", s.id}, {"uri", s.uri}});
  }
  if (!l.apt.empty()) {
    j["apt"] = json::array();
    for (const auto& p : l.apt) {
      json e = {{"name", p.name},         {"version", p.version}, {"arch", p.arch},    {"source", p.source},
                {"filename", p.filename}, {"size", p.size},       {"sha256", p.sha256}};
      if (!p.requested.empty()) e["requested"] = p.requested;
      j["apt"].push_back(e);
    }
  }
  if (!l.python_index.empty()) j["python-index"] = l.python_index;
  if (!l.apt_closure.empty()) j["apt-closure"] = l.apt_closure;
  if (!l.python.empty()) {
    j["python"] = json::array();
    for (const auto& p : l.python) {
      json files = json::array();
      for (const auto& f : p.files) {
        json e = {{"name", f.name}, {"url", f.url}, {"sha256", f.sha256}};
        if (f.size > 0) e["size"] = f.size;
        files.push_back(e);
      }
      json e = {{"name", p.name}, {"version", p.version}, {"files", files}};
      if (!p.requested.empty()) e["requested"] = p.requested;
      j["python"].push_back(e);
    }
  }
  if (!l.files.empty()) {
    j["file"] = json::array();
    for (const auto& f : l.files)
      j["file"].push_back({{"path", f.path}, {"size", f.size}, {"mode", f.mode}, {"sha256", f.sha256}});
  }
  return j;
}

// --- reading -------------------------------------------------------------------------------

json from_toml(const toml::node& n) {
  if (auto t = n.as_table()) {
    json j = json::object();
    for (auto&& [k, v] : *t) j[std::string(k.str())] = from_toml(v);
    return j;
  }
  if (auto a = n.as_array()) {
    json j = json::array();
    for (auto&& v : *a) j.push_back(from_toml(v));
    return j;
  }
  if (auto s = n.as_string()) return s->get();
  if (auto i = n.as_integer()) return i->get();
  if (auto b = n.as_boolean()) return b->get();
  return json("<unsupported TOML value>");
}

class Reader {
 public:
  Reader(const std::string& file) : file_(file) {}

  std::string str(const json& j, const char* key, const std::string& entry, bool optional = false) const {
    if (!j.contains(key)) {
      if (optional) return {};
      throw Error(entry + " has no '" + key + "'", diag::Location{file_, 0, 0}, kHint);
    }
    if (!j[key].is_string())
      throw Error(entry + ": '" + key + "' must be a string", diag::Location{file_, 0, 0}, kHint);
    std::string v = j[key].get<std::string>();
    // Lock values reach the Dockerfile, check_env.sh and requirements.lock: one line each.
    if (v.size() > 4096 || diag::control_at(v) != std::string::npos || diag::invalid_utf8_at(v) != std::string::npos)
      throw Error(entry + ": '" + key + "' holds " +
                      (v.size() > 4096 ? std::string("more than 4096 bytes") : "a character no lock value may hold"),
                  diag::Location{file_, 0, 0}, kHint);
    return v;
  }
  std::int64_t integer(const json& j, const char* key, const std::string& entry) const {
    if (!j.contains(key) || !j[key].is_number_integer())
      throw Error(entry + ": '" + key + "' must be an integer", diag::Location{file_, 0, 0}, kHint);
    return j[key].get<std::int64_t>();
  }
  // A size envpin recorded, or 0 where none was: a whole number from 1 to 2^40 (1 TiB).
  std::int64_t size(const json& j, const std::string& entry) const {
    if (!j.contains("size")) return 0;
    const std::int64_t v = integer(j, "size", entry);
    if (v < 1 || v > (std::int64_t{1} << 40))
      throw Error(entry + ": 'size' " + std::to_string(v) + " is not a size envpin records (1 byte to 1 TiB)",
                  diag::Location{file_, 0, 0}, kHint);
    return v;
  }
  // A size the lock must hold: `min` (1 for a .deb, 0 for a file, which may be empty) to 1 TiB. A
  // number envpin never writes (-5) is refused here, before mirror writes it into a Packages file.
  std::int64_t required_size(const json& j, const std::string& entry, std::int64_t min) const {
    const std::int64_t v = integer(j, "size", entry);
    if (v < min || v > (std::int64_t{1} << 40))
      throw Error(entry + ": 'size' " + std::to_string(v) + " is not a size envpin records (" + std::to_string(min) +
                      (min == 1 ? " byte" : " bytes") + " to 1 TiB)",
                  diag::Location{file_, 0, 0}, kHint);
    return v;
  }
  const json& array(const json& j, const char* key, const std::string& entry) const {
    static const json empty = json::array();
    if (!j.contains(key)) return empty;
    if (!j[key].is_array()) throw Error(entry + ": '" + key + "' must be an array", diag::Location{file_, 0, 0}, kHint);
    return j[key];
  }

  static constexpr const char* kHint = "envpin.lock is written only by envpin: run 'envpin lock' to rewrite it";

 private:
  std::string file_;
};

// Every value that reaches an artifact has the shape envpin writes; a lock edited to carry
// code into the Dockerfile or requirements.lock is refused, whatever its digest says.
void check_shapes(const Lock& l, const std::string& file) {
  const auto bad = [&](const std::string& entry, const std::string& what, const std::string& value) {
    throw Error(entry + ": " + what + " " + diag::quote(secrets::redact(value)) + " is not what envpin writes",
                diag::Location{file, 0, 0}, Reader::kHint);
  };
  const auto hex64 = [](std::string_view v) {
    return v.size() == 64 &&
           std::all_of(v.begin(), v.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  };
  const auto digest = [&](std::string_view v) { return v.starts_with("sha256:") && hex64(v.substr(7)); };
  const auto only = [](std::string_view v, std::string_view extra) { return !v.empty() && diag::only_ascii(v, extra); };
  // envpin never writes a credential into a lock (a user:password@ or a ?token= would be committed).
  const auto url = [](std::string_view v) {
    return manifest::is_index_url(v) && manifest::index_url_credentials(v).empty() &&
           secrets::credential_parameter(v).empty();
  };
  for (const auto& [table, i] : {std::pair{"[image]", &l.image}, std::pair{"[devel-image]", &l.devel_image},
                                 std::pair{"[uv-image]", &l.uv_image}}) {
    if (!*i) continue;
    if (!only((*i)->reference, "._/:@-")) bad(table, "reference", (*i)->reference);
    if (!digest((*i)->digest)) bad(table, "digest", (*i)->digest);
  }
  if (!l.python_index.empty() && !url(l.python_index)) bad("the lock", "python-index", l.python_index);
  for (const AptPackage& a : l.apt) {
    if (!manifest::is_deb_name(a.name)) bad("[[apt]]", "name", a.name);
    if (!manifest::is_deb_version(a.version)) bad("[[apt]] '" + a.name + "'", "version", a.version);
    if (!hex64(a.sha256)) bad("[[apt]] '" + a.name + "'", "sha256", a.sha256);
  }
  for (const PythonPackage& p : l.python) {
    if (!only(p.name, "._-")) bad("[[python]]", "name", p.name);
    if (!manifest::is_pep440_version(p.version)) bad("[[python]] '" + p.name + "'", "version", p.version);
    for (const WheelFile& f : p.files) {
      if (!only(f.name, "._+-")) bad("[[python]] '" + p.name + "'", "file name", f.name);
      if (!url(f.url)) bad("[[python]] '" + p.name + "'", "url", f.url);
      if (!hex64(f.sha256)) bad("[[python]] '" + p.name + "'", "sha256", f.sha256);
    }
  }
}

}  // namespace

void seal(Lock& l) {
  std::sort(l.platforms.begin(), l.platforms.end());
  std::sort(l.apt_sources.begin(), l.apt_sources.end(), [](auto& a, auto& b) { return a.id < b.id; });
  std::sort(l.apt.begin(), l.apt.end(),
            [](auto& a, auto& b) { return std::tie(a.name, a.arch, a.version) < std::tie(b.name, b.arch, b.version); });
  for (auto& p : l.python) std::sort(p.files.begin(), p.files.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::sort(l.python.begin(), l.python.end(),
            [](auto& a, auto& b) { return std::tie(a.name, a.version) < std::tie(b.name, b.version); });
  std::sort(l.files.begin(), l.files.end(), [](auto& a, auto& b) { return a.path < b.path; });
  l.lock_digest = compute_lock_digest(l);
}

std::string to_json(const Lock& l, bool for_digest) { return project(l, for_digest).dump(); }

std::string compute_lock_digest(const Lock& l) { return "sha256:" + pin::sha256_hex(to_json(l, true)); }

std::string to_toml(const Lock& l) {
  Writer w;
  w.raw("# @generated by envpin; do not edit. `envpin lock` rewrites it, `envpin verify` checks it.\n");
  w.key("lock-version", l.lock_version);
  w.key("created-by", l.created_by);
  w.strings("platforms", l.platforms);
  w.key("inputs-digest", l.inputs_digest);
  w.key("lock-digest", l.lock_digest);
  w.key_if("apt-closure", l.apt_closure);
  w.key_if("python-index", l.python_index);
  for (const auto& [table, i] : {std::pair{"[image]", &l.image}, std::pair{"[devel-image]", &l.devel_image},
                                 std::pair{"[uv-image]", &l.uv_image}}) {
    if (!*i) continue;
    w.raw("\n" + std::string(table) + "\n");
    w.key("requested", (*i)->requested);
    w.key("reference", (*i)->reference);
    w.key("digest", (*i)->digest);
    w.key("media-type", (*i)->media_type);
    w.raw("platform-manifests = [\n");
    for (const auto& p : (*i)->platforms)
      w.raw("  { platform = " + quoted(p.platform) + ", manifest = " + quoted(p.manifest) +
            ", config = " + quoted(p.config) + (p.size > 0 ? ", size = " + std::to_string(p.size) : "") + " },\n");
    w.raw("]\n");
  }
  if (l.cuda) {
    w.raw("\n[cuda]\n");
    w.key("toolkit", l.cuda->toolkit);
    w.key("architectures", l.cuda->architectures);
    w.key("driver-min", l.cuda->driver_min);
    w.key("torch-variant", l.cuda->torch_variant);
  }
  for (const auto& s : l.apt_sources) {
    w.raw("\n[[apt-source]]\n");
    w.key("id", s.id);
    w.key("uri", s.uri);
  }
  for (const auto& p : l.apt) {
    w.raw("\n[[apt]]\n");
    w.key("name", p.name);
    w.key("version", p.version);
    w.key("arch", p.arch);
    w.key_if("requested", p.requested);
    w.key("source", p.source);
    w.key("filename", p.filename);
    w.key("size", p.size);
    w.key("sha256", p.sha256);
  }
  for (const auto& p : l.python) {
    w.raw("\n[[python]]\n");
    w.key("name", p.name);
    w.key("version", p.version);
    w.key_if("requested", p.requested);
    w.raw("files = [\n");
    for (const auto& f : p.files)
      w.raw("  { name = " + quoted(f.name) + ", url = " + quoted(f.url) + ", sha256 = " + quoted(f.sha256) +
            (f.size > 0 ? ", size = " + std::to_string(f.size) : "") + " },\n");
    w.raw("]\n");
  }
  for (const auto& f : l.files) {
    w.raw("\n[[file]]\n");
    w.key("path", f.path);
    w.key("size", f.size);
    w.key("mode", f.mode);
    w.key("sha256", f.sha256);
  }
  return w.str();
}

Lock parse(const std::string& text, const std::string& file) {
  toml::table table;
  try {
    table = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw Error("the lock is not valid TOML: " + std::string(e.description()),
                diag::Location{file, static_cast<int>(begin.line), static_cast<int>(begin.column)},
                "restore it from version control, or run 'envpin lock' to rewrite it");
  }
  const json j = from_toml(table);
  const Reader r(file);
  Lock l;
  l.lock_version = r.str(j, "lock-version", "the lock");
  const std::string major = l.lock_version.substr(0, l.lock_version.find('.'));
  if (major != std::string(kLockVersion).substr(0, 1))
    throw Error("lock-version " + l.lock_version + " is not supported by this envpin (it reads " + kLockVersion + ")",
                diag::Location{file, 0, 0}, "upgrade envpin, or run 'envpin lock' to rewrite the lock");
  l.created_by = r.str(j, "created-by", "the lock");
  for (const auto& p : r.array(j, "platforms", "the lock"))
    l.platforms.push_back(p.is_string() ? p.get<std::string>() : "");
  l.inputs_digest = r.str(j, "inputs-digest", "the lock");
  l.lock_digest = r.str(j, "lock-digest", "the lock");
  l.python_index = r.str(j, "python-index", "the lock", true);
  l.apt_closure = r.str(j, "apt-closure", "the lock", true);
  for (const auto& [key, target] :
       {std::pair{"image", &l.image}, std::pair{"devel-image", &l.devel_image}, std::pair{"uv-image", &l.uv_image}}) {
    if (!j.contains(key)) continue;
    const json& i = j[key];
    const std::string name = "[" + std::string(key) + "]";
    Image image;
    image.requested = r.str(i, "requested", name);
    image.reference = r.str(i, "reference", name);
    image.digest = r.str(i, "digest", name);
    image.media_type = r.str(i, "media-type", name);
    for (const auto& p : r.array(i, "platform-manifests", name))
      image.platforms.push_back(
          {r.str(p, "platform", name + " platform-manifests"), r.str(p, "manifest", name + " platform-manifests"),
           r.str(p, "config", name + " platform-manifests"), r.size(p, name + " platform-manifests")});
    *target = image;
  }
  if (j.contains("cuda")) {
    const json& c = j["cuda"];
    l.cuda = Cuda{r.str(c, "toolkit", "[cuda]"), r.str(c, "architectures", "[cuda]"), r.str(c, "driver-min", "[cuda]"),
                  r.str(c, "torch-variant", "[cuda]")};
  }
  for (const auto& s : r.array(j, "apt-source", "the lock"))
    l.apt_sources.push_back({r.str(s, "id", "[[apt-source]]"), r.str(s, "uri", "[[apt-source]]")});
  for (const auto& p : r.array(j, "apt", "the lock")) {
    const std::string entry =
        "[[apt]] '" + (p.contains("name") && p["name"].is_string() ? p["name"].get<std::string>() : "?") + "'";
    AptPackage a;
    a.name = r.str(p, "name", entry);
    a.version = r.str(p, "version", entry);
    a.arch = r.str(p, "arch", entry);
    a.requested = r.str(p, "requested", entry, true);
    a.source = r.str(p, "source", entry);
    a.filename = r.str(p, "filename", entry);
    a.size = r.required_size(p, entry, 1);
    a.sha256 = r.str(p, "sha256", entry);
    l.apt.push_back(a);
  }
  for (const auto& p : r.array(j, "python", "the lock")) {
    const std::string entry =
        "[[python]] '" + (p.contains("name") && p["name"].is_string() ? p["name"].get<std::string>() : "?") + "'";
    PythonPackage py;
    py.name = r.str(p, "name", entry);
    py.version = r.str(p, "version", entry);
    py.requested = r.str(p, "requested", entry, true);
    for (const auto& f : r.array(p, "files", entry))
      py.files.push_back(
          {r.str(f, "name", entry), r.str(f, "url", entry), r.str(f, "sha256", entry), r.size(f, entry)});
    l.python.push_back(py);
  }
  for (const auto& f : r.array(j, "file", "the lock")) {
    const std::string entry =
        "[[file]] '" + (f.contains("path") && f["path"].is_string() ? f["path"].get<std::string>() : "?") + "'";
    l.files.push_back(
        {r.str(f, "path", entry), r.required_size(f, entry, 0), r.str(f, "mode", entry), r.str(f, "sha256", entry)});
  }
  check_shapes(l, file);
  return l;
}

std::string inputs_digest(const manifest::Manifest& m) {
  json j;
  j["lock-version"] = kLockVersion;
  j["platforms"] = json::array();
  for (const auto& p : m.platforms) j["platforms"].push_back(p.value.text());
  j["os"] = m.os ? m.os->value : "";
  j["base"] = m.base ? m.base->value : "";
  if (m.cuda) {
    json gpus = json::array();
    for (const auto& g : m.cuda->gpus) gpus.push_back(g.value);
    j["cuda"] = {{"version", m.cuda->version.value},
                 {"flavor", static_cast<int>(m.cuda->flavor.value)},
                 {"cudnn", m.cuda->cudnn.value},
                 {"gpus", gpus},
                 {"driver", m.cuda->driver ? m.cuda->driver->value : ""}};
    // Only when set: locks of manifests without it keep their digest.
    if (m.cuda->forward_compat && m.cuda->forward_compat->value) j["cuda"]["forward-compat"] = true;
    if (m.cuda->require_check && !m.cuda->require_check->value) j["cuda"]["require-check"] = false;
    if (m.cuda->repository) j["cuda"]["repository"] = m.cuda->repository->value;
  }
  j["apt"] = json::array();
  for (const auto& a : m.apt)
    j["apt"].push_back(a.value.version.empty() ? a.value.name : a.value.name + "=" + a.value.version);
  if (m.python) {
    json py;
    py["version"] = m.python->version.value;
    py["source"] = m.python->system ? "system" : "";
    py["index"] = m.python->index ? m.python->index->value : "";
    py["extra-index"] = json::array();
    for (const auto& u : m.python->extra_index) py["extra-index"].push_back(u.value);
    // Only when set: locks of manifests without it keep their digest.
    if (m.python->uv_image) py["uv-image"] = m.python->uv_image->value;
    py["packages"] = json::array();
    for (const auto& r : m.python->packages) py["packages"].push_back(r.value.text());
    if (m.python->requirements) {
      const auto bytes = io::read_file(m.project_dir / m.python->requirements->value);
      py["requirements"] = {{"path", m.python->requirements->value}, {"sha256", bytes ? pin::sha256_hex(*bytes) : ""}};
    }
    j["python"] = py;
  }
  return "sha256:" + pin::sha256_hex(j.dump());
}

namespace {

std::string requirement_lines(const Lock& l, const std::function<bool(const PythonPackage&)>& keep) {
  std::string out = "# @generated by envpin from envpin.lock; pip install --require-hashes --no-deps -r this file\n";
  for (const auto& p : l.python) {
    if (!keep(p)) continue;
    out += p.name + "==" + p.version;
    for (const auto& f : p.files) out += " \\\n    --hash=sha256:" + f.sha256;
    out += "\n";
  }
  return out;
}

}  // namespace

std::string requirements_lock(const Lock& l) {
  return requirement_lines(l, [](const PythonPackage&) { return true; });
}

bool heavy_wheel(std::string_view name) {
  const std::string n = manifest::normalize_name(name);
  return n == "torch" || n == "torchvision" || n == "torchaudio" || n == "triton" || n.starts_with("nvidia-");
}

bool heavy_wheel(const PythonPackage& p) {
  std::int64_t bytes = 0;
  for (const WheelFile& f : p.files) bytes += f.size;
  return heavy_wheel(p.name) || bytes >= kHeavyWheelBytes;
}

std::string requirements_lock(const Lock& l, bool heavy) {
  return requirement_lines(l, [heavy](const PythonPackage& p) { return heavy_wheel(p) == heavy; });
}

std::string requirements_lock_problem(const Lock& lock, const std::optional<std::string>& file_text) {
  if (lock.python.empty()) return {};
  if (!file_text) return "requirements.lock is missing";
  const std::string want = requirements_lock(lock);
  if (*file_text == want) return {};
  std::size_t line = 1;
  for (std::size_t i = 0; i < std::min(want.size(), file_text->size()) && want[i] == (*file_text)[i]; ++i)
    if (want[i] == '\n') ++line;
  return "requirements.lock differs from envpin.lock at line " + std::to_string(line);
}

}  // namespace envpin::lock

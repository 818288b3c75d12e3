// SPDX-License-Identifier: Apache-2.0
#include "init/init.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/marker.hpp"
#include "init/parts.hpp"
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "manifest/requirement.hpp"
#include "secrets/rules.hpp"

namespace envpin::init {

namespace fs = std::filesystem;
using diag::Error;
using diag::Location;

namespace detail {

constexpr std::size_t kMaxInput = 1 << 20;

// The text of an input file: regular, at most 1 MiB, no NUL.
std::string read_input(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw Error("cannot read " + diag::printable(file.generic_string()) + ": not a regular file",
                Location{file.generic_string(), 0, 0}, "name a requirements.txt, environment.yml or pyproject.toml");
  if (fs::file_size(file, ec) > kMaxInput)
    throw Error(diag::printable(file.generic_string()) + " is larger than 1 MiB", Location{file.generic_string(), 0, 0},
                "name the project's dependency file, not a data file");
  const auto text = io::read_file(file);
  if (!text)
    throw Error("cannot read " + diag::printable(file.generic_string()), Location{file.generic_string(), 0, 0},
                "check its permissions");
  if (text->find('\0') != std::string::npos)
    throw Error(diag::printable(file.generic_string()) + " holds a NUL byte: it is not a text file",
                Location{file.generic_string(), 0, 0}, "name the project's dependency file");
  return *text;
}

std::string where(const fs::path& file, int line) {
  return diag::printable(file.filename().generic_string()) + ":" + std::to_string(line);
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

void note(Draft& d, const std::string& raw) {
  // Notes quote the inputs, and envpin.yaml is committed and sent in the build context: a
  // credential in a line never reaches them.
  std::string text = diag::printable(raw);
  std::size_t length = 0;
  for (std::size_t at; (at = secrets::find_token(text, length)) != std::string::npos;)
    text.replace(at, length, "<credential>");
  if (std::find(d.notes.begin(), d.notes.end(), text) == d.notes.end()) d.notes.push_back(text);
}

std::string index_url(const std::string& url, const std::string& from, Draft& d) {
  const std::string_view credentials = manifest::index_url_credentials(url);
  if (credentials.empty()) return url;
  const std::size_t at = url.find(credentials);
  note(d, from +
              ": the index URL's credentials are left out (they would be written into the Dockerfile, the lock and the "
              "image's history): give pip them on the build machine (a netrc or keyring)");
  return url.substr(0, at) + url.substr(at + credentials.size());
}

void set_once(std::optional<Value>& slot, Value v, const std::string& what) {
  if (slot && slot->value != v.value)
    throw Error(what + " is " + diag::quote(slot->value) + " in " + slot->from + " but " + diag::quote(v.value) +
                    " in " + v.from,
                std::nullopt, "make the inputs agree, or pass only one of them with --from");
  if (!slot) slot = std::move(v);
}

}  // namespace detail

namespace {

using namespace detail;

bool same_specifiers(const std::vector<manifest::Specifier>& a, const std::vector<manifest::Specifier>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const auto& x, const auto& y) { return x.op == y.op && x.version == y.version; });
}

// Whether `from` ("environment.yml:7 (...)") is in the file --prefer names.
bool prefer_matches(const Draft& d, const std::string& from) {
  return !d.prefer.empty() && from.substr(0, from.find(':')) == fs::path(d.prefer).filename().string();
}

// --- requirements files (pip's own syntax) -------------------------------------------------------

void read_requirements_file(const fs::path& file, Draft& d, std::vector<fs::path>& stack) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  if (std::find(stack.begin(), stack.end(), canonical) != stack.end()) {
    std::string chain;
    for (const fs::path& p : stack) chain += p.filename().generic_string() + " -> ";
    throw Error("requirements files include each other: " + diag::printable(chain + file.filename().generic_string()),
                Location{file.generic_string(), 0, 0}, "remove one of the -r lines");
  }
  const std::string text = read_input(file);
  stack.push_back(canonical);
  if (std::find(d.sources.begin(), d.sources.end(), file.generic_string()) == d.sources.end())
    d.sources.push_back(file.generic_string());
  std::istringstream in(text);
  std::string line, logical;
  int number = 0, start = 0;
  while (std::getline(in, line)) {
    ++number;
    if (logical.empty()) start = number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line.back() == '\\') {  // a continuation
      logical += line.substr(0, line.size() - 1);
      continue;
    }
    logical += line;
    requirement_line(logical, file, start, d, stack);
    logical.clear();
  }
  if (!logical.empty()) requirement_line(logical, file, start, d, stack);
  stack.pop_back();
}

}  // namespace

void detail::requirement_line(const std::string& raw, const fs::path& file, int line, Draft& d,
                              std::vector<fs::path>& stack, const std::string& from_suffix) {
  std::string text = raw;
  // A comment: '#' at the start or after whitespace.
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      text.resize(i);
      break;
    }
  text = trim(text);
  if (text.empty()) return;
  const std::string from = where(file, line) + from_suffix;
  if (const std::size_t bad = diag::control_at(text); bad != std::string::npos)
    throw Error("the line holds " + diag::describe_char_at(text, bad),
                Location{file.generic_string(), line, static_cast<int>(bad) + 1}, "remove it");
  // pip options: "-r FILE", "--requirement=FILE", "-c FILE", ...
  if (text.front() == '-') {
    std::string option = text, value;
    if (const auto sp = text.find_first_of(" =\t"); sp != std::string::npos) {
      option = text.substr(0, sp);
      value = trim(text.substr(sp + 1));
    }
    if ((option == "-r" || option == "--requirement") && !value.empty()) {
      const fs::path included = file.parent_path() / value;
      if (secrets::is_secret_path(fs::path(value).lexically_normal().generic_string()))
        throw Error("the line includes " + diag::quote(value) + ", which is a secret file, as a requirements file",
                    Location{file.generic_string(), line, 1},
                    "remove the line; envpin init reads requirements files only");
      read_requirements_file(included, d, stack);
    } else if (option == "-c" || option == "--constraint") {
      note(d, from + ": the constraints file " + diag::quote(value) +
                  " is not carried: envpin lock pins every version the listed packages resolve to");
    } else if ((option == "-i" || option == "--index-url") && !value.empty()) {
      if (!manifest::is_index_url(value))
        throw Error("the index URL " + diag::quote(value) + " is not one envpin accepts",
                    Location{file.generic_string(), line, 1}, "use an http(s) URL without quotes, spaces or '$'");
      set_once(d.index, {index_url(value, from, d), from}, "the package index");
    } else if (option == "--extra-index-url" && !value.empty()) {
      if (!manifest::is_index_url(value))
        throw Error("the index URL " + diag::quote(value) + " is not one envpin accepts",
                    Location{file.generic_string(), line, 1}, "use an http(s) URL without quotes, spaces or '$'");
      const std::string url = index_url(value, from, d);
      if (std::none_of(d.extra_index.begin(), d.extra_index.end(), [&](const Value& v) { return v.value == url; }))
        d.extra_index.push_back({url, from});
    } else if (option == "-e" || option == "--editable") {
      note(d, from + ": " + diag::quote(text) +
                  " is a local or VCS package: the project is copied into the image, not pinned; install it in the "
                  "Dockerfile's place of your choice");
    } else {
      note(d, from + ": the pip option " + diag::quote(option) +
                  " is not carried (envpin lock and the Dockerfile set pip's options)");
    }
    return;
  }
  // Per-requirement options ("--hash=sha256:..."): envpin lock records the hashes itself.
  if (const auto opt = text.find(" --"); opt != std::string::npos) {
    note(d, from + ": per-requirement options (" + diag::quote(trim(text.substr(opt))) +
                ") are dropped; envpin lock records hashes itself");
    text = trim(text.substr(0, opt));
  }
  if (text.find("://") != std::string::npos || text.find(" @ ") != std::string::npos || text.front() == '.' ||
      text.front() == '/') {
    note(d, from + ": " + diag::quote(text) +
                " is a URL or path requirement: left out (envpin pins from package indexes)");
    return;
  }
  add_package(d, text, from);
}

void add_package(Draft& d, const std::string& requirement, const std::string& from) {
  // "name @ https://..." (PEP 508 direct references) and the like, from any reader.
  if (requirement.find("://") != std::string::npos || requirement.find(" @ ") != std::string::npos) {
    note(d, from + ": " + diag::quote(requirement) +
                " is a URL or path requirement: left out (envpin pins from package indexes)");
    return;
  }
  std::string error;
  std::size_t column = 0;
  const auto r = manifest::parse_requirement(requirement, error, column);
  if (!r) {
    note(d, from + ": " + diag::quote(requirement) + " is not a requirement envpin reads (" + error + "): left out");
    return;
  }
  const std::string text = r->text();
  const auto file_of = [](const std::string& f) { return f.substr(0, f.find(':')); };
  for (Value& v : d.packages) {
    std::string e2;
    std::size_t c2 = 0;
    const auto kept = manifest::parse_requirement(v.value, e2, c2);
    if (!kept || kept->normalized != r->normalized) continue;
    if (v.value == text) return;
    // The same distribution under other markers ("x>=4.31; python_version<'3.10'", "x>=4.37;
    // python_version>='3.10'"): alternatives, settled for the image's Python by settle().
    if (kept->marker != r->marker) continue;
    manifest::Requirement merged = *kept;
    // Extras add up ("black" and "black[jupyter]").
    for (const std::string& e : r->extras)
      if (std::find(merged.extras.begin(), merged.extras.end(), e) == merged.extras.end()) merged.extras.push_back(e);
    // Versions: a side without one takes the other's ("sentencepiece" and "sentencepiece==0.1.99");
    // two in one file are both required, as pip reads them; two files that disagree are a
    // conflict, unless --prefer names the one that wins.
    if (merged.specifiers.empty()) {
      merged.specifiers = r->specifiers;
    } else if (!r->specifiers.empty() && !same_specifiers(merged.specifiers, r->specifiers)) {
      if (file_of(v.from) == file_of(from)) {
        merged.specifiers.insert(merged.specifiers.end(), r->specifiers.begin(), r->specifiers.end());
      } else if (!prefer_matches(d, from) && !prefer_matches(d, v.from)) {
        throw Error(r->normalized + " is " + diag::quote(v.value) + " in " + v.from + " but " + diag::quote(text) +
                        " in " + from,
                    std::nullopt, "make the inputs agree, or pass --prefer FILE to take one file's version");
      } else if (prefer_matches(d, from)) {
        merged.specifiers = r->specifiers;
      }
    }
    const std::string combined = merged.text();
    if (combined != v.value) v = {combined, v.from + ", " + from};
    return;
  }
  d.packages.push_back({text, from});
}

void settle(Draft& d) {
  const std::string python = d.python ? d.python->value : kDefaultPython;
  std::vector<Value> kept;
  std::vector<bool> done(d.packages.size(), false);
  const auto parse = [](const std::string& text) {
    std::string error;
    std::size_t column = 0;
    return manifest::parse_requirement(text, error, column);
  };
  for (std::size_t i = 0; i < d.packages.size(); ++i) {
    if (done[i]) continue;
    const auto first = parse(d.packages[i].value);
    std::vector<std::size_t> group{i};
    for (std::size_t j = i + 1; j < d.packages.size(); ++j) {
      const auto other = parse(d.packages[j].value);
      if (first && other && other->normalized == first->normalized) group.push_back(j);
    }
    for (std::size_t g : group) done[g] = true;
    if (group.size() == 1) {
      kept.push_back(d.packages[i]);
      continue;
    }
    // The alternative whose marker holds in the image; the first when that cannot be told.
    std::vector<std::size_t> holding;
    bool unknown = false;
    for (std::size_t g : group) {
      const auto r = parse(d.packages[g].value);
      const std::optional<bool> holds =
          r && !r->marker.empty() ? marker_holds(r->marker, python) : std::optional<bool>(true);
      if (!holds)
        unknown = true;
      else if (*holds)
        holding.push_back(g);
    }
    const std::string name = first ? first->normalized : d.packages[i].value;
    if (!unknown && holding.empty()) {
      for (std::size_t g : group)
        note(d, d.packages[g].from + ": " + diag::quote(d.packages[g].value) +
                    " left out: its marker does not hold for Python " + python + " on linux/amd64");
      continue;
    }
    const std::size_t chosen = !unknown && holding.size() == 1 ? holding.front() : group.front();
    kept.push_back(d.packages[chosen]);
    for (std::size_t g : group) {
      if (g == chosen) continue;
      note(d, d.packages[g].from + ": " + diag::quote(d.packages[g].value) + " left out: envpin.yaml lists " + name +
                  " once, and " +
                  (!unknown && holding.size() == 1
                       ? "the marker of " + diag::quote(d.packages[chosen].value) + " (" + d.packages[chosen].from +
                             ") is the one that holds for Python " + python + " on linux/amd64"
                       : "the first, " + diag::quote(d.packages[chosen].value) + " (" + d.packages[chosen].from +
                             "), is kept; keep the one for the image's Python"));
    }
  }
  d.packages = std::move(kept);
  // envpin's CUDA images are nvidia/cuda's Ubuntu ones: another OS or base is a suggestion.
  if (d.cuda && d.base) {
    note(d, d.base->from + " suggests base " + diag::quote(d.base->value) + "; with CUDA (" + d.cuda->from +
                ") envpin builds on nvidia/cuda's image instead");
    d.base.reset();
  }
  if (d.cuda && d.os && !d.os->value.starts_with("ubuntu")) {
    note(d, d.os->from + " suggests os " + diag::quote(d.os->value) + "; with CUDA (" + d.cuda->from +
                ") envpin builds on nvidia/cuda's Ubuntu image instead");
    d.os.reset();
  }
}

void read_requirements(const fs::path& file, Draft& d) {
  std::vector<fs::path> stack;
  read_requirements_file(file, d, stack);
}

namespace {

// Run by the environment's own interpreter: its version and every installed distribution, with
// how it was installed (direct_url.json: editable, or from a URL).
constexpr const char* kPythonReport = R"(import json, sys
from importlib import metadata
out = {"python": "%d.%d" % sys.version_info[:2], "dists": []}
seen = set()
for d in metadata.distributions():
    name = d.metadata["Name"]
    key = (name or "").lower().replace("_", "-").replace(".", "-")
    if not name or key in seen:
        continue  # the first on sys.path is the one Python imports
    seen.add(key)
    direct = d.read_text("direct_url.json")
    how = ""
    if direct:
        try:
            info = json.loads(direct)
            how = "editable" if info.get("dir_info", {}).get("editable") else ("url" if info.get("url", "").split(":")[0] != "file" or "vcs_info" in info else "local")
        except ValueError:
            how = "url"
    out["dists"].append([name, d.version, how])
out["dists"].sort(key=lambda x: x[0].lower())
print(json.dumps(out))
)";

}  // namespace

void read_python(const std::string& python, Draft& d) {
  const io::ProcessResult r = io::run_process({python, "-I", "-c", kPythonReport});
  if (r.exit_code != 0) {
    std::string why = r.err.empty() ? "it could not be started" : r.err.substr(0, r.err.find('\n'));
    throw Error("cannot ask the Python environment " + diag::quote(python) + " what it has: " + diag::printable(why),
                std::nullopt, "give the interpreter of the environment, e.g. --from-python .venv/bin/python");
  }
  read_python_report(r.out, python, d);
}

void read_python_report(const std::string& text, const std::string& python, Draft& d) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw Error("the Python environment " + diag::quote(python) + " answered something that is not its report",
                std::nullopt, "check that it is a CPython 3 interpreter");
  }
  const std::string from = diag::printable(python);
  d.sources.push_back(python);
  if (j.contains("python") && j["python"].is_string() && manifest::is_python_version(j["python"].get<std::string>()))
    set_once(d.python, {j["python"].get<std::string>(), from + " (the interpreter)"}, "python.version");
  if (!j.contains("dists") || !j["dists"].is_array()) return;
  for (const auto& dist : j["dists"]) {
    if (!dist.is_array() || dist.size() != 3 || !dist[0].is_string() || !dist[1].is_string() || !dist[2].is_string())
      continue;
    const std::string name = dist[0].get<std::string>(), version = dist[1].get<std::string>(),
                      how = dist[2].get<std::string>();
    const std::string normalized = manifest::normalize_name(name);
    if (normalized == "pip" || normalized == "setuptools" || normalized == "wheel" || normalized == "distribute") {
      note(d, from + ": " + diag::quote(name) + " is pip's own tooling: left out, as pip freeze does");
      continue;
    }
    if (how == "editable" || how == "local") {
      note(d, from + ": " + diag::quote(name) + " is installed from a local directory" +
                  (how == "editable" ? " (editable)" : "") + ": the project is copied into the image, not pinned");
      continue;
    }
    if (how == "url") {
      note(d, from + ": " + diag::quote(name + " " + version) +
                  " came from a URL or VCS: left out (envpin pins from package indexes)");
      continue;
    }
    if (!manifest::is_pep440_version(version)) {
      note(d, from + ": " + diag::quote(name + " " + version) + " has a version pip cannot pin: left out");
      continue;
    }
    add_package(d, name + "==" + version, from);
  }
}

std::string kind_of(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name == "pyproject.toml") return "pyproject";
  if (name == "Dockerfile" || name == "Containerfile" || name.starts_with("Dockerfile.") ||
      name.ends_with(".Dockerfile") || name.ends_with(".dockerfile"))
    return "dockerfile";
  if (name.ends_with(".yml") || name.ends_with(".yaml")) return "conda";
  if (name.ends_with(".txt") || name.ends_with(".in")) return "requirements";
  return "";
}

bool written_by_envpin(const std::string& text) {
  return text.substr(0, 512).find("# Generated by `envpin generate`") != std::string::npos;
}

std::vector<fs::path> inputs_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const char* name :
       {"environment.yml", "environment.yaml", "pyproject.toml", "requirements.txt", "Dockerfile", "Containerfile"}) {
    if (!fs::is_regular_file(dir / name)) continue;
    // The Dockerfile envpin generated is the manifest's output, not an input to it.
    if (kind_of(dir / name) == "dockerfile") {
      const auto text = io::read_file(dir / name);
      if (text && written_by_envpin(*text)) continue;
    }
    out.push_back(dir / name);
  }
  return out;
}

namespace {

// A YAML double-quoted scalar. A control character a hostile input slipped into a value is
// escaped (\xNN): the line stays one line, and the manifest reader refuses the value by name.
std::string yq(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string comment(const std::string& from) { return "  # " + diag::printable(from); }

}  // namespace

std::string write_manifest(const Draft& d, const Options& o) {
  std::ostringstream y;
  y << "# Written by `envpin init`";
  if (!d.sources.empty()) {
    y << " from";
    for (std::size_t i = 0; i < d.sources.size(); ++i)
      y << (i ? ", " : " ") << diag::printable(fs::path(d.sources[i]).filename().string());
  }
  y << ".\n# Each value says where it came from. Review it, then run `envpin lock` (pins every version)\n"
       "# and `envpin generate`.\n";
  y << "envpin: 1\nname: " << yq(o.name) << "\n";
  if (d.os) y << "os: " << yq(d.os->value) << comment(d.os->from) << "\n";
  if (d.base) y << "base: " << yq(d.base->value) << comment(d.base->from) << "\n";
  if (d.cuda) {
    y << "cuda:\n  version: " << yq(d.cuda->value) << comment(d.cuda->from) << "\n";
    if (d.flavor) y << "  flavor: " << yq(d.flavor->value) << comment(d.flavor->from) << "\n";
    if (d.cudnn) y << "  cudnn: true" << comment(d.cudnn->from) << "\n";
    y << "  gpus: [";
    for (std::size_t i = 0; i < o.gpus.size(); ++i) y << (i ? ", " : "") << yq(o.gpus[i]);
    y << "]  # " << (o.gpus_from.empty() ? "--gpu" : o.gpus_from) << "\n";
    if (o.driver)
      y << "  driver: " << yq(">=" + *o.driver) << "  # " << (o.gpus_from.empty() ? "--driver" : o.gpus_from) << "\n";
  }
  y << "python:\n";
  if (d.python)
    y << "  version: " << yq(d.python->value) << comment(d.python->from) << "\n";
  else
    y << "  version: \"" << kDefaultPython
      << "\"  # none of the inputs names a Python version: envpin's default, change it if needed\n";
  if (d.index) y << "  index: " << yq(d.index->value) << comment(d.index->from) << "\n";
  if (!d.extra_index.empty()) {
    y << "  extra_index:\n";
    for (const Value& v : d.extra_index) y << "    - " << yq(v.value) << comment(v.from) << "\n";
  }
  if (!d.packages.empty()) {
    y << "  packages:\n";
    for (const Value& v : d.packages) y << "    - " << yq(v.value) << comment(v.from) << "\n";
  }
  if (!d.apt.empty()) {
    y << "apt:\n";
    for (const Value& v : d.apt) y << "  - " << yq(v.value) << comment(v.from) << "\n";
  }
  if (!d.notes.empty()) {
    y << "# Not carried over:\n";
    for (const std::string& n : d.notes) y << "#   " << diag::printable(n) << "\n";
  }
  return y.str();
}

}  // namespace envpin::init

// SPDX-License-Identifier: Apache-2.0
#include "init/init.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/marker.hpp"
#include "init/parts.hpp"
#include "io/atomic_file.hpp"
#include "manifest/requirement.hpp"
#include "resolve/cuda_tables.hpp"
#include "resolve/policy_parts.hpp"
#include "secrets/rules.hpp"

namespace envpin::init {

namespace fs = std::filesystem;
using diag::Error;
using diag::Location;

namespace detail {

std::string where(const fs::path& file, int line) {
  return diag::printable(file.filename().generic_string()) + ":" + std::to_string(line);
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Redacted before quoting (the cut must not leave a credential's head), and after: the cut can
// end a redacted "token=<credential>" at "token=", which shown alone reads as a credential again.
std::string quote_input(std::string_view text) { return secrets::redact(diag::quote(secrets::redact(text))); }

void note(Draft& d, const std::string& raw) {
  // Notes quote the inputs, and envpin.yaml is committed and sent in the build context: a
  // credential in a line never reaches them.
  std::string text = secrets::redact(diag::printable(raw));
  std::unordered_set<std::string>& noted = d.reading.noted;
  if (noted.size() != d.notes.size()) noted = {d.notes.begin(), d.notes.end()};  // set by a caller
  if (noted.count(text)) return;
  if (d.notes.size() >= kMaxNotes) {
    ++d.reading.dropped;
    return;
  }
  noted.insert(text);
  d.notes.push_back(std::move(text));
}

bool is_dotted_release(std::string_view v) {
  if (v.empty() || v.size() > 32) return false;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = v.find('.', start);
    const std::string_view part = v.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string_view::npos) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_cuda_minor(std::string_view v) { return is_dotted_release(v) && std::count(v.begin(), v.end(), '.') == 1; }

// The lowest CPython 3 minor a requires-python specifier allows ("3.10" for ">=3.10").
std::string lowest_python(const std::string& spec) {
  for (int minor = 8; minor <= 15; ++minor) {
    const std::string candidate = "3." + std::to_string(minor);
    std::string error;
    std::size_t column = 0;
    const auto r = manifest::parse_requirement("python" + spec, error, column);
    if (!r) return "";
    bool ok = true;
    for (const auto& s : r->specifiers) {
      const auto num = [](const std::string& x) {
        const auto dot = x.find('.');
        const int major = std::min(resolve::detail::bounded_int(x), 1000);
        const int sub = dot == std::string::npos ? 0 : std::min(resolve::detail::bounded_int(x.substr(dot + 1)), 1000);
        return major * 100 + sub;
      };
      const int have = 300 + minor, want = num(s.version);
      // The lowest minor is the first that passes, so "==X.Y" and "~=X.Y" hold from X.Y on like ">=".
      if (s.op == ">=" || s.op == "~=" || s.op == "==")
        ok = ok && have >= want;
      else if (s.op == ">")
        ok = ok && have > want;
      else if (s.op == "<")
        ok = ok && have < want;
      else if (s.op == "<=")
        ok = ok && have <= want;
    }
    if (ok) return candidate;
  }
  return "";
}

void note_python_floor(Draft& d, const std::string& minor, const std::string& from) {
  // End of life per release: PEP 494 (3.6), PEP 537 (3.7), PEP 569 (3.8), PEP 596 (3.9), PEP 619
  // (3.10, October 2026).
  static constexpr std::pair<std::string_view, std::string_view> kEndOfLife[] = {{"3.6", "December 2021"},
                                                                                 {"3.7", "June 2023"},
                                                                                 {"3.8", "October 2024"},
                                                                                 {"3.9", "October 2025"},
                                                                                 {"3.10", "October 2026"}};
  for (const auto& [version, when] : kEndOfLife)
    if (minor == version)
      note(d, from + ": python.version is " + minor + ", the lowest the range allows, and Python " + minor +
                  " reached its end of life in " + std::string(when) +
                  "; the range allows newer ones: set python.version to one the pinned packages have wheels for");
}

std::string index_url(const std::string& url, const std::string& from, Draft& d) {
  const std::string clean = secrets::url_without_credentials(url);
  if (secrets::redact(clean) != clean) {
    note(d, from + ": the index URL " + quote_input(url) +
                " holds a token in its path: left out (it would be written into the Dockerfile, the lock and the "
                "image's history); give pip the index on the build machine");
    return "";
  }
  if (clean == url) return url;
  note(d, from +
              ": the index URL's credentials are left out (they would be written into the Dockerfile, the lock and the "
              "image's history): give pip them on the build machine (a netrc or keyring)");
  return clean;
}

void set_once(std::optional<Value>& slot, Value v, const std::string& what) {
  // A value is written into envpin.yaml as given: a credential in it ("cudatoolkit=11.1git+https://
  // u:pw@...", found by envpin_fuzz_init) is redacted there too; the manifest then refuses the
  // value where it is, and the refusal shows no secret. A control byte can hide a credential from
  // the redactor until the value is shown escaped ("https://\x12u:pw@..."): such a value is
  // carried as shown, redacted.
  if (const std::string shown = diag::printable(v.value); secrets::redact(shown) != shown)
    v.value = secrets::redact(shown);
  v.value = secrets::redact(v.value);
  v.from = secrets::redact(v.from);
  if (slot && slot->value != v.value)
    throw Error(secrets::redact(what + " is " + quote_input(slot->value) + " in " + slot->from + " but " +
                                quote_input(v.value) + " in " + v.from),
                std::nullopt, "make the inputs agree, or pass only one of them with --from");
  if (!slot) slot = std::move(v);
}

}  // namespace detail

std::optional<Location> origin_location(const Draft& d, const std::string& from) {
  const auto colon = from.find(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  const std::string name = from.substr(0, colon);
  std::size_t end = colon + 1;
  while (end < from.size() && std::isdigit(static_cast<unsigned char>(from[end])) && end - colon < 10) ++end;
  if (end == colon + 1) return std::nullopt;
  for (const std::string& source : d.sources)
    if (diag::printable(fs::path(source).filename().generic_string()) == name)
      return Location{source, std::stoi(from.substr(colon + 1, end - colon - 1)), 1};
  return std::nullopt;
}

void refuse(Draft& d, const Error& e, const std::optional<Location>& at) {
  if (d.refusals.size() >= kMaxRefusals) {
    ++d.refusals_dropped;
    return;
  }
  std::optional<Location> where = e.where() ? e.where() : at;
  if (!where) {
    // The first origin the message cites ("... in requirements.txt:3 but ... in pyproject.toml:9").
    const std::string& m = e.message();
    for (std::size_t i = 0; i < m.size() && !where; ++i)
      if (i == 0 || m[i - 1] == ' ' || m[i - 1] == '(') where = origin_location(d, m.substr(i));
  }
  if (where) where->file = secrets::redact(where->file);
  d.refusals.emplace_back(secrets::redact(e.message()), where, secrets::redact(e.hint()));
}

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

// `file`, named by the line `at` as `named` (nullopt: an input itself), read once.
void read_requirements_file(const fs::path& file, Draft& d, Includes& inc, const std::optional<Location>& at,
                            const std::string& named) {
  const fs::path resolved = resolve_input(file, inc.root, at, named, "includes");
  if (std::find(inc.chain.begin(), inc.chain.end(), resolved) != inc.chain.end()) {
    std::string chain;
    for (const fs::path& p : inc.chain) chain += p.filename().generic_string() + " -> ";
    throw Error("requirements files include each other: " + diag::printable(chain + file.filename().generic_string()),
                Location{file.generic_string(), 0, 0}, "remove one of the -r lines");
  }
  if (at && inc.chain.size() >= kMaxIncludeDepth)
    throw Error("the line includes " + quote_input(named) + ": requirements files nested more than " +
                    std::to_string(kMaxIncludeDepth) + " deep",
                at, "include the deepest files from a shallower one");
  if (!d.reading.read.insert(resolved.generic_string()).second) return;  // read already, by another path
  const std::string text = read_counted(resolved, file, d, at);
  inc.chain.push_back(resolved);
  d.sources.push_back(file.generic_string());  // once: d.reading.read
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
    collecting(d, Location{file.generic_string(), start, 1}, [&] { requirement_line(logical, file, start, d, inc); });
    logical.clear();
  }
  if (!logical.empty())
    collecting(d, Location{file.generic_string(), start, 1}, [&] { requirement_line(logical, file, start, d, inc); });
  inc.chain.pop_back();
}

}  // namespace

void detail::requirement_line(const std::string& raw, const fs::path& file, int line, Draft& d, Includes& inc,
                              const std::string& from_suffix) {
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
  const Location here{file.generic_string(), line, 1};
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
    // pip fetches an -r or -c target given as a URL; envpin init reads local files only.
    const bool remote = value.find("://") != std::string::npos;
    if ((option == "-r" || option == "--requirement") && !value.empty()) {
      if (remote)
        throw Error("the line includes the remote requirements file " + quote_input(value) +
                        "; envpin init reads local files only",
                    here, "download it into the project and include that copy with -r");
      read_requirements_file(file.parent_path() / value, d, inc, here, value);
    } else if (option == "-c" || option == "--constraint") {
      // Not read, but a constraints file outside the project or a secret one is refused all the same.
      if (!value.empty() && !remote)
        resolve_input(file.parent_path() / value, inc.root, here, value, "names the constraints file", false);
      note(d, from + ": the constraints file " + quote_input(value) +
                  " is not carried: envpin lock pins every version the listed packages resolve to");
    } else if ((option == "-i" || option == "--index-url") && !value.empty()) {
      if (!manifest::is_index_url(value))
        throw Error("the index URL " + quote_input(value) + " is not one envpin accepts", here,
                    "use an http(s) URL without quotes, spaces or '$'");
      if (std::string url = index_url(value, from, d); !url.empty())
        set_once(d.index, {std::move(url), from}, "the package index");
    } else if (option == "--extra-index-url" && !value.empty()) {
      if (!manifest::is_index_url(value))
        throw Error("the index URL " + quote_input(value) + " is not one envpin accepts", here,
                    "use an http(s) URL without quotes, spaces or '$'");
      const std::string url = index_url(value, from, d);
      if (url.empty() ||
          std::any_of(d.extra_index.begin(), d.extra_index.end(), [&](const Value& v) { return v.value == url; }))
        return;
      if (d.extra_index.size() >= kMaxPackages)
        throw Error("the line would be extra index " + std::to_string(kMaxPackages + 1) +
                        "; envpin.yaml lists at most " + std::to_string(kMaxPackages),
                    here, "give pip the indexes the project uses");
      d.extra_index.push_back({url, from});
    } else if ((option == "-e" || option == "--editable") &&
               (remote || value.starts_with("git+") || value.starts_with("hg+") || value.starts_with("svn+") ||
                value.starts_with("bzr+"))) {
      note(d, from + ": " + quote_input(text) +
                  " is an editable install from a VCS URL: left out (envpin pins from package indexes); pin a "
                  "release of it from an index, or build it in a Dockerfile of your own FROM the image envpin builds");
    } else if (option == "-e" || option == "--editable") {
      note(d, from + ": " + quote_input(text) +
                  " is local code installed editable: not a package envpin pins (envpin's containers mount the "
                  "project at its workdir); install it there if it must be installed");
    } else if ((option == "-f" || option == "--find-links") &&
               value.find("download.pytorch.org/whl/") != std::string::npos && value.ends_with("torch_stable.html")) {
      // "-f https://download.pytorch.org/whl/cu111/torch_stable.html": that CUDA variant's wheels
      // (torch 1.x's way), which its index serves too; the page of every variant names none.
      const auto at = value.find("/whl/") + 5;
      const std::string variant = value.substr(at, value.find('/', at) - at);
      if (variant.starts_with("cu") && variant.size() > 2 &&
          variant.find_first_not_of("0123456789", 2) == std::string::npos) {
        requirement_line("--extra-index-url https://download.pytorch.org/whl/" + variant, file, line, d, inc,
                         from_suffix);
        note(d, from + ": the find-links page " + quote_input(value) + " is carried as its index, " +
                    "https://download.pytorch.org/whl/" + variant);
      } else {
        note(d, from + ": the find-links page " + quote_input(value) +
                    " lists every torch variant: not carried; envpin picks the variant from cuda.gpus and the +cuXXX "
                    "of a pin");
      }
    } else {
      note(d, from + ": the pip option " + quote_input(option) +
                  " is not carried (envpin lock and the Dockerfile set pip's options)");
    }
    return;
  }
  // A shell command pasted into the file ("pip3 install torch --index-url ..."): pip refuses it.
  if (const std::string first = text.substr(0, text.find(' '));
      (first == "pip" || first == "pip3" || first.starts_with("python")) && text.find(" install ") != std::string::npos)
    throw Error("the line is a shell command, not a requirement: pip refuses the file at it", here,
                "list the packages one per line, and the index as --extra-index-url on a line of its own");
  // Options after a requirement: --hash (envpin lock records hashes itself), the rest of pip's
  // per-requirement ones (envpin sets pip's options), and an index option, which pip ignores on a
  // requirement line.
  std::size_t opt = std::string::npos;
  for (std::size_t at = text.find(" -"); at != std::string::npos; at = text.find(" -", at + 1))
    if (text.find(';') > at) {  // before a marker, whose values may hold " -"
      opt = at;
      break;
    }
  if (opt != std::string::npos) {
    const std::string options = trim(text.substr(opt));
    // pip's requirement-file parser knows its file options and --hash, --global-option and
    // --config-settings after a requirement; any other ("pkg -U -I --no-deps", kohya_ss's torch 1
    // file) makes pip refuse the file (pip/_internal/req/req_file.py, SUPPORTED_OPTIONS and
    // SUPPORTED_OPTIONS_REQ).
    static constexpr std::string_view kKnown[] = {"-i",
                                                  "--index-url",
                                                  "--extra-index-url",
                                                  "--no-index",
                                                  "-c",
                                                  "--constraint",
                                                  "-r",
                                                  "--requirement",
                                                  "-e",
                                                  "--editable",
                                                  "-f",
                                                  "--find-links",
                                                  "--no-binary",
                                                  "--only-binary",
                                                  "--prefer-binary",
                                                  "--require-hashes",
                                                  "--pre",
                                                  "--trusted-host",
                                                  "--use-feature",
                                                  "--global-option",
                                                  "--hash",
                                                  "--config-settings",
                                                  "-C"};
    std::istringstream words(options);
    for (std::string w; words >> w;) {
      if (!w.starts_with("-")) continue;  // an option's value
      const std::string name = w.substr(0, w.find('='));
      if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown))
        throw Error("pip has no option " + quote_input(name) + " on a requirement line and refuses the file at it",
                    here, "remove it (envpin's Dockerfile sets how pip installs)");
    }
    const bool index = options.find("--index-url") != std::string::npos ||
                       options.find("--extra-index-url") != std::string::npos ||
                       options.find("--find-links") != std::string::npos;
    note(d, from + ": " + quote_input(options) +
                (index ? " not carried: pip ignores an index option on a requirement line, so it never chose the "
                         "index; put it on a line of its own if it should"
                 : options.starts_with("--hash") ? " dropped: envpin lock records hashes itself"
                                                 : " not carried (envpin lock and the Dockerfile set pip's options)"));
    text = trim(text.substr(0, opt));
  }
  // Two requirements on one line ("torch==1.12.1+cu116 torchvision==0.13.1+cu116"): pip refuses it.
  if (const auto space = text.find_first_of(" \t"); space != std::string::npos && text.find(';') > space) {
    const std::string second = trim(text.substr(space));
    std::string error;
    std::size_t column = 0;
    if (!second.empty() && std::isalnum(static_cast<unsigned char>(second.front())) &&
        manifest::parse_requirement(text.substr(0, space), error, column) &&
        manifest::parse_requirement(second.substr(0, second.find_first_of(" \t")), error, column))
      throw Error("the line holds more than one requirement: pip reads one per line and refuses the file at it", here,
                  "put each requirement on a line of its own");
  }
  // A name never holds '/' (PEP 508), and pip reads "src/pkg" or "dist/x-1.0.whl" as a path.
  const std::string head = text.substr(0, text.find(';'));
  const auto archive = [&](std::string_view suffix) { return trim(head).ends_with(suffix); };
  if (text.find("://") != std::string::npos || text.find(" @ ") != std::string::npos || text.front() == '.' ||
      text.front() == '/' || head.find('/') != std::string::npos || archive(".whl") || archive(".tar.gz") ||
      archive(".zip")) {
    note(d, from + ": " + quote_input(text) +
                " is a URL or path requirement: left out (envpin pins from package indexes)");
    return;
  }
  add_package(d, text, from, here);
}

namespace {

std::optional<manifest::Requirement> parse(const std::string& text) {
  std::string error;
  std::size_t column = 0;
  return manifest::parse_requirement(text, error, column);
}

// d.reading.by_name for every package (a caller may have set some or replaced them).
void index_packages(Draft& d) {
  Draft::Reading& r = d.reading;
  if (r.indexed > d.packages.size()) {
    r.by_name.clear();
    r.indexed = 0;
  }
  for (; r.indexed < d.packages.size(); ++r.indexed)
    if (const auto p = parse(d.packages[r.indexed].value)) r.by_name[p->normalized].push_back(r.indexed);
}

}  // namespace

void add_package(Draft& d, const std::string& requirement, const std::string& from, const std::optional<Location>& at) {
  // "name @ https://..." (PEP 508 direct references) and the like, from any reader.
  if (requirement.find("://") != std::string::npos || requirement.find(" @ ") != std::string::npos) {
    note(d, from + ": " + quote_input(requirement) +
                " is a URL or path requirement: left out (envpin pins from package indexes)");
    return;
  }
  std::string error;
  std::size_t column = 0;
  const auto r = manifest::parse_requirement(requirement, error, column);
  if (!r) {
    note(d, from + ": " + quote_input(requirement) + " is not a requirement envpin reads (" + error + "): left out");
    return;
  }
  if (secrets::redact(requirement) != requirement) {
    note(d, from + ": " + quote_input(requirement) + " holds what looks like a credential: left out");
    return;
  }
  const std::string text = r->text();
  if (text.size() > kMaxPackageBytes) {
    note(d, from + ": " + quote_input(requirement) + " is longer than the " + std::to_string(kMaxPackageBytes) +
                " bytes envpin.yaml holds in a value: left out");
    return;
  }
  const auto file_of = [](const std::string& f) { return f.substr(0, f.find(':')); };
  index_packages(d);
  const auto same = d.reading.by_name.find(r->normalized);
  for (std::size_t k : same == d.reading.by_name.end() ? std::vector<std::size_t>{} : same->second) {
    Value& v = d.packages[k];
    const auto kept = parse(v.value);
    if (!kept) continue;
    if (v.value == text) {  // asked for again, the same way: both places are named
      if (v.from.size() < 512 && v.from != from) v.from += ", " + from;
      return;
    }
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
        throw Conflict(r->normalized + " is " + quote_input(v.value) + " in " + v.from + " but " + quote_input(text) +
                           " in " + from,
                       std::nullopt, "make the inputs agree, or pass --prefer FILE to take one file's version");
      } else if (prefer_matches(d, from)) {
        merged.specifiers = r->specifiers;
        note(d, v.from + ": " + quote_input(v.value) + " gives way to " + quote_input(text) + " (" + from +
                    "): --prefer " + diag::printable(d.prefer));
      } else {
        note(d, from + ": " + quote_input(text) + " gives way to " + quote_input(v.value) + " (" + v.from +
                    "): --prefer " + diag::printable(d.prefer));
      }
    }
    const std::string combined = merged.text();
    if (combined.size() > kMaxPackageBytes)
      throw Error(r->normalized + " is asked for at so many places that its requirement passes the " +
                      std::to_string(kMaxPackageBytes) + " bytes envpin.yaml holds in a value",
                  at, "list each distribution once, with the versions it needs");
    // Each place that asks for it is named, up to a line's worth.
    v = {combined, v.from.size() < 512 ? v.from + ", " + from : v.from.ends_with(", ...") ? v.from : v.from + ", ..."};
    return;
  }
  if (d.packages.size() >= kMaxPackages)
    throw Error(quote_input(r->name) + " would be package " + std::to_string(kMaxPackages + 1) +
                    "; envpin.yaml lists at most " + std::to_string(kMaxPackages),
                at, "list the packages the project imports; pip installs what they depend on");
  d.packages.push_back({text, from});
}

void settle(Draft& d) {
  // No input names a Python: envpin's default, unless the pinned torch has no wheels for it (torch
  // 1.13 stops at 3.10); then the newest Python that torch has wheels for.
  if (!d.python)
    for (const Value& p : d.packages) {
      const auto r = parse(p.value);
      if (!r || r->normalized != "torch") continue;
      std::string version = r->pinned().value_or("");
      for (const auto& s : r->specifiers)
        if (s.op == "==" && s.version.ends_with(".*")) version = s.version.substr(0, s.version.size() - 2);
      const resolve::TorchRelease* release =
          version.empty() ? nullptr : resolve::find_torch_release(version.substr(0, version.find('+')));
      if (!release ||
          resolve::detail::version_pair(release->python_max) >= resolve::detail::version_pair(kDefaultPython))
        break;
      d.python = Value{std::string(release->python_max),
                       "none of the inputs names a Python version: " + std::string(release->python_max) +
                           ", the newest torch " + diag::printable(version) + " has wheels for (" + p.from + ")"};
      break;
    }
  // An extra index of torch's CUDA variants that has no build of the pinned torch (ImageBind's
  // --extra-index-url .../cu113 with torch==1.13.0): pip takes PyPI's build, as if the index were not
  // there; so does the manifest, said so.
  for (const Value& p : d.packages) {
    const auto r = parse(p.value);
    if (!r || r->normalized != "torch") continue;
    const std::optional<std::string> version = r->pinned();
    if (!version || version->find('+') != std::string::npos) break;
    const resolve::TorchRelease* release = resolve::find_torch_release(*version);
    if (!release) break;
    std::erase_if(d.extra_index, [&](const Value& v) {
      const std::string prefix = "https://download.pytorch.org/whl/";
      if (!v.value.starts_with(prefix)) return false;
      const std::string tag = v.value.substr(prefix.size(), v.value.find('/', prefix.size()) - prefix.size());
      if (!tag.starts_with("cu") || tag.size() < 4 || tag.find_first_not_of("0123456789", 2) != std::string::npos)
        return false;
      if (std::any_of(release->variants.begin(), release->variants.end(),
                      [&](const resolve::TorchVariant& t) { return t.tag == tag; }))
        return false;
      note(
          d, v.from + ": the index " + quote_input(v.value) + " has no torch " + *version + " (its variants are " +
                 [&] {
                   std::string list;
                   for (const auto& t : release->variants) list += (list.empty() ? "" : ", ") + std::string(t.tag);
                   return list;
                 }() +
                 "): pip installs PyPI's build instead, so the index is left out and envpin picks the variant");
      return true;
    });
    break;
  }
  const std::string python = d.python ? d.python->value : kDefaultPython;
  std::vector<Value> kept;
  // The alternatives of each distribution, in the order of their first listing.
  std::vector<std::vector<std::size_t>> groups;
  std::unordered_map<std::string, std::size_t> group_of;
  std::vector<std::optional<manifest::Requirement>> parsed;
  for (std::size_t i = 0; i < d.packages.size(); ++i) {
    parsed.push_back(parse(d.packages[i].value));
    const auto [it, added] =
        group_of.emplace(parsed.back() ? parsed.back()->normalized : "\n" + std::to_string(i), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  for (const std::vector<std::size_t>& group : groups) {
    const std::size_t i = group.front();
    if (group.size() == 1) {
      kept.push_back(d.packages[i]);
      continue;
    }
    // The alternative whose marker holds in the image; the first when that cannot be told.
    std::vector<std::size_t> holding;
    bool unknown = false;
    for (std::size_t g : group) {
      const auto& r = parsed[g];
      const std::optional<bool> holds =
          r && !r->marker.empty() ? marker_holds(r->marker, python) : std::optional<bool>(true);
      if (!holds)
        unknown = true;
      else if (*holds)
        holding.push_back(g);
    }
    const std::string name = parsed[i] ? parsed[i]->normalized : d.packages[i].value;
    if (!unknown && holding.empty()) {
      for (std::size_t g : group)
        note(d, d.packages[g].from + ": " + quote_input(d.packages[g].value) +
                    " left out: its marker does not hold for Python " + python + " on linux/amd64");
      continue;
    }
    // Several that all hold (InvokeAI's base "torch>=2.7.0,<3.0" and its cuda extra's
    // "torch==2.7.1+cu128; platform_machine != 'aarch64'"): pip requires each, so the draft lists
    // their intersection, under the marker-free one's name.
    if (!unknown && holding.size() > 1) {
      manifest::Requirement merged = *parsed[holding.front()];
      std::string from = d.packages[holding.front()].from;
      for (std::size_t k = 1; k < holding.size(); ++k) {
        const manifest::Requirement& r = *parsed[holding[k]];
        merged.specifiers.insert(merged.specifiers.end(), r.specifiers.begin(), r.specifiers.end());
        for (const std::string& e : r.extras)
          if (std::find(merged.extras.begin(), merged.extras.end(), e) == merged.extras.end())
            merged.extras.push_back(e);
        if (from.size() < 512) from += ", " + d.packages[holding[k]].from;
      }
      merged.marker.clear();
      if (merged.text().size() <= kMaxPackageBytes) {
        for (std::size_t g : holding)
          note(d, d.packages[g].from + ": " + quote_input(d.packages[g].value) + " holds for Python " + python +
                      " on linux/amd64, as the others listed for " + name +
                      " do: pip requires them all, so the "
                      "draft lists them combined, without their markers");
        kept.push_back({merged.text(), from});
        for (std::size_t g : group)
          if (std::find(holding.begin(), holding.end(), g) == holding.end())
            note(d, d.packages[g].from + ": " + quote_input(d.packages[g].value) +
                        " left out: its marker does not hold for Python " + python + " on linux/amd64");
        continue;
      }
    }
    const std::size_t chosen = !unknown && holding.size() == 1 ? holding.front() : group.front();
    kept.push_back(d.packages[chosen]);
    for (std::size_t g : group) {
      if (g == chosen) continue;
      note(d, d.packages[g].from + ": " + quote_input(d.packages[g].value) + " left out: envpin.yaml lists " + name +
                  " once, and " +
                  (!unknown && holding.size() == 1
                       ? "the marker of " + quote_input(d.packages[chosen].value) + " (" + d.packages[chosen].from +
                             ") is the one that holds for Python " + python + " on linux/amd64"
                       : "the first, " + quote_input(d.packages[chosen].value) + " (" + d.packages[chosen].from +
                             "), is kept; keep the one for the image's Python"));
    }
  }
  d.packages = std::move(kept);
  d.reading.by_name.clear();
  d.reading.indexed = 0;
  // envpin's CUDA images are nvidia/cuda's Ubuntu ones: another OS or base is a suggestion.
  if (d.cuda && d.base) {
    note(d, d.base->from + " suggests base " + quote_input(d.base->value) + "; with CUDA (" + d.cuda->from +
                ") envpin builds on nvidia/cuda's image instead");
    d.base.reset();
  }
  // A base envpin knows nothing of (nvcr.io/nvidia/pytorch:22.04-py3, yolov5's): its own Python and
  // packages are not read, and the manifest's are installed on top.
  if (d.base)
    note(d, d.base->from + ": envpin does not read what " + quote_input(d.base->value) +
                " already holds (its Python, its packages): the manifest's Python and packages are installed on "
                "top of it, from the indexes");
  if (d.cuda && d.os && !d.os->value.starts_with("ubuntu")) {
    note(d, d.os->from + " suggests os " + quote_input(d.os->value) + "; with CUDA (" + d.cuda->from +
                ") envpin builds on nvidia/cuda's Ubuntu image instead");
    d.os.reset();
  }
  if (d.reading.dropped > 0) {
    d.notes.push_back("and " + std::to_string(d.reading.dropped) + " more things not carried, not listed (at most " +
                      std::to_string(kMaxNotes) + " are)");
    d.reading.dropped = 0;
  }
}

void detail::read_requirements_unredacted(const fs::path& file, Draft& d) {
  Includes inc{project_root(file, d), {}};
  read_requirements_file(file, d, inc, std::nullopt, file.generic_string());
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
    // The Dockerfile envpin generated is the manifest's output, not an input to it. (One that
    // leads outside the directory is not opened here: its reader refuses it.)
    std::error_code ec;
    const fs::path resolved = fs::canonical(dir / name, ec);
    std::string text;
    if (kind_of(dir / name) == "dockerfile" && !ec && detail::inside(resolved, fs::canonical(dir, ec)) &&
        io::read_regular(resolved, detail::kMaxInput, text) == io::ReadStatus::ok && written_by_envpin(text))
      continue;
    out.push_back(dir / name);
  }
  return out;
}

// Every refusal of a reader quotes the inputs' lines (origins, values): redacted here once, so no
// credential in an input reaches the terminal, whatever path the refusal took (envpin_fuzz_init
// found origins built from a conda line that held one).
namespace {
template <class Read>
void redacting(Read&& read) {
  try {
    read();
  } catch (const Error& e) {
    throw Error(secrets::redact(e.message()), e.where(), secrets::redact(e.hint()));
  }
}
}  // namespace

void read_requirements(const fs::path& file, Draft& d) {
  redacting([&] { detail::read_requirements_unredacted(file, d); });
}
void read_conda(const fs::path& file, Draft& d) {
  redacting([&] { detail::read_conda_unredacted(file, d); });
}
void read_dockerfile(const fs::path& file, Draft& d) {
  redacting([&] { detail::read_dockerfile_unredacted(file, d); });
}
void read_pyproject(const fs::path& file, Draft& d, const std::vector<std::string>& extras) {
  redacting([&] { detail::read_pyproject_unredacted(file, d, extras); });
}

}  // namespace envpin::init

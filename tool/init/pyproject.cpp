// SPDX-License-Identifier: Apache-2.0
// envpin init's reader for pyproject.toml (toml++): PEP 621's requires-python, dependencies and
// optional groups; Poetry's dependencies (caret and tilde as PEP 440), its extras and groups; uv's
// package indexes.
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/init.hpp"
#include "init/marker.hpp"
#include "init/parts.hpp"
#include "manifest/requirement.hpp"

namespace envpin::init {

namespace fs = std::filesystem;
using diag::Error;
using diag::Location;
using namespace detail;

namespace {

// --- pyproject.toml -----------------------------------------------------------------------------

// Poetry's "^1.2.3" / "~1.2.3" / "1.2.3" / "*" as PEP 440. nullopt when a caret or tilde bound
// needs a number past 64 bits: such a range is left out, never wrapped or clamped into another.
std::optional<std::string> poetry_version(std::string v) {
  v = trim(v);
  if (v.empty() || v == "*") return "";
  const auto next = [](const std::string& base, bool caret) -> std::optional<std::string> {
    std::vector<std::uint64_t> parts;
    std::stringstream ss(base);
    for (std::string p; std::getline(ss, p, '.');) {
      // The digits a part starts with ("0rc1" -> 0), as many as fit.
      std::uint64_t n = 0;
      const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), n);
      if (ec == std::errc::result_out_of_range) return std::nullopt;
      parts.push_back(end == p.data() ? 0 : n);
    }
    while (parts.size() < 2) parts.push_back(0);
    std::size_t bump = 0;
    if (caret) {
      while (bump + 1 < parts.size() && parts[bump] == 0) ++bump;
    } else {
      bump = parts.size() >= 2 ? 1 : 0;
    }
    if (parts[bump] == std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
    std::string out;
    for (std::size_t i = 0; i <= bump; ++i) out += (i ? "." : "") + std::to_string(i == bump ? parts[i] + 1 : parts[i]);
    if (bump == 0) out += ".0";
    return out;
  };
  if (v.front() == '^' || (v.front() == '~' && (v.size() < 2 || v[1] != '='))) {
    const auto bound = next(v.substr(1), v.front() == '^');
    if (!bound) return std::nullopt;
    return ">=" + v.substr(1) + ",<" + *bound;
  }
  if (std::isdigit(static_cast<unsigned char>(v.front()))) return "==" + v;
  return v;
}

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

// Poetry's `python = ">=3.8,<3.9"` (or "^3.9") on one dependency as a PEP 508 marker:
// python_version >= "3.8" and python_version < "3.9". "" when it is not one envpin reads.
std::string python_marker(const std::string& constraint) {
  std::string marker;
  std::stringstream parts(constraint);
  for (std::string part; std::getline(parts, part, ',');) {
    const std::optional<std::string> pep = poetry_version(trim(part));
    if (!pep) return "";
    std::stringstream specs(*pep);
    for (std::string spec; std::getline(specs, spec, ',');) {
      spec = trim(spec);
      const auto digit = spec.find_first_of("0123456789");
      if (spec.empty() || digit == std::string::npos || digit == 0) return "";
      const std::string op = trim(spec.substr(0, digit)), version = spec.substr(digit);
      if (op != ">=" && op != ">" && op != "<" && op != "<=" && op != "==" && op != "!=") return "";
      if (version.find_first_not_of("0123456789.*") != std::string::npos) return "";
      marker += (marker.empty() ? "" : " and ") + std::string("python_version ") + op + " \"" + version + "\"";
    }
  }
  return marker;
}

}  // namespace

void detail::read_pyproject_unredacted(const fs::path& file, Draft& d, const std::vector<std::string>& extras) {
  Includes inc;
  const std::optional<std::string> input = open_input(file, d, inc);
  if (!input) return;
  const std::string& text = *input;
  toml::table t;
  try {
    t = toml::parse(text, file.generic_string());
  } catch (const toml::parse_error& e) {
    throw Error("not valid TOML: " + diag::printable(e.description()),
                Location{file.generic_string(), static_cast<int>(e.source().begin.line),
                         static_cast<int>(e.source().begin.column)},
                "fix the file");
  }
  d.sources.push_back(file.generic_string());
  const std::string name = file.filename().generic_string();
  const auto at = [&](const toml::node& n) {
    return Location{file.generic_string(), line_of(n), static_cast<int>(n.source().begin.column)};
  };
  // A package the other inputs ask for differently is a refusal at its line; reading goes on.
  const auto add = [&](const std::string& requirement, const std::string& from, const Location& loc) {
    collecting(d, loc, [&] { add_package(d, requirement, from, loc); });
  };
  if (const auto* project = t["project"].as_table()) {
    if (const auto* rp = (*project)["requires-python"].as_string()) {
      const std::string v = lowest_python(rp->get());
      if (v.empty())
        note(d, where(file, line_of(*rp)) + ": requires-python " + quote_input(rp->get()) + " not understood");
      else {
        const std::string from = where(file, line_of(*rp)) + " (requires-python " + diag::printable(rp->get()) + ")";
        collecting(d, at(*rp), [&] {
          set_once(d.python, {v, from.substr(0, from.size() - 1) + ", the lowest it allows)"}, "python.version");
        });
        note_python_floor(d, v, from);
      }
    }
    if (const auto* deps = (*project)["dependencies"].as_array())
      for (const auto& dep : *deps)
        if (const auto* s = dep.as_string()) add(s->get(), where(file, line_of(dep)), at(dep));
    if (const auto* groups = (*project)["optional-dependencies"].as_table())
      for (const auto& [group, list] : *groups) {
        const std::string g(group.str());
        if (std::find(extras.begin(), extras.end(), g) == extras.end()) {
          note(d, name + ": the optional group " + quote_input(g) + " is not included (add it with --extra " +
                      diag::printable(g) + ")");
          continue;
        }
        if (const auto* arr = list.as_array())
          for (const auto& dep : *arr)
            if (const auto* s = dep.as_string())
              add(s->get(), where(file, line_of(dep)) + " (" + diag::printable(g) + ")", at(dep));
      }
  }
  // Poetry: caret and tilde ranges; optional packages come with the extras that list them
  // ([tool.poetry.extras]), dependency groups ([tool.poetry.group.NAME]) by name, both by --extra.
  const auto wanted = [&](const std::string& group) {
    return std::find(extras.begin(), extras.end(), group) != extras.end();
  };
  std::map<std::string, std::vector<std::string>> poetry_extras;  // normalized package -> the extras listing it
  if (const auto* table = t["tool"]["poetry"]["extras"].as_table())
    for (const auto& [extra, list] : *table)
      if (const auto* arr = list.as_array())
        for (const auto& item : *arr)
          if (const auto* s = item.as_string())
            poetry_extras[manifest::normalize_name(s->get())].emplace_back(extra.str());
  // Poetry's package sources ([[tool.poetry.source]]) and uv's indexes ([[tool.uv.index]]) by name,
  // with the packages whose sources name them.
  struct Source {
    std::string url, from, priority;  // priority: Poetry's, or "explicit" for uv's explicit = true
    std::vector<std::string> packages;
    bool listed = false;  // named by an applying [tool.uv.sources] entry or Poetry dependency
  };
  std::map<std::string, Source> sources;
  std::vector<std::string> source_order;
  const auto declare_sources = [&](const toml::array* list, bool uv) {
    if (!list) return;
    for (const auto& entry : *list) {
      const auto* tbl = entry.as_table();
      const auto* url = tbl ? (*tbl)["url"].as_string() : nullptr;
      const auto* named = tbl ? (*tbl)["name"].as_string() : nullptr;
      if (!url || sources.size() >= 64) continue;
      const std::string key = named ? named->get() : url->get();
      std::string priority;
      if (uv) {
        if (const auto* e = (*tbl)["explicit"].as_boolean(); e && e->get()) priority = "explicit";
        if (const auto* dflt = (*tbl)["default"].as_boolean(); dflt && dflt->get()) priority = "primary";
      } else if (const auto* p = (*tbl)["priority"].as_string()) {
        priority = p->get();
      } else if (const auto* dflt = (*tbl)["default"].as_boolean(); dflt && dflt->get()) {
        priority = "primary";
      }
      if (!sources.count(key)) source_order.push_back(key);
      sources[key] = {url->get(),
                      where(file, line_of(entry)) + (uv ? " ([[tool.uv.index]] " : " ([[tool.poetry.source]] ") +
                          diag::printable(key) + ")",
                      priority,
                      {},
                      false};
    }
  };
  declare_sources(t["tool"]["poetry"]["source"].as_array(), false);
  declare_sources(t["tool"]["uv"]["index"].as_array(), true);
  const auto used_source = [&](const std::string& source, const std::string& pkg, const std::string& from) {
    const auto it = sources.find(source);
    if (it == sources.end()) {
      note(d, from + ": " + quote_input(pkg) + " names the source " + quote_input(source) +
                  ", which no [[tool.poetry.source]] or [[tool.uv.index]] declares: its index is left to you");
      return;
    }
    it->second.listed = true;
    if (it->second.packages.size() < 16) it->second.packages.push_back(diag::printable(pkg));
  };
  std::function<void(const std::string&, const toml::node&, const std::string&)> poetry_dependency;
  const auto poetry_dependencies = [&](const toml::table& deps, const std::string& group) {
    // toml++ iterates a table by key; the manifest lists them in the file's order.
    std::vector<std::pair<std::string, const toml::node*>> ordered;
    for (const auto& [key, value] : deps) ordered.emplace_back(std::string(key.str()), &value);
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return line_of(*a.second) < line_of(*b.second); });
    for (const auto& [pkg, node] : ordered) {
      // Several constraints, each for its Pythons or platforms ([{version = "<2.6", python = "<3.9"},
      // {version = ">=2.6", python = ">=3.9"}], TransformerLens): each one with its marker; settle()
      // keeps the one that holds in the image.
      std::vector<const toml::node*> alternatives;
      if (const auto* list = node->as_array())
        for (const auto& item : *list) alternatives.push_back(&item);
      else
        alternatives.push_back(node);
      for (const toml::node* alternative : alternatives) poetry_dependency(pkg, *alternative, group);
    }
  };
  poetry_dependency = [&](const std::string& pkg, const toml::node& value, const std::string& group) {
    {
      const std::string from = where(file, line_of(value)) + (group.empty() ? "" : " (" + diag::printable(group) + ")");
      std::string spec, extras_of, marker;
      if (const auto* s = value.as_string())
        spec = s->get();
      else if (const auto* tbl = value.as_table()) {
        if (const auto* python = (*tbl)["python"].as_string()) {
          marker = python_marker(python->get());
          if (marker.empty()) {
            note(d, from + ": " + quote_input(pkg) + " is for Python " + quote_input(python->get()) +
                        ", a constraint envpin does not read: left out");
            return;
          }
        }
        if (const auto* markers = (*tbl)["markers"].as_string())
          marker = marker.empty() ? markers->get() : "(" + marker + ") and (" + markers->get() + ")";
        if (const auto* source = (*tbl)["source"].as_string()) used_source(source->get(), pkg, from);
        if ((*tbl)["path"] || (*tbl)["git"] || (*tbl)["url"]) {
          note(d, from + ": " + quote_input(pkg) +
                      " comes from a path, git or URL: left out (envpin pins from package indexes)");
          return;
        }
        if (const auto* v = (*tbl)["version"].as_string()) spec = v->get();
        std::string with;  // { extras = ["all"] } -> fastapi[all]
        if (const auto* list = (*tbl)["extras"].as_array())
          for (const auto& e : *list)
            if (const auto* x = e.as_string()) with += (with.empty() ? "" : ",") + x->get();
        if (!with.empty()) extras_of = "[" + with + "]";
        if (const auto* optional = (*tbl)["optional"].as_boolean(); optional && optional->get()) {
          const auto listed = poetry_extras.find(manifest::normalize_name(pkg));
          std::string extra;
          if (listed != poetry_extras.end())
            for (const std::string& e : listed->second)
              if (wanted(e)) extra = e;
          if (extra.empty()) {
            if (listed == poetry_extras.end()) {
              note(d, from + ": " + quote_input(pkg) + " is optional and in no extra: left out");
            } else {
              std::string names;
              for (const std::string& e : listed->second) names += (names.empty() ? "" : ", ") + diag::printable(e);
              note(d, from + ": " + quote_input(pkg) + " is optional, for the Poetry extra " + names +
                          ": not included (add it with --extra " + diag::printable(listed->second.front()) + ")");
            }
            return;
          }
        }
      }
      const std::optional<std::string> pep = poetry_version(spec);
      if (!pep) {
        note(d, from + ": Poetry's " + quote_input(spec) + " for " + quote_input(pkg) +
                    " needs a number past 64 bits: left out");
        return;
      }
      if (pkg == "python") {
        const std::string v = lowest_python(*pep);
        if (!v.empty()) {
          collecting(d, at(value), [&] {
            set_once(d.python, {v, from + " (python " + diag::printable(spec) + ", the lowest it allows)"},
                     "python.version");
          });
          note_python_floor(d, v, from + " (python " + diag::printable(spec) + ")");
        }
        return;
      }
      add(pkg + extras_of + *pep + (marker.empty() ? "" : "; " + marker), from, at(value));
    }
  };
  if (const auto* poetry = t["tool"]["poetry"]["dependencies"].as_table()) poetry_dependencies(*poetry, "");
  if (const auto* table = t["tool"]["poetry"]["extras"].as_table())
    for (const auto& [extra, list] : *table)
      if (!wanted(std::string(extra.str())))
        note(d, name + ": the Poetry extra " + quote_input(std::string(extra.str())) +
                    " is not included (add it with --extra " + diag::printable(std::string(extra.str())) + ")");
  if (const auto* groups = t["tool"]["poetry"]["group"].as_table())
    for (const auto& [group, body] : *groups) {
      const std::string g(group.str());
      const auto* deps = body.as_table() ? (*body.as_table())["dependencies"].as_table() : nullptr;
      if (!deps) continue;
      if (wanted(g))
        poetry_dependencies(*deps, g);
      else
        note(d, name + ": the Poetry group " + quote_input(g) + " is not included (add it with --extra " +
                    diag::printable(g) + ")");
    }
  // PEP 735 dependency groups ([dependency-groups], uv's dev groups): by name, with --extra; an
  // {include-group = "x"} entry brings that group's packages.
  if (const auto* groups = t["dependency-groups"].as_table()) {
    std::vector<std::string> seen;
    const std::function<void(const std::string&, int)> add_group = [&](const std::string& g, int depth) {
      const auto* arr = (*groups)[g].as_array();
      if (!arr || depth > 8 || std::find(seen.begin(), seen.end(), g) != seen.end()) return;
      seen.push_back(g);
      for (const auto& dep : *arr) {
        if (const auto* s = dep.as_string())
          add(s->get(), where(file, line_of(dep)) + " (" + diag::printable(g) + ")", at(dep));
        else if (const auto* included = dep.as_table() ? (*dep.as_table())["include-group"].as_string() : nullptr)
          add_group(included->get(), depth + 1);
      }
    };
    for (const auto& [group, list] : *groups) {
      const std::string g(group.str());
      if (wanted(g))
        add_group(g, 0);
      else
        note(d, name + ": the dependency group " + quote_input(g) + " is not included (add it with --extra " +
                    diag::printable(g) + ")");
    }
  }
  // The groups this file offers, for the --extra check once every input is read.
  for (const auto* table : {t["project"]["optional-dependencies"].as_table(), t["tool"]["poetry"]["extras"].as_table(),
                            t["tool"]["poetry"]["group"].as_table(), t["dependency-groups"].as_table()})
    if (table)
      for (const auto& [key, value] : *table)
        if (d.groups.size() < kMaxPackages) d.groups.insert(std::string(key.str()));
  // uv's sources ([tool.uv.sources]): an entry applies when it names no extra or group, or one
  // included with --extra, and its marker holds on linux/amd64. fish-speech's torch = [{index =
  // "pytorch-cpu", extra = "cpu"}, {index = "pytorch-cu126", extra = "cu126"}] takes only the
  // chosen extra's index.
  // A source matters only for a package the draft installs (InvokeAI's triton-rocm is in the rocm
  // extra alone).
  std::set<std::string> in_draft;
  for (const Value& p : d.packages)
    in_draft.insert(manifest::normalize_name(p.value.substr(0, p.value.find_first_of("<>=!~[; @"))));
  if (const auto* uv_sources = t["tool"]["uv"]["sources"].as_table())
    for (const auto& [pkg_key, value] : *uv_sources) {
      const std::string pkg(pkg_key.str());
      if (!in_draft.count(manifest::normalize_name(pkg))) continue;
      std::vector<const toml::table*> entries;
      if (const auto* one = value.as_table()) entries.push_back(one);
      if (const auto* many = value.as_array())
        for (const auto& item : *many)
          if (const auto* e = item.as_table()) entries.push_back(e);
      for (const toml::table* e : entries) {
        const auto* index = (*e)["index"].as_string();
        if (!index) continue;  // a git, path or URL source: the dependency itself says so
        const auto* extra = (*e)["extra"].as_string();
        const auto* group = (*e)["group"].as_string();
        if ((extra && !wanted(extra->get())) || (group && !wanted(group->get()))) continue;
        if (const auto* marker = (*e)["marker"].as_string())
          if (marker_holds(marker->get(), d.python ? d.python->value : kDefaultPython) == std::optional<bool>(false))
            continue;
        used_source(index->get(), pkg, where(file, line_of(*e)));
      }
    }
  // The indexes: one the project's packages are sourced from, or that uv and Poetry use for every
  // package (neither explicit nor Poetry's "explicit"), becomes an index of the manifest; pip reads
  // an extra index for every package, so an explicit one says which packages it was for.
  for (const std::string& key : source_order) {
    const Source& src = sources[key];
    const bool explicit_only = src.priority == "explicit";
    if (explicit_only && !src.listed) {
      note(d, src.from + ": " + quote_input(src.url) +
                  " is used by no source of the included groups and extras on linux/amd64: left out");
      continue;
    }
    if (!manifest::is_index_url(src.url)) {
      note(d, src.from + ": " + quote_input(src.url) + " is not an index URL envpin accepts: left out");
      continue;
    }
    const std::string u = index_url(src.url, src.from, d);
    if (u.empty()) continue;
    if ((src.priority == "primary" || src.priority == "default") && !d.index) {
      collecting(d, origin_location(d, src.from), [&] { set_once(d.index, {u, src.from}, "the package index"); });
      continue;
    }
    if (std::none_of(d.extra_index.begin(), d.extra_index.end(), [&](const Value& v) { return v.value == u; }))
      d.extra_index.push_back({u, src.from});
    if (explicit_only) {
      std::string packages;
      for (const std::string& p : src.packages) packages += (packages.empty() ? "" : ", ") + p;
      note(d, src.from + " is explicit (only for " + packages +
                  "): kept as an extra index, which pip consults for every package");
    }
  }
  // uv's resolver settings have no pip form (WhisperX's exclude-newer, fish-speech's overrides).
  if (const auto* uv = t["tool"]["uv"].as_table())
    for (const auto& [key, node] : *uv) {
      const std::string k(key.str());
      if (k == "sources" || k == "index" || k == "dev-dependencies") continue;  // read above, or by groups
      const bool resolution =
          k == "override-dependencies" || k == "constraint-dependencies" || k == "extra-build-dependencies";
      note(d, where(file, line_of(node)) + ": [tool.uv] " + diag::printable(k) + " is not carried: " +
                  (resolution ? "envpin.yaml has no such setting; list a version the resolution needs under "
                                "python.packages"
                   : k == "exclude-newer" ? "envpin has no cutoff by upload date: envpin lock takes the newest "
                                            "versions the requirements allow, however recent, and keeps them pinned"
                                          : "a setting of uv itself"));
    }
}

}  // namespace envpin::init

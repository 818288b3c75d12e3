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
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/init.hpp"
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
  const auto poetry_dependencies = [&](const toml::table& deps, const std::string& group) {
    // toml++ iterates a table by key; the manifest lists them in the file's order.
    std::vector<std::pair<std::string, const toml::node*>> ordered;
    for (const auto& [key, value] : deps) ordered.emplace_back(std::string(key.str()), &value);
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return line_of(*a.second) < line_of(*b.second); });
    for (const auto& [pkg, node] : ordered) {
      const toml::node& value = *node;
      const std::string from = where(file, line_of(value)) + (group.empty() ? "" : " (" + diag::printable(group) + ")");
      std::string spec, extras_of;
      if (const auto* s = value.as_string())
        spec = s->get();
      else if (const auto* tbl = value.as_table()) {
        if ((*tbl)["path"] || (*tbl)["git"] || (*tbl)["url"]) {
          note(d, from + ": " + quote_input(pkg) +
                      " comes from a path, git or URL: left out (envpin pins from package indexes)");
          continue;
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
            if (listed == poetry_extras.end())
              note(d, from + ": " + quote_input(pkg) + " is optional and in no extra: left out");
            continue;  // the extras not asked for are one note each, below
          }
        }
      }
      const std::optional<std::string> pep = poetry_version(spec);
      if (!pep) {
        note(d, from + ": Poetry's " + quote_input(spec) + " for " + quote_input(pkg) +
                    " needs a number past 64 bits: left out");
        continue;
      }
      if (pkg == "python") {
        const std::string v = lowest_python(*pep);
        if (!v.empty())
          collecting(d, at(value), [&] {
            set_once(d.python, {v, from + " (python " + diag::printable(spec) + ", the lowest it allows)"},
                     "python.version");
          });
        continue;
      }
      add(pkg + extras_of + *pep, from, at(value));
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
  // uv: an index on download.pytorch.org names the torch variant.
  if (const auto* indexes = t["tool"]["uv"]["index"].as_array())
    for (const auto& entry : *indexes)
      if (const auto* url = entry.as_table() ? (*entry.as_table())["url"].as_string() : nullptr) {
        if (!manifest::is_index_url(url->get())) continue;
        const std::string u = index_url(url->get(), where(file, line_of(entry)), d);
        if (!u.empty() &&
            std::none_of(d.extra_index.begin(), d.extra_index.end(), [&](const Value& v) { return v.value == u; }))
          d.extra_index.push_back({u, where(file, line_of(entry)) + " ([[tool.uv.index]])"});
      }
}

}  // namespace envpin::init

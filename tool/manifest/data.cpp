// SPDX-License-Identifier: Apache-2.0
#include "manifest/data.hpp"

#include <algorithm>
#include <filesystem>

namespace envpin::manifest {

namespace fs = std::filesystem;

std::vector<Located<std::string>> data_paths(const Manifest& m) {
  std::vector<Located<std::string>> out;
  const auto add = [&out](std::string path, const Location& where) {
    if (std::none_of(out.begin(), out.end(), [&](const auto& o) { return o.value == path; }))
      out.push_back({std::move(path), where});
  };
  for (const NamedValue& p : m.paths) {
    // ${NAME} as env sets it (load checked that each is set).
    std::string v = p.value.value;
    for (std::size_t at = v.find("${"); at != std::string::npos; at = v.find("${", at)) {
      const std::size_t end = v.find('}', at);
      if (end == std::string::npos) break;
      const std::string name = v.substr(at + 2, end - at - 2);
      const auto e =
          std::find_if(m.env.begin(), m.env.end(), [&](const NamedValue& n) { return n.name.value == name; });
      const std::string value = e == m.env.end() ? std::string() : e->value.value;
      v.replace(at, end + 1 - at, value);
      at += value.size();
    }
    while (v.size() > 1 && v.back() == '/') v.pop_back();
    const fs::path inside =
        fs::path(v).lexically_normal().lexically_relative(fs::path(m.workdir.value).lexically_normal());
    std::string rel = inside.generic_string();
    while (!rel.empty() && rel.back() == '/') rel.pop_back();
    if (rel.empty() || rel == "." || rel == ".." || rel.starts_with("../") || !fs::path(v).is_absolute()) continue;
    add(rel, p.value.where);
  }
  if (m.jobs)
    for (const auto& d : m.jobs->data) add(d.value, d.where);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  return out;
}

}  // namespace envpin::manifest

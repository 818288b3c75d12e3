// SPDX-License-Identifier: Apache-2.0
// The draft as envpin.yaml's text: every value with its origin as a comment, the notes at the end.
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "diag/text.hpp"
#include "init/init.hpp"
#include "init/parts.hpp"
#include "secrets/rules.hpp"

namespace envpin::init {

namespace fs = std::filesystem;

namespace {

// A YAML double-quoted scalar. A control character a hostile input slipped into a value is
// escaped (\xNN), and a bidirectional control (\uNNNN): the line stays one line that reads as it
// holds, and the manifest reader refuses the value by name.
std::string yq(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
      continue;
    }
    if (detail::bidi_at(std::string_view(s).substr(i, 3)) == 0) {
      const auto b = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(s[i + k])); };
      const unsigned cp = u == 0xD8 ? ((b(0) & 0x1Fu) << 6) | (b(1) & 0x3Fu)
                                    : ((b(0) & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", cp);
      out += escape;
      i += u == 0xD8 ? 1 : 2;
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string comment(const std::string& from) { return "  # " + secrets::redact(diag::printable(from)); }

}  // namespace

std::string write_manifest(const Draft& d, const Options& o) {
  std::ostringstream y;
  if (!o.schema.empty()) y << "# yaml-language-server: $schema=" << o.schema << "\n";
  y << "# Written by `envpin init`";
  if (!d.sources.empty()) {
    y << " from";
    for (std::size_t i = 0; i < d.sources.size(); ++i)
      y << (i ? ", " : " ") << secrets::redact(diag::printable(fs::path(d.sources[i]).filename().string()));
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
  if (o.system_python) y << "  source: \"system\"  # --source system: the OS's python3 and its python3-* packages\n";
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

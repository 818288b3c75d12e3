// SPDX-License-Identifier: Apache-2.0
#include "render/quote.hpp"

#include <nlohmann/json.hpp>

#include "diag/error.hpp"
#include "diag/text.hpp"

namespace envpin::render {

std::string sh_quote(std::string_view s) {
  // Text with '$' or '`' is double-quoted with escapes instead: the same word to the shell,
  // but it does not read as a variable left unexpanded by mistake (shellcheck SC2016).
  if (s.find_first_of("$`") != std::string_view::npos) return "\"" + detail::sh_double_quoted_body(s) + "\"";
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string sh_word(std::string_view s) {
  return !s.empty() && diag::only_ascii(s, "._-+=/:@,%") ? std::string(s) : sh_quote(s);
}

std::string backslash_quoted(std::string_view s, std::string_view what) {
  // Neither a Dockerfile nor CMake has an escape for a line break inside these quotes: one would
  // end the instruction. The loader refuses such values; this is the second wall.
  if (diag::control_at(s) != std::string_view::npos)
    throw diag::Error("internal: a control character reached a " + std::string(what) + " " + diag::quote(s));
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"' || c == '$') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string dockerfile_quote(std::string_view s) { return backslash_quoted(s, "Dockerfile value"); }

std::string dockerfile_json_args(const std::vector<std::string>& args) {
  // Each word a JSON string (the serializer escapes '"' and '\\'): a Dockerfile reads the
  // array as JSON, so no word can split or end the instruction.
  std::string out = "[";
  for (const std::string& a : args) {
    if (diag::control_at(a) != std::string_view::npos)
      throw diag::Error("internal: a control character reached a Dockerfile argument " + diag::quote(a));
    out += (out.size() > 1 ? ", " : "") + nlohmann::json(a).dump();
  }
  return out + "]";
}

}  // namespace envpin::render

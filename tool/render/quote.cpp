// SPDX-License-Identifier: Apache-2.0
#include "render/quote.hpp"

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

std::string dockerfile_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"' || c == '$') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace envpin::render

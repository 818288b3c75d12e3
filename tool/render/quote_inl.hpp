// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace envpin::render {

namespace detail {
// Escapes `s` for use inside double quotes in sh.
inline std::string sh_double_quoted_body(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"' || c == '$' || c == '`') out += '\\';
    out += c;
  }
  return out;
}
}  // namespace detail

template <class Lookup>
std::string sh_path_word(std::string_view path, Lookup lookup) {
  std::string out = "\"";
  std::size_t i = 0;
  while (i < path.size()) {
    if (path.substr(i).starts_with("${")) {
      const std::size_t end = path.find('}', i);
      const std::string name(path.substr(i + 2, end - i - 2));
      out += "${" + name + ":-" + detail::sh_double_quoted_body(lookup(name)) + "}";
      i = end + 1;
    } else {
      out += detail::sh_double_quoted_body(path.substr(i, 1));
      ++i;
    }
  }
  return out + "\"";
}

}  // namespace envpin::render

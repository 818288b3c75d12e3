// SPDX-License-Identifier: Apache-2.0
#include "render/quote.hpp"

namespace envpin::render {

std::string sh_quote(std::string_view s) {
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

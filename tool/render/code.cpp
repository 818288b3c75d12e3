// SPDX-License-Identifier: Apache-2.0
#include "render/code.hpp"

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "render/templates.hpp"

namespace envpin::render {

Code Code::sh(std::string_view value) { return Code(sh_quote(value)); }

Code Code::embedded(std::string_view name) { return Code(std::string(template_text(name))); }

Code Code::sh_words(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : " ") + sh_quote(v);
  return Code(out);
}

Code Code::dockerfile(std::string_view value) { return Code(dockerfile_quote(value)); }

Code Code::dockerfile_args(const std::vector<std::string>& values) { return Code(dockerfile_json_args(values)); }

Code Code::cmake(std::string_view value) { return Code(backslash_quoted(value, "CMake value")); }

Code Code::pattern_line(std::string_view line) {
  if (diag::control_at(line) != std::string_view::npos)
    throw diag::Error("internal: a control character reached a pattern line " + diag::quote(line));
  return Code(std::string(line));
}

Code Code::number(long long value) { return Code(std::to_string(value)); }

Code Code::word(std::string_view value, std::string_view extra) {
  if (!diag::only_ascii(value, extra))
    throw diag::Error("internal: " + diag::quote(value) + " reached an artifact unescaped");
  return Code(std::string(value));
}

Code join(const std::vector<Code>& parts, const Code& separator) {
  Code out = Code::literal("");
  for (std::size_t i = 0; i < parts.size(); ++i) out = i ? out + separator + parts[i] : out + parts[i];
  return out;
}

}  // namespace envpin::render

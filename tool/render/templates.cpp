// SPDX-License-Identifier: Apache-2.0
#include "render/templates.hpp"

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "render/embedded_templates.hpp"

namespace envpin::render {

std::string_view template_text(std::string_view name) {
  for (const EmbeddedTemplate& t : embedded_templates())
    if (t.name == name) return t.text;
  throw diag::Error("internal: no embedded template '" + std::string(name) + "'");
}

std::string render_template(std::string_view name, const Data& data) {
  kainjow::mustache::mustache tmpl{std::string(template_text(name))};
  if (!tmpl.is_valid())
    throw diag::Error("internal: template '" + std::string(name) + "': " + tmpl.error_message());
  // Generated files are not HTML. {{value}} (comments, messages) is made one printable line:
  // whatever it holds, it cannot end the comment and start a line of code. {{{value}}} is
  // for code and takes values the renderer already quoted for the target language.
  tmpl.set_custom_escape([](const std::string& s) { return diag::printable(s); });
  std::string out = tmpl.render(data);
  if (!tmpl.is_valid())
    throw diag::Error("internal: template '" + std::string(name) + "': " + tmpl.error_message());
  // kainjow-mustache keeps the line breaks of standalone tags of sections that render
  // nothing; fold the resulting runs of blank lines so the output reads as written.
  std::string folded;
  folded.reserve(out.size());
  std::size_t newlines = 0;
  for (char c : out) {
    newlines = c == '\n' ? newlines + 1 : 0;
    if (newlines <= 2) folded += c;
  }
  return folded;
}

Data list_of(const std::vector<std::string>& items) {
  Data list{Data::type::list};
  for (const std::string& item : items) list << Data{item};
  return list;
}

}  // namespace envpin::render

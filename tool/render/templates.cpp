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

Fields& Fields::text(const std::string& key, std::string_view value) {
  data_.set(key, std::string(value));
  text_.insert(key);
  return *this;
}

Fields& Fields::code(const std::string& key, const Code& value) {
  data_.set(key, value.text());
  code_.insert(key);
  return *this;
}

Fields& Fields::flag(const std::string& key, bool on) {
  data_.set(key, on ? kainjow::mustache::data::type::bool_true : kainjow::mustache::data::type::bool_false);
  if (on) on_.insert(key);
  return *this;
}

Fields& Fields::section(const std::string& key, const Fields& inner) {
  data_.set(key, inner.data_);
  merge_keys(inner);
  on_.insert(key);
  return *this;
}

Fields& Fields::items(const std::string& key, const std::vector<Fields>& list) {
  kainjow::mustache::data out{kainjow::mustache::data::type::list};
  for (const Fields& f : list) {
    out.push_back(f.data_);
    merge_keys(f);
  }
  data_.set(key, out);
  if (!list.empty()) on_.insert(key);
  return *this;
}

Fields& Fields::codes(const std::string& key, const std::vector<Code>& list) {
  kainjow::mustache::data out{kainjow::mustache::data::type::list};
  for (const Code& c : list) out.push_back(kainjow::mustache::data(c.text()));
  data_.set(key, out);
  code_lists_.insert(key);
  if (!list.empty()) on_.insert(key);
  return *this;
}

void Fields::merge_keys(const Fields& inner) {
  code_.insert(inner.code_.begin(), inner.code_.end());
  code_lists_.insert(inner.code_lists_.begin(), inner.code_lists_.end());
  text_.insert(inner.text_.begin(), inner.text_.end());
  on_.insert(inner.on_.begin(), inner.on_.end());
}

namespace {

// Checks every tag of `text` against the rule of render_template.
void check_slots(std::string_view name, std::string_view text, const Fields& fields) {
  const auto fail = [&](const std::string& what) {
    throw diag::Error("internal: template '" + std::string(name) + "': " + what);
  };
  std::vector<std::string> sections;
  for (std::size_t at = text.find("{{"); at != std::string_view::npos; at = text.find("{{", at + 2)) {
    const bool triple = text.substr(at, 3) == "{{{";
    const std::size_t end = text.find(triple ? "}}}" : "}}", at);
    if (end == std::string_view::npos) fail("an unclosed tag");
    std::string tag(text.substr(at + (triple ? 3 : 2), end - at - (triple ? 3 : 2)));
    const char sigil = tag.empty() ? ' ' : tag[0];
    if (sigil == '#' && !fields.renders(tag.substr(1))) {
      // A section that renders nothing here: its slots are not filled, so skip to its end.
      int depth = 1;
      std::size_t next = end;
      while (depth > 0) {
        next = text.find("{{", next);
        if (next == std::string_view::npos) fail("an unclosed section {{#" + tag.substr(1) + "}}");
        const char c = next + 2 < text.size() ? text[next + 2] : ' ';
        if (c == '#' || c == '^') ++depth;
        if (c == '/') --depth;
        next += 2;
      }
      at = text.find("}}", next);
      continue;
    } else if (sigil == '#' || sigil == '^') {
      sections.push_back(tag.substr(1));
    } else if (sigil == '/') {
      if (!sections.empty()) sections.pop_back();
    } else if (sigil == '!') {
      // a comment
    } else if (triple || sigil == '&') {
      const std::string key = sigil == '&' ? tag.substr(1) : tag;
      const bool ok = key == "." ? !sections.empty() && fields.is_code_list(sections.back()) : fields.is_code(key);
      if (!ok) fail("the code slot {{{" + key + "}}} was not given Code");
    } else {
      const std::size_t bol = text.rfind('\n', at);
      const std::string_view before = text.substr(bol == std::string_view::npos ? 0 : bol + 1);
      const std::size_t first = before.find_first_not_of(' ');
      if (first == std::string_view::npos || before[first] != '#')
        fail("the text slot {{" + tag + "}} is not on a comment line: give it Code in a {{{code}}} slot");
    }
    at = end;
  }
}

}  // namespace

std::string render_template(std::string_view name, const Fields& fields) {
  return render_template_text(name, template_text(name), fields);
}

std::string render_template_text(std::string_view name, std::string_view text, const Fields& fields) {
  check_slots(name, text, fields);
  const kainjow::mustache::data& data = fields.data();
  kainjow::mustache::mustache tmpl{std::string(text)};
  if (!tmpl.is_valid()) throw diag::Error("internal: template '" + std::string(name) + "': " + tmpl.error_message());
  // Generated files are not HTML. {{value}} (comments, messages) is made one printable line:
  // whatever it holds, it cannot end the comment and start a line of code. {{{value}}} is
  // for code and takes values the renderer already quoted for the target language.
  tmpl.set_custom_escape([](const std::string& s) { return diag::printable(s); });
  std::string out = tmpl.render(data);
  if (!tmpl.is_valid()) throw diag::Error("internal: template '" + std::string(name) + "': " + tmpl.error_message());
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

}  // namespace envpin::render

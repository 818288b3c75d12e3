// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kainjow/mustache.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "render/code.hpp"

namespace envpin::render {

// The values a template is rendered with. Text goes only into {{name}} slots on comment lines
// (made one printable line); code slots {{{name}}} take only Code (render/code.hpp).
class Fields {
 public:
  Fields& text(const std::string& key, std::string_view value);
  Fields& code(const std::string& key, const Code& value);
  Fields& flag(const std::string& key, bool on);
  // {{#key}}...{{/key}} rendered once with `inner`.
  Fields& section(const std::string& key, const Fields& inner);
  // {{#key}}...{{/key}} rendered once per item.
  Fields& items(const std::string& key, const std::vector<Fields>& list);
  // {{#key}}{{{.}}}{{/key}}: one code value per item.
  Fields& codes(const std::string& key, const std::vector<Code>& list);

  const kainjow::mustache::data& data() const { return data_; }
  bool is_code(const std::string& key) const { return code_.count(key) > 0; }
  bool is_code_list(const std::string& key) const { return code_lists_.count(key) > 0; }
  // True when a {{#key}} section renders somewhere (a true flag, a section, a non-empty list).
  bool renders(const std::string& key) const { return on_.count(key) > 0; }

 private:
  void merge_keys(const Fields& inner);
  kainjow::mustache::data data_{kainjow::mustache::data::type::object};
  std::set<std::string> code_, code_lists_, text_, on_;
};

// The text of an embedded template from templates/, e.g. "Dockerfile.mustache".
// Throws diag::Error when there is none (a build problem, not a user error).
std::string_view template_text(std::string_view name);

// Renders the embedded template `name` with `fields`. Before rendering, every tag is checked:
// a {{{code}}} slot must have been given Code, a {{text}} slot must sit on a comment line
// (first non-blank character '#'). Throws diag::Error ("internal: ...") otherwise.
std::string render_template(std::string_view name, const Fields& fields);

// The same for template `text` (named `name` in messages), for tests.
std::string render_template_text(std::string_view name, std::string_view text, const Fields& fields);

}  // namespace envpin::render

// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kainjow/mustache.hpp>

#include <string>
#include <string_view>

namespace envpin::render {

using Data = kainjow::mustache::data;

// The text of an embedded template from templates/, e.g. "Dockerfile.mustache".
// Throws diag::Error when there is none (a build problem, not a user error).
std::string_view template_text(std::string_view name);

// Renders the embedded template `name` with `data`. Values are inserted as given:
// the renderers quote them for their target language before handing them in.
std::string render_template(std::string_view name, const Data& data);

// Builds a mustache list of strings.
Data list_of(const std::vector<std::string>& items);

}  // namespace envpin::render

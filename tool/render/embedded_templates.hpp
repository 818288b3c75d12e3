// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string_view>

namespace envpin::render {

struct EmbeddedTemplate {
  std::string_view name;
  std::string_view text;
};

// The files of templates/, compiled into the binary (see cmake/EmbedTemplates.cmake).
std::span<const EmbeddedTemplate> embedded_templates();

}  // namespace envpin::render

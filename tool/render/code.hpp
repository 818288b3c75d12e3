// SPDX-License-Identifier: Apache-2.0
// Text in an artifact's own language. A template's code slots ({{{name}}}) take only a Code,
// and only the escapers below (or a string literal in envpin's own source) make one: a
// renderer cannot put a raw manifest value into a script or a Dockerfile. Text slots
// ({{name}}) are allowed only on comment lines, where the template engine makes any value one
// printable line (see render_template).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "render/quote.hpp"

namespace envpin::render {

class Code {
 public:
  // envpin's own text, written in its source: a string literal, never a runtime value.
  template <std::size_t N>
  static Code literal(const char (&text)[N]) {
    return Code(std::string(text, N - 1));
  }
  // One POSIX sh word that expands to exactly `value`.
  static Code sh(std::string_view value);
  // Several sh words, each quoted, separated by spaces.
  static Code sh_words(const std::vector<std::string>& values);
  // A sh word for a container path with ${NAME} references (see sh_path_word).
  template <class Lookup>
  static Code sh_path(std::string_view path, Lookup lookup) {
    return Code(sh_path_word(path, lookup));
  }
  // A double-quoted Dockerfile value (ENV, LABEL) with \ " $ escaped.
  static Code dockerfile(std::string_view value);
  // A Dockerfile exec-form list, ["a", "b"] (COPY).
  static Code dockerfile_args(const std::vector<std::string>& values);
  // A CMake quoted argument that is exactly `value`: \ " $ escaped (';' stays: the values
  // are CMake lists, and a quoted argument is one argument whatever it holds).
  static Code cmake(std::string_view value);
  static Code number(long long value);
  // A value the loader restricted to ASCII letters, digits and `extra` (package and user names,
  // image references, paths): no language reads those characters specially. Checked again here;
  // anything else throws diag::Error ("internal: ..."), so an unchecked value never gets through.
  static Code word(std::string_view value, std::string_view extra);

  // One line of a line-based file without quoting (.dockerignore): any printable text;
  // a control character throws diag::Error ("internal: ...").
  static Code pattern_line(std::string_view line);

  // One of envpin's own files embedded at build time (templates/lib/), byte for byte: envpin's
  // source, never a runtime value.
  static Code embedded(std::string_view name);

  Code operator+(const Code& other) const { return Code(text_ + other.text_); }
  const std::string& text() const { return text_; }

 private:
  explicit Code(std::string text) : text_(std::move(text)) {}
  std::string text_;
};

// Code joined with `separator` (itself code).
Code join(const std::vector<Code>& parts, const Code& separator);

}  // namespace envpin::render

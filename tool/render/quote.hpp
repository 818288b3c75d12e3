// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace envpin::render {

// A POSIX shell word that expands to exactly `s`: 'it'\''s'.
std::string sh_quote(std::string_view s);

// `s` as one POSIX shell word: as it is when it holds only letters, digits and ._-+=/:@,%
// (nothing the shell reads specially), else sh_quote(s). For commands printed to copy and paste.
std::string sh_word(std::string_view s);

// "s" with \ " and $ escaped: a Dockerfile ENV/LABEL value and a CMake quoted argument read it
// back as exactly `s`. Throws diag::Error on a control character; `what` names the target.
std::string backslash_quoted(std::string_view s, std::string_view what);

// A double-quoted Dockerfile value (ENV, LABEL) that expands to exactly `s`:
// backslash, double quote and '$' are escaped so no variable is substituted.
std::string dockerfile_quote(std::string_view s);

// A Dockerfile exec-form argument list, ["a", "b"], for COPY and similar instructions: JSON,
// so no value can split into more words or start a new line. Throws diag::Error on a control
// character (the loader refuses them).
std::string dockerfile_json_args(const std::vector<std::string>& args);

// A shell word for a container path that may refer to variables as ${NAME}, each
// with a default: "${NAME:-default}" keeps a runtime override and falls back to the
// value the manifest bakes in. `lookup` gives each NAME's default.
template <class Lookup>
std::string sh_path_word(std::string_view path, Lookup lookup);

}  // namespace envpin::render

#include "render/quote_inl.hpp"

// SPDX-License-Identifier: Apache-2.0
// The one secret-file rule set. .dockerignore, `envpin context`, `envpin scan`, the manifest's
// output checks (and later sync) all read it from here, so a file is a secret everywhere or
// nowhere.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace envpin::secrets {

// The rules in .dockerignore syntax, each anchored with "**/" so it applies at any depth.
// They are matched without regard to case: `.ENV` is as secret as `.env`.
std::span<const std::string_view> patterns();

// True when `rel` (a '/'-separated path relative to a project) or one of its parent
// directories matches a rule, ignoring case.
bool is_secret_path(std::string_view rel);

// `pattern` with every ASCII letter written as a bracket pair ("[eE]"), for tools that
// match case-sensitively (docker's .dockerignore, rsync).
std::string any_case(std::string_view pattern);

// The well-known credential shapes in `text` (AWS access key ids, private-key blocks, GitHub,
// PyPI, Hugging Face, OpenAI-style and Slack tokens): the offset of the first, or npos.
// `length` receives the length of the match.
std::size_t find_token(std::string_view text, std::size_t& length);

}  // namespace envpin::secrets

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

// Configuration files that are secret only when they hold a credential, so their content decides:
// pip's pip.conf and pip.ini, git's .gitconfig and a repository's config (.git/config at any
// depth, a submodule's .git/modules/NAME/config too), and docker's config.json. True when `rel`
// names one (ASCII case ignored); is_secret_content then reads at most kContentMax bytes of it.
bool is_secret_by_content(std::string_view rel);
inline constexpr std::size_t kContentMax = 1 << 20;

// True when `text`, the content of `rel` (one is_secret_by_content names), holds a credential: a
// URL with a password (`user:password@`), or with a token for its user name (a shape find_token
// knows, or 16 or more letters and digits), or with a credential query parameter; git's
// `extraheader` with an Authorization header; docker's `"auths"` with an `"auth"` or token in it.
// A file larger than kContentMax counts as secret.
bool is_secret_content(std::string_view rel, std::string_view text);

// `pattern` with every ASCII letter written as a bracket pair ("[eE]"), for tools that
// match case-sensitively (docker's .dockerignore, rsync).
std::string any_case(std::string_view pattern);

// The well-known credential shapes in `text` (AWS access key ids, private-key blocks, GitHub,
// PyPI, Hugging Face, OpenAI-style and Slack tokens): the offset of the first, or npos.
// `length` receives the length of the match.
std::size_t find_token(std::string_view text, std::size_t& length);

// True for a URL query parameter whose value is a credential, by its name (ASCII case ignored,
// '-' read as '_'): token, access_token, auth, auth_token, private_token, api_key, apikey, key,
// password, passwd, pwd, secret, client_secret, sig, signature, credential, x_amz_credential,
// x_amz_signature, x_amz_security_token, x_goog_credential, x_goog_signature, and any name
// ending in _token, _key, _secret, _password or _signature.
bool is_credential_parameter(std::string_view name);

// The name of the first query parameter of `url` that is a credential ("token"), or empty.
std::string_view credential_parameter(std::string_view url);

// `url` without its credentials: no userinfo ("https://user:token@host" -> "https://host") and
// none of the query parameters is_credential_parameter names ("?token=x&a=b" -> "?a=b"). A token
// in its path (redact's "/t/<token>/") stays: it cannot be taken out of a URL without changing it.
std::string url_without_credentials(std::string_view url);

// `text` with every credential in it replaced by "<credential>": the shapes find_token knows, a
// URL's userinfo ("https://<credential>@host"), an anaconda.org-style token path segment
// ("/t/<credential>/": 8 or more characters with a digit), the value of a credential query
// parameter, the word after a netrc's `login`, `password`, `passwd` and `account`, and the value
// of pip's `--config-settings`/`-C KEY=VALUE` (a keyword counts where whitespace follows it).
// redact(redact(x)) == redact(x).
std::string redact(std::string_view text);

}  // namespace envpin::secrets

// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::manifest {

struct Specifier {
  std::string op;       // one of == != <= >= < > ~= ===
  std::string version;  // as written, may end in .* for == and !=
};

// A Python requirement (PEP 508 subset: name, extras, version specifiers, marker; no URLs).
struct Requirement {
  std::string name;        // as written
  std::string normalized;  // PEP 503: lowercase, runs of -_. become -
  std::vector<std::string> extras;
  std::vector<Specifier> specifiers;
  std::string marker;  // text after ';', kept verbatim; a PEP 508 marker (manifest/marker.hpp)
  // Canonical text: normalized name, sorted extras, specifiers as written, marker.
  std::string text() const;
  // The version pinned with '==' (no wildcard), if any.
  std::optional<std::string> pinned() const;
};

// Parses a requirement. Returns the requirement, or sets `error` to what is
// wrong and `column` to the 0-based offset of the problem.
std::optional<Requirement> parse_requirement(std::string_view text, std::string& error, std::size_t& column);

// PEP 503 name normalization: lowercase, runs of -_. become one -.
std::string normalize_name(std::string_view name);

// True for a PEP 440 public version such as 1.26, 2.4.1, 1.0rc1, 2.0.post1, 1!2.0, 2.4.1+cu124.
// `allow_wildcard` admits a trailing ".*".
bool is_pep440_version(std::string_view v, bool allow_wildcard = false);

// True for "3.11" or "3.11.9" (CPython 3.x).
bool is_python_version(std::string_view v);

// True for an NVIDIA driver version: "535", "535.104", "535.104.05".
bool is_driver_version(std::string_view v);

// True for a package index URL as envpin accepts and locks it: http(s):// and RFC 3986
// characters only (no quotes, spaces, '$' or backslash).
bool is_index_url(std::string_view v);

// The credentials of an index URL ("user:token@" in https://user:token@host/simple), or empty:
// such a URL would put them into the Dockerfile, the lock and the image's history.
std::string_view index_url_credentials(std::string_view url);

// True for a Debian package name (policy §5.6.1) and an optional version (§5.6.12).
bool is_deb_name(std::string_view v);
bool is_deb_version(std::string_view v);

}  // namespace envpin::manifest

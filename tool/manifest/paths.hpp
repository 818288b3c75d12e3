// SPDX-License-Identifier: Apache-2.0
// Internal to manifest/: the rules for paths, names and patterns (paths.cpp). Every failure
// throws diag::Error at the value's location.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "diag/cursor.hpp"
#include "manifest/model.hpp"
#include "manifest/yaml_reader.hpp"

namespace envpin::manifest::detail {

// The characters a path in the manifest may hold: none means anything to sh, a Dockerfile, an
// #SBATCH line or a devcontainer mount string.
inline constexpr std::string_view kPathExtra = "._-+@/";

using diag::is_digit;  // one home (diag/cursor.hpp): unity builds see one entity

// An environment variable name: letters, digits and '_', not starting with a digit.
bool is_env_name(const std::string& s);

// Throws unless `s` holds only letters, digits and kPathExtra.
void check_path_chars(const Located<std::string>& s, std::string_view key);

// Throws unless each name in `s` fits a file name (NAME_MAX bytes) and the whole path fits
// PATH_MAX: as it is when absolute or `base` is empty, else under `base` made absolute.
// `written`: envpin writes the file through a temporary beside it, whose longer name and path
// must fit too.
void check_path_length(const Located<std::string>& s, std::string_view key, const fs::path& base, bool written = false);

// An absolute container path, normalised (no '..', no trailing '/'), not a system directory.
Located<std::string> container_path(const Reader& r, const YAML::Node& n, std::string_view key);

// A host directory: absolute, or relative to the project (kept inside it). An absolute one
// must not be the root or a system directory (however spelt); `example` is the relative
// directory the hint then offers.
Located<std::string> host_dir(const Reader& r, const YAML::Node& n, const std::string& key, std::string_view example);

// context.exclude and context.allow_secrets, checked.
std::vector<Located<std::string>> exclude_patterns(const Reader& r, const YAML::Node& node);
std::vector<Located<std::string>> allowed_secrets(const Reader& r, const YAML::Node& node);

// Refuses a '!' pattern in context.exclude that names a secret not in allow_secrets.
void check_reincludes(const Manifest& m);

// A duration: seconds as a number, or a number with s, m or h ("30s", "10m", "1h"), from lo to hi
// seconds, else r.fail at the node (manifest/jobs.cpp).
Located<int> duration(const Reader& r, const YAML::Node& n, std::string_view key, int lo, int hi);

// The jobs section into m.jobs (manifest/jobs.cpp).
void read_jobs(const Reader& r, const YAML::Node& node, Manifest& m);

// The dev section into m.dev (manifest/dev.cpp).
void read_dev(const Reader& r, const YAML::Node& node, Manifest& m);

// The outputs section into m.outputs; every output checked against the others and against the
// files envpin must not write.
void read_outputs(const Reader& r, const YAML::Node& node, Manifest& m);

}  // namespace envpin::manifest::detail

// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/model.hpp"

namespace envpin::manifest {

// Reads and validates the manifest at `file`. Messages name `file` as given.
// Throws diag::Error for a missing file and for every invalid input.
Manifest load(const std::string& file);

// Parses and validates manifest text. `display_name` is used in messages;
// relative paths in the manifest (requirements, outputs) resolve against `project_dir`.
// Throws diag::Error.
Manifest parse(std::string source, const std::string& display_name, const std::filesystem::path& project_dir);

// The keys of each section, for documentation and "did you mean".
std::span<const std::string_view> top_level_keys();
// Every key the loader accepts, as a dotted path ("cuda.version", "jobs.slurm.time"), sections
// included: what a test that classifies every key (the lock's inputs digest) walks.
std::vector<std::string> known_keys();

// jobs.push's grammar: REGISTRY/REPOSITORY[:TAG] (distribution's reference grammar, the registry
// named: a first component with '.' or ':', or localhost; no digest). Also `envpin push REF`'s.
bool is_push_reference(const std::string& reference);

}  // namespace envpin::manifest

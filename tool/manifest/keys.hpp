// SPDX-License-Identifier: Apache-2.0
// The manifest's surface in one table: every key envpin.yaml accepts, its shape, whether it is an
// input of what `envpin lock` resolves (lock::inputs_digest), and one line of documentation. The
// loader takes each section's known keys from it; `envpin schema` writes the JSON Schema editors
// complete and validate with; tests/unit/lock_test.cpp checks the digest follows it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace envpin::manifest {

enum class KeyShape {
  section,  // a mapping of the keys below it
  list,     // a YAML sequence
  value,    // a scalar (or, where the loader allows, a short form of a section)
};

struct KeyDoc {
  std::string_view path;  // "cuda.driver"
  KeyShape shape;
  bool locked;  // an input of envpin lock: changing it must change inputs-digest
  std::string_view doc;
};

// Every key, parents before their children.
std::span<const KeyDoc> manifest_keys();
// The keys directly under `section` ("" for the top level, "jobs.slurm"), in the table's order.
std::span<const std::string_view> keys_in(std::string_view section);
// The JSON Schema (draft 2020-12) of envpin.yaml: the sections' keys (additionalProperties false,
// so a typo is flagged), lists as arrays, each key's doc line as its description.
std::string json_schema();
// docs/manifest.md: the table as Markdown.
std::string manifest_markdown();

}  // namespace envpin::manifest

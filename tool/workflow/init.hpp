// SPDX-License-Identifier: Apache-2.0
// `envpin init`'s workflow: the inputs found or named, each read (tool/init), --python, --source
// system and --probe applied, the draft settled and written as a commented envpin.yaml, checked
// like `envpin validate` before it is written, and never over a file without --force.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "diag/error.hpp"
#include "init/init.hpp"
#include "manifest/model.hpp"
#include "resolve/environment.hpp"

namespace envpin::workflow {

struct InitRequest {
  std::vector<std::string> from;
  std::string from_python;
  std::vector<std::string> extras;
  std::vector<std::string> gpus;
  std::string driver;
  std::string name;
  std::string prefer;
  std::string python;
  std::string source = "pypi";
  std::string output = "envpin.yaml";
  bool force = false;
  bool probe = false;
};

struct Initialized {
  // Every refusal of the inputs (at most init::kMaxRefusals, then `refusals_dropped`): when there
  // is one, nothing was written and the fields below are empty.
  std::vector<diag::Error> refusals;
  std::size_t refusals_dropped = 0;
  std::filesystem::path written;
  init::Draft draft;
  std::optional<manifest::Manifest> manifest;
  std::optional<resolve::Environment> env;
};

// Throws diag::Error (credentials redacted) when init cannot go on: no inputs, an existing file
// without force, a draft the manifest refuses. `waiting` gets the note that another envpin holds
// the project.
Initialized init(const InitRequest& request, std::ostream& waiting);

}  // namespace envpin::workflow

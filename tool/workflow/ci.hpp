// SPDX-License-Identifier: Apache-2.0
// envpin ci: the pipeline file written (render/ci.cpp), its values checked first.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "render/render.hpp"

namespace envpin::workflow {

struct CiRequest {
  std::string manifest = "envpin.yaml";
  render::CiOptions options;
};

struct CiWritten {
  std::vector<std::string> files;  // as shown, written or unchanged
  std::vector<bool> changed;
  std::string note;  // what the user does next ("" when nothing)
};

// Throws diag::Error, nothing written, for a value outside its grammar: the .deb's URL (http(s),
// no quote, space or shell character), its sha256 (64 hex), the runner label and the secrets'
// names (letters, digits, '_', '-', '.'). The files are replaced together.
CiWritten write_ci(const CiRequest& request, std::ostream& waiting);

}  // namespace envpin::workflow

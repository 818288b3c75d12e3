// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace envpin::render {

// One generated file: where it goes (relative to the project), its exact bytes, its mode.
struct Artifact {
  std::string path;
  std::string bytes;
  bool executable = false;
};

}  // namespace envpin::render

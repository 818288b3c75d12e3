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
  // It names the image envpin push sent (by digest): a job run here does not depend on it, so
  // the jobs' pinned check passes it over; generate judges it against the push's record.
  bool names_push = false;
};

}  // namespace envpin::render

// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace envpin {

// A directory of this test process's own under the system's temp dir, "envpin-NAME-PID": the
// same test run by two processes at once (the sanitizer pass beside a plain run) must not share
// files. One once removed the other's captured output, and reading it crashed.
inline std::filesystem::path test_dir(const std::string& name) {
  return std::filesystem::path(testing::TempDir()) / ("envpin-" + name + "-" + std::to_string(::getpid()));
}

}  // namespace envpin

// SPDX-License-Identifier: Apache-2.0
// `envpin report`: this machine in four layers (system, GPU, packages, config), each value with
// how it was found. No network; every external program runs at most once; what is missing is
// reported as missing. Secret values are never read into the report.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "manifest/model.hpp"

namespace envpin::report {

inline constexpr const char* kSchema = "envpin.report/1";

struct ReportOptions {
  std::string os_release = "/etc/os-release";
  std::string dpkg_status = "/var/lib/dpkg/status";
};

// Options from the environment (ENVPIN_OS_RELEASE as check_env uses it).
ReportOptions options_from_environment();

// The report as JSON (schema envpin.report/1, documented in docs/lock.md). With a manifest, the
// config layer covers its env, secrets (set/unset only), paths and lock.
nlohmann::json collect(const manifest::Manifest* m, const ReportOptions& options);

// The aligned human summary of a report.
std::string format(const nlohmann::json& report);

}  // namespace envpin::report

// SPDX-License-Identifier: Apache-2.0
// The options several commands share (cli/commands.hpp), declared once.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"

namespace envpin::cli {

CLI::Option* manifest_option(CLI::App& app, std::string& file) {
  return app.add_option("-f,--manifest", file, "the manifest to read")->capture_default_str();
}

CLI::Option* quiet_flag(CLI::App& app, bool& quiet) {
  return app.add_flag("-q,--quiet", quiet, "no progress on stderr");
}

CLI::Option* insecure_registry_option(CLI::App& app, std::vector<std::string>& hosts) {
  return app.add_option("--insecure-registry", hosts,
                        "a registry host[:port] reached over http:// (loopback always is); repeatable");
}

CLI::Option* ssh_option(CLI::App& app, std::string& ssh) {
  return app.add_option("-e,--ssh", ssh, "the ssh command and its options (default: $ENVPIN_SSH, else ssh)");
}

}  // namespace envpin::cli

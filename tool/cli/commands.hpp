// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "diag/terminal.hpp"

namespace envpin::cli {

// What a command needs at run time.
struct Streams {
  std::ostream& out;
  std::ostream& err;
  diag::Terminal out_term{};  // what `out` and `err` reach: colour and progress only on a TTY
  diag::Terminal err_term{};
};

// One row of the command table: registers the subcommand's options and returns the
// action to run when it was chosen.
struct Command {
  const char* name;
  const char* summary;
  std::function<std::function<int(Streams&)>(CLI::App&)> setup;
};

// The options several commands share, each declared once (cli/options.cpp): the same words and
// help in every command.
CLI::Option* manifest_option(CLI::App& app, std::string& file);                         // -f,--manifest
CLI::Option* quiet_flag(CLI::App& app, bool& quiet);                                    // -q,--quiet
CLI::Option* insecure_registry_option(CLI::App& app, std::vector<std::string>& hosts);  // repeatable
CLI::Option* ssh_option(CLI::App& app, std::string& ssh);                               // -e,--ssh

Command generate_command();
Command validate_command();
Command cuda_command();
Command lock_command();
Command verify_command();
Command size_command();
Command mirror_command();
Command context_command();
Command push_command();
Command ci_command();
Command scan_command();
Command report_command();
Command diff_command();
Command smoke_command();
Command check_command();
Command hash_command();
Command apt_lookup_command();
Command run_command();
Command jobs_command();
Command logs_command();
Command stop_command();
Command resume_command();
Command submit_command();
Command resume_check_command();
Command rm_command();
Command init_command();
Command sync_command();
Command remote_command();
Command dev_command();

}  // namespace envpin::cli

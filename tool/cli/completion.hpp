// SPDX-License-Identifier: Apache-2.0
// Shell completions and the man page, written from the command table as CLI11 holds it after
// every command registered its options: one source of truth for `--help`, `envpin completion
// bash|zsh|fish` and envpin.1.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace envpin::cli {

struct OptionSpec {
  std::vector<std::string> names;  // "-f", "--manifest", ... as typed
  bool takes_value = false;
  std::string value_name;  // e.g. "file", "n"; empty for flags
  std::string description;
};

struct CommandSpec {
  std::string name;
  std::string summary;
  std::vector<OptionSpec> options;
  std::vector<OptionSpec> positionals;  // names[0] is the positional's name
};

struct CliSpec {
  std::string summary;
  std::string version;
  std::vector<OptionSpec> options;  // the top level's (--help, --version)
  std::vector<CommandSpec> commands;
  std::string exit_codes;  // the footer every command's --help shows
};

// The visible commands and options of `root` (a CLI11 app whose subcommands are registered).
CliSpec describe(const CLI::App& root, std::string version, std::string exit_codes);

std::string bash_completion(const CliSpec& spec);
std::string zsh_completion(const CliSpec& spec);
std::string fish_completion(const CliSpec& spec);
// man(7) roff for section 1, without a date: the same bytes for the same envpin.
std::string man_page(const CliSpec& spec);
// The same as Markdown (docs/cli.md, which a test keeps equal to this).
std::string cli_markdown(const CliSpec& spec);

}  // namespace envpin::cli

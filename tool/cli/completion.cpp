// SPDX-License-Identifier: Apache-2.0
#include "cli/completion.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <ostream>
#include <sstream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/error.hpp"

namespace envpin::cli {
namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// What to call an option's value in the man page, and whether the shells should offer files.
std::string value_name(const CLI::Option& o) {
  const std::string type = o.get_type_name();
  const std::string name = o.get_lnames().empty() ? o.get_name() : o.get_lnames().front();
  if (type.starts_with("INT") || type.starts_with("UINT") || type.starts_with("FLOAT")) return "n";
  if (contains(name, "dir")) return "dir";
  // init --python 3.10, cuda --cuda 12.4 (but smoke --python names an interpreter).
  if ((name == "python" || name == "cuda" || name == "torch") && contains(o.get_description(), "version"))
    return "version";
  if (contains(name, "manifest") || contains(name, "lock") || contains(name, "index") || contains(name, "file") ||
      contains(name, "output") || contains(name, "from") || contains(name, "python") || contains(name, "key"))
    return "file";
  return "value";
}

OptionSpec option_spec(const CLI::Option& o) {
  OptionSpec s;
  for (const std::string& n : o.get_snames()) s.names.push_back("-" + n);
  for (const std::string& n : o.get_lnames()) s.names.push_back("--" + n);
  if (s.names.empty()) s.names.push_back(o.get_name());
  s.takes_value = o.get_items_expected_max() > 0 || !o.nonpositional();
  if (s.takes_value) s.value_name = o.nonpositional() ? value_name(o) : o.get_name();
  s.description = o.get_description();
  return s;
}

// Quoting for each language's string literals.
std::string sh_single(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Inside a zsh _arguments spec: [description] must not end early, and ':' separates fields.
std::string zsh_description(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// roff text: '-' is a hyphen unless escaped, '\' starts an escape, '.' or '\'' at a line start a request.
std::string roff(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string all_names(const CommandSpec& c) {
  std::string words;
  for (const OptionSpec& o : c.options)
    for (const std::string& n : o.names) words += (words.empty() ? "" : " ") + n;
  return words;
}

}  // namespace

CliSpec describe(const CLI::App& root, std::string version, std::string exit_codes) {
  CliSpec spec;
  spec.summary = root.get_description();
  spec.version = std::move(version);
  spec.exit_codes = std::move(exit_codes);
  for (const CLI::Option* o : root.get_options())
    if (!o->get_group().empty() && o->nonpositional()) spec.options.push_back(option_spec(*o));
  for (const CLI::App* sub : root.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); })) {
    CommandSpec c{sub->get_name(), sub->get_description(), {}, {}};
    for (const CLI::Option* o : sub->get_options()) {
      if (o->get_group().empty()) continue;  // hidden
      (o->nonpositional() ? c.options : c.positionals).push_back(option_spec(*o));
    }
    spec.commands.push_back(std::move(c));
  }
  return spec;
}

std::string bash_completion(const CliSpec& spec) {
  std::ostringstream out;
  std::string commands, top;
  for (const CommandSpec& c : spec.commands) commands += (commands.empty() ? "" : " ") + c.name;
  for (const OptionSpec& o : spec.options)
    for (const std::string& n : o.names) top += " " + n;
  out << "# bash completion for envpin " << spec.version << " (written by 'envpin completion bash')\n"
      << "_envpin() {\n"
      << "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i\n"
      << "  COMPREPLY=()\n"
      << "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
      << "    mapfile -t COMPREPLY < <(compgen -W " << sh_single(commands + top) << " -- \"$cur\")\n"
      << "    return 0\n"
      << "  fi\n"
      << "  # After '--' the words are the job's command.\n"
      << "  for ((i = 2; i < COMP_CWORD; i++)); do\n"
      << "    if [ \"${COMP_WORDS[i]}\" = -- ]; then mapfile -t COMPREPLY < <(compgen -c -- \"$cur\"); return 0; fi\n"
      << "  done\n"
      << "  local options='' values=''\n"
      << "  case ${COMP_WORDS[1]} in\n";
  for (const CommandSpec& c : spec.commands) {
    std::string values;
    for (const OptionSpec& o : c.options)
      if (o.takes_value)
        for (const std::string& n : o.names) values += (values.empty() ? "" : " ") + n;
    out << "    " << c.name << ") options=" << sh_single(all_names(c)) << " values=" << sh_single(values) << " ;;\n";
  }
  out << "    *) return 0 ;;\n"
      << "  esac\n"
      << "  # An option's value: files (and directories).\n"
      << "  case \" $values \" in\n"
      << "    *\" $prev \"*) mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return 0 ;;\n"
      << "  esac\n"
      << "  if [[ $cur == -* ]]; then\n"
      << "    mapfile -t COMPREPLY < <(compgen -W \"$options\" -- \"$cur\")\n"
      << "  else\n"
      << "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
      << "  fi\n"
      << "}\n"
      << "complete -o filenames -F _envpin envpin\n";
  return out.str();
}

std::string zsh_completion(const CliSpec& spec) {
  std::ostringstream out;
  out << "#compdef envpin\n"
      << "# zsh completion for envpin " << spec.version << " (written by 'envpin completion zsh')\n"
      << "_envpin() {\n"
      << "  local -a commands\n"
      << "  commands=(\n";
  for (const CommandSpec& c : spec.commands) out << "    " << sh_single(c.name + ":" + c.summary) << "\n";
  out << "  )\n"
      << "  if (( CURRENT == 2 )); then\n"
      << "    _describe -t commands 'envpin command' commands\n"
      << "    return\n"
      << "  fi\n"
      << "  local command=$words[2]\n"
      << "  shift words\n"
      << "  (( CURRENT-- ))\n"
      << "  case $command in\n";
  for (const CommandSpec& c : spec.commands) {
    out << "    " << c.name << ")\n      _arguments -s";
    for (const OptionSpec& o : c.options) {
      std::string exclusive;
      if (o.names.size() > 1) {
        exclusive = "(";
        for (std::size_t i = 0; i < o.names.size(); ++i) exclusive += (i ? " " : "") + o.names[i];
        exclusive += ")";
      }
      for (const std::string& n : o.names) {
        std::string spec_text = exclusive + n + "[" + zsh_description(o.description) + "]";
        if (o.takes_value)
          spec_text += ":" + o.value_name + ":" +
                       (o.value_name == "dir"    ? "_files -/"
                        : o.value_name == "file" ? "_files"
                                                 : " ");
        out << " \\\n        " << sh_single(spec_text);
      }
    }
    out << " \\\n        '*::argument:_files'\n      ;;\n";
  }
  out << "  esac\n"
      << "}\n"
      << "_envpin \"$@\"\n";
  return out.str();
}

std::string fish_completion(const CliSpec& spec) {
  std::ostringstream out;
  std::string commands;
  for (const CommandSpec& c : spec.commands) commands += " " + c.name;
  out << "# fish completion for envpin " << spec.version << " (written by 'envpin completion fish')\n"
      << "complete -c envpin -f\n";
  for (const CommandSpec& c : spec.commands)
    out << "complete -c envpin -n __fish_use_subcommand -a " << c.name << " -d " << sh_single(c.summary) << "\n";
  for (const OptionSpec& o : spec.options) {
    out << "complete -c envpin -n __fish_use_subcommand";
    for (const std::string& n : o.names) out << (n.starts_with("--") ? " -l " + n.substr(2) : " -s " + n.substr(1));
    out << " -d " << sh_single(o.description) << "\n";
  }
  for (const CommandSpec& c : spec.commands) {
    for (const OptionSpec& o : c.options) {
      out << "complete -c envpin -n " << sh_single("__fish_seen_subcommand_from " + c.name);
      for (const std::string& n : o.names) out << (n.starts_with("--") ? " -l " + n.substr(2) : " -s " + n.substr(1));
      if (o.takes_value) out << " -r" << (o.value_name == "file" || o.value_name == "dir" ? " -F" : "");
      out << " -d " << sh_single(o.description) << "\n";
    }
    if (!c.positionals.empty())
      out << "complete -c envpin -n " << sh_single("__fish_seen_subcommand_from " + c.name) << " -F\n";
  }
  return out.str();
}

std::string man_page(const CliSpec& spec) {
  std::ostringstream out;
  out << ".\\\" envpin(1), written by 'envpin manpage' from envpin's command table\n"
      << ".TH ENVPIN 1 \"\" \"envpin " << spec.version << "\" \"User Commands\"\n"
      << ".SH NAME\n"
      << "envpin \\- "
      << roff(spec.summary.substr(spec.summary.find(": ") == std::string::npos ? 0 : spec.summary.find(": ") + 2))
      << "\n"
      << ".SH SYNOPSIS\n"
      << ".B envpin\n"
      << ".I command\n"
      << ".RI [ options ]\n"
      << ".br\n"
      << ".B envpin\n"
      << ".RB [ \\-\\-help | \\-\\-version ]\n"
      << ".SH DESCRIPTION\n"
      << "envpin makes a GPU project's environment a pinned, verifiable artifact from one manifest,\n"
      << ".IR envpin.yaml :\n"
      << "a Dockerfile pinned by digest, version and sha256, a devcontainer, a lock, a check script that\n"
      << "proves a machine matches, the CUDA choice for the fleet, and jobs that survive.\n"
      << "Each command's\n"
      << ".B \\-\\-help\n"
      << "prints what is below for that command.\n"
      << ".SH COMMANDS\n";
  for (const CommandSpec& c : spec.commands) {
    out << ".SS \"envpin " << c.name;
    for (const OptionSpec& p : c.positionals) out << " " << p.names.front();
    out << "\"\n" << roff(c.summary) << "\n";
    for (const OptionSpec& o : c.options) {
      out << ".TP\n";
      for (std::size_t i = 0; i < o.names.size(); ++i) out << (i ? ", " : "") << "\\fB" << roff(o.names[i]) << "\\fR";
      if (o.takes_value) out << " \\fI" << o.value_name << "\\fR";
      out << "\n" << roff(o.description) << "\n";
    }
    for (const OptionSpec& p : c.positionals)
      out << ".TP\n\\fI" << roff(p.names.front()) << "\\fR\n" << roff(p.description) << "\n";
  }
  out << ".SH EXIT STATUS\n";
  std::istringstream codes(spec.exit_codes);
  for (std::string line; std::getline(codes, line);) {
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.ends_with(":")) continue;
    const std::string text = line.substr(start);
    const auto gap = text.find("  ");
    if (gap == std::string::npos) continue;
    out << ".TP\n.B " << roff(text.substr(0, gap)) << "\n"
        << roff(text.substr(text.find_first_not_of(' ', gap))) << "\n";
  }
  out << ".SH ENVIRONMENT\n"
      << ".TP\n.B NO_COLOR\n"
      << "when set (to anything), no colour on a terminal either.\n"
      << ".TP\n.B ENVPIN_NET_TIMEOUT\n"
      << "seconds a registry or index may stay silent (default 30).\n"
      << ".TP\n.B ENVPIN_LOCK_WAIT\n"
      << "seconds to wait for another envpin writing the same project (default 30).\n"
      << ".TP\n.B ENVPIN_ENGINE\n"
      << "docker or podman, for jobs and the lock's apt step.\n"
      << ".SH FILES\n"
      << ".TP\n.I envpin.yaml\nthe manifest.\n"
      << ".TP\n.I envpin.lock\nevery pin, with its digest.\n"
      << ".TP\n.I .envpin/\nthe generated check_env.sh, run.sh, job.sbatch and CMake fragment.\n";
  return out.str();
}

namespace {

// Markdown table cells: a '|' would end the cell, a newline the row.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string cli_markdown(const CliSpec& spec) {
  std::ostringstream out;
  out << "<!-- Written by `envpin manpage --markdown` from envpin's command table; a test keeps it current. -->\n"
      << "# envpin commands\n\n"
      << "`envpin COMMAND [OPTIONS]`. Each command's `--help` prints its part of this page.\n\n";
  for (const CommandSpec& c : spec.commands) {
    out << "## envpin " << c.name;
    for (const OptionSpec& p : c.positionals) out << " " << p.names.front();
    out << "\n\n" << c.summary << "\n\n";
    if (c.options.empty() && c.positionals.empty()) continue;
    out << "| option | what it does |\n|---|---|\n";
    for (const OptionSpec& p : c.positionals)
      out << "| `" << cell(p.names.front()) << "` | " << cell(p.description) << " |\n";
    for (const OptionSpec& o : c.options) {
      out << "| `";
      for (std::size_t i = 0; i < o.names.size(); ++i) out << (i ? ", " : "") << cell(o.names[i]);
      if (o.takes_value) out << " " << cell(o.value_name);
      out << "` | " << cell(o.description) << " |\n";
    }
    out << "\n";
  }
  out << "## Exit status\n\n```\n" << spec.exit_codes << (spec.exit_codes.ends_with("\n") ? "" : "\n") << "```\n";
  return out.str();
}

}  // namespace envpin::cli

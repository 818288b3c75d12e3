// SPDX-License-Identifier: Apache-2.0
#include "cli/app.hpp"
#include <algorithm>

#include <CLI/CLI.hpp>

#include <ostream>
#include <vector>

#include "cli/commands.hpp"
#include "cli/completion.hpp"
#include "diag/error.hpp"
#include "diag/suggest.hpp"
#include "diag/text.hpp"
#include "envpin_version.hpp"
#include "manifest/keys.hpp"

namespace envpin::cli {
namespace {

constexpr const char* kExitCodes =
    "Exit codes:\n"
    "  0    success\n"
    "  1    error (bad manifest, unreadable file, ...); nothing is written\n"
    "  2    usage error\n"
    "  2    verify: the lock is stale (the manifest changed after envpin lock)\n"
    "  3    generate --check: generated files are out of date\n"
    "  1    resume-check: the interrupted run's results differ; 2: it could not run\n"
    "  130  interrupted\n";

// CLI11's own wording is replaced with envpin's for the errors users meet most.
diag::Error usage_error(const CLI::ParseError& e, const std::string& command) {
  std::string hint = "run 'envpin " + (command.empty() ? std::string{} : command + " ") + "--help'";
  std::string message = e.what();
  if (!message.empty()) message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  while (!message.empty() && (message.back() == '.' || message.back() == '\n')) message.pop_back();
  return diag::Error(message, std::nullopt, hint);
}

// The commands that act where the job is, which --host [user@]host:path runs on the server (in
// the synced directory, through `envpin remote`); `run` there is always detached, so the job
// outlives the connection.
constexpr std::string_view kHostCommands[] = {"run", "jobs", "logs", "stop", "rm", "resume", "check", "report"};

// argv with "--host TARGET" (before any "--") turned into "remote TARGET -- COMMAND ...".
std::vector<std::string> host_rewrite(int argc, const char* const* argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() < 2 ||
      std::find(std::begin(kHostCommands), std::end(kHostCommands), args[1]) == std::end(kHostCommands))
    return {};
  std::string target;
  std::vector<std::string> rest;
  bool after_dashes = false;
  for (std::size_t i = 2; i < args.size(); ++i) {
    if (!after_dashes && args[i] == "--") after_dashes = true;
    if (!after_dashes && args[i] == "--host" && i + 1 < args.size()) {
      target = args[++i];
      continue;
    }
    if (!after_dashes && args[i].starts_with("--host=")) {
      target = args[i].substr(7);
      continue;
    }
    rest.push_back(args[i]);
  }
  if (target.empty()) return {};
  std::vector<std::string> out = {args[0], "remote", target, "--", args[1]};
  if (args[1] == "run" && std::find(rest.begin(), rest.end(), "-d") == rest.end() &&
      std::find(rest.begin(), rest.end(), "--detach") == rest.end())
    out.push_back("--detach");
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err, diag::Terminal out_term,
        diag::Terminal err_term) {
  if (const std::vector<std::string> remote = host_rewrite(argc, argv); !remote.empty()) {
    std::vector<const char*> words;
    for (const std::string& w : remote) words.push_back(w.c_str());
    return run(static_cast<int>(words.size()), words.data(), out, err, out_term, err_term);
  }
  CLI::App app{"envpin: a pinned, verifiable environment for GPU projects from one manifest", "envpin"};
  app.set_version_flag("--version", std::string("envpin ") + kEnvpinVersion, "print the version and exit");
  app.footer(std::string("\n") + kExitCodes);
  app.require_subcommand(1);

  std::vector<Command> table = {
      init_command(),     generate_command(), lock_command(),   verify_command(), size_command(),
      mirror_command(),   context_command(),  scan_command(),   report_command(), diff_command(),
      smoke_command(),    check_command(),    run_command(),    dev_command(),    jobs_command(),
      logs_command(),     stop_command(),     rm_command(),     resume_command(), resume_check_command(),
      submit_command(),   sync_command(),     remote_command(), hash_command(),   apt_lookup_command(),
      validate_command(), cuda_command(),     push_command(),   ci_command()};
  std::vector<std::pair<CLI::App*, std::function<int(Streams&)>>> actions;
  std::string host_unused;  // --host is taken out of argv above; the option is there for --help
  for (Command& c : table) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    sub->footer(std::string("\n") + kExitCodes);
    actions.emplace_back(sub, c.setup(*sub));
    if (std::find(std::begin(kHostCommands), std::end(kHostCommands), std::string_view(c.name)) !=
        std::end(kHostCommands))
      sub->add_option("--host", host_unused,
                      "[user@]host:path: run this there, in the project envpin sync copied (needs envpin there)");
  }

  // Written from the table above as CLI11 now holds it: the same commands and options as --help.
  std::string shell;
  CLI::App* completion = app.add_subcommand("completion", "print the completion script for bash, zsh or fish");
  completion->add_option("shell", shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  completion->footer(
      "\nInstall it, e.g.: envpin completion bash > ~/.local/share/bash-completion/completions/envpin\n");
  actions.emplace_back(completion, [&app, &shell](Streams& io) {
    const CliSpec spec = describe(app, kEnvpinVersion, kExitCodes);
    io.out << (shell == "bash" ? bash_completion(spec) : shell == "zsh" ? zsh_completion(spec) : fish_completion(spec));
    return static_cast<int>(kOk);
  });
  CLI::App* manpage =
      app.add_subcommand("manpage", "print envpin's man page (roff; the build installs it as envpin.1)");
  manpage->group("");
  bool markdown = false;
  manpage->add_flag("--markdown", markdown, "the same as Markdown (docs/cli.md)");
  actions.emplace_back(manpage, [&app, &markdown](Streams& io) {
    const CliSpec spec = describe(app, kEnvpinVersion, kExitCodes);
    io.out << (markdown ? cli_markdown(spec) : man_page(spec));
    return static_cast<int>(kOk);
  });

  CLI::App* schema =
      app.add_subcommand("schema", "print envpin.yaml's JSON Schema (editors complete and validate with it)");
  schema->group("");
  bool schema_markdown = false;
  schema->add_flag("--markdown", schema_markdown, "the keys as Markdown (docs/manifest.md)");
  actions.emplace_back(schema, [&schema_markdown](Streams& io) {
    io.out << (schema_markdown ? manifest::manifest_markdown() : manifest::json_schema());
    return static_cast<int>(kOk);
  });

  Streams streams{out, err, out_term, err_term};
  // The first word names a command: an unknown one is an error naming the nearest, whatever follows
  // it ("envpin mirrr --help" printed the main help and exited 0).
  if (argc > 1 && argv[1][0] != '-') {
    const std::string_view word = argv[1];
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      const std::vector<std::string_view> views(names.begin(), names.end());
      const std::string near = diag::closest(word, views);
      err << diag::paint_diagnostic(
          err_term,
          diag::format(diag::Error(
              "'" + diag::printable(std::string(word)) + "' is not an envpin command", std::nullopt,
              near.empty() ? "run 'envpin --help' for the commands" : "did you mean 'envpin " + near + "'?")));
      return kUsage;
    }
  }
  std::string chosen;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    CLI::App* target = &app;
    for (auto& [sub, _] : actions)
      if (sub->parsed()) target = sub;
    out << target->help();
    return kOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return kOk;
  } catch (const CLI::CallForVersion&) {
    out << "envpin " << kEnvpinVersion << "\n";
    return kOk;
  } catch (const CLI::ParseError& e) {
    for (auto& [sub, _] : actions)
      if (sub->parsed()) chosen = sub->get_name();
    if (argc <= 1) {
      out << app.help();
      return kUsage;
    }
    err << diag::paint_diagnostic(err_term, diag::format(usage_error(e, chosen)));
    return kUsage;
  }

  try {
    for (auto& [sub, act] : actions) {
      if (!sub->parsed()) continue;
      const int code = act(streams);
      // Data that did not reach its reader is a failure (a full disk, a closed pipe).
      out.flush();
      if (!out)
        throw diag::Error("cannot write to standard output", std::nullopt,
                          "check the disk or the pipe that standard output goes to");
      return code;
    }
  } catch (const diag::Error& e) {
    err << diag::paint_diagnostic(err_term, diag::format(e));
    return kError;
  } catch (const std::exception& e) {
    // A library's own exception is a bug in envpin: one line, never a crash.
    err << diag::paint_diagnostic(err_term,
                                  diag::format(diag::Error(std::string("internal error: ") + e.what(), std::nullopt,
                                                           "please report this with the command that caused it")));
    return kError;
  }
  return kUsage;
}

}  // namespace envpin::cli

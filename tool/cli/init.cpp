// SPDX-License-Identifier: Apache-2.0
// `envpin init`: its options, the refusals and the summary; workflow/init.hpp drafts.
#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/text.hpp"
#include "init/init.hpp"
#include "secrets/rules.hpp"
#include "workflow/init.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;
using diag::Error;

// The inputs' refusals, all of them: each but the last printed here, the last thrown (the run
// exits 1 and writes nothing); past init::kMaxRefusals, a count.
void report_refusals(const workflow::Initialized& r, Streams& io) {
  if (r.refusals.empty()) return;
  std::vector<Error> all = r.refusals;
  if (r.refusals_dropped > 0)
    all.emplace_back("and " + std::to_string(r.refusals_dropped) + " more refusal" +
                         (r.refusals_dropped == 1 ? "" : "s") + " in the inputs, not shown (envpin init shows " +
                         std::to_string(init::kMaxRefusals) + ")",
                     std::nullopt, "fix the ones above, then run envpin init again");
  for (std::size_t i = 0; i + 1 < all.size(); ++i) io.err << diag::paint_diagnostic(io.err_term, diag::format(all[i]));
  throw all.back();
}

int run_init(const workflow::InitRequest& o, Streams& io) {
  const workflow::Initialized r = workflow::init(o, io.err);
  report_refusals(r, io);
  const init::Draft& d = r.draft;
  const manifest::Manifest& m = *r.manifest;
  const resolve::Environment& env = *r.env;
  const fs::path& out = r.written;
  io.out << "wrote " << out.generic_string() << " from";
  for (const std::string& s : d.sources) io.out << " " << diag::printable(secrets::redact(s));
  io.out << ": Python " << m.python->version.value << ", " << d.packages.size() << " package"
         << (d.packages.size() == 1 ? "" : "s");
  if (env.cuda) io.out << ", CUDA " << env.cuda->toolkit << " (" << env.base_image << ")";
  if (!d.apt.empty()) io.out << ", " << d.apt.size() << " apt package" << (d.apt.size() == 1 ? "" : "s");
  io.out << "\n";
  if (!d.notes.empty()) {
    io.out << d.notes.size() << " thing" << (d.notes.size() == 1 ? " was" : "s were")
           << " not carried over (listed at the end of the file):\n";
    for (const std::string& n : d.notes) io.out << "  " << diag::printable(n) << "\n";
  }
  for (const auto& w : env.warnings) io.err << diag::paint_diagnostic(io.err_term, w);
  // Packages Debian ships: the way to a site without PyPI (issue 34, item 8).
  if (o.source != "system" && !env.cuda)
    if (const std::size_t n = init::debian_python_count(d); n > 0)
      io.out << n << " of the " << d.packages.size() << " packages are in Debian 12 as python3-*: for a site without "
             << "PyPI, envpin init --source system takes them from there\n";
  io.out << "next: envpin lock -f " << out.generic_string() << " (pins every version), then envpin generate\n";
  return kOk;
}

}  // namespace

Command init_command() {
  return {
      "init", "write an envpin.yaml from requirements.txt, environment.yml, pyproject.toml or a Dockerfile",
      [](CLI::App& app) -> std::function<int(Streams&)> {
        auto o = std::make_shared<workflow::InitRequest>();
        app.add_option("--from", o->from,
                       "a file or directory inside the output's directory to read (default: the ones there); "
                       "repeatable")
            ->allow_extra_args(false);
        app.add_option("--from-python", o->from_python,
                       "a working environment's interpreter (e.g. .venv/bin/python): its packages as exact pins");
        app.add_option(
               "--extra", o->extras,
               "a pyproject group to include (optional-dependencies, dependency-groups, Poetry extras and groups); repeatable")
            ->allow_extra_args(false);
        app.add_option("--gpu", o->gpus, "a GPU of the fleet (needed when the environment uses CUDA); repeatable")
            ->allow_extra_args(false);
        app.add_option("--driver", o->driver, "the fleet's lowest NVIDIA driver, e.g. 535.104.05");
        app.add_option("--name", o->name, "the project's name (default: its directory's)");
        app.add_option("--prefer", o->prefer, "the input file whose version wins when two disagree");
        app.add_option("--source", o->source,
                       "where Python packages come from: pypi, or system (Debian 12's python3-* packages, for "
                       "a site without PyPI)")
            ->check(CLI::IsMember({"pypi", "system"}))
            ->capture_default_str();
        app.add_option("--python", o->python, "the Python version to build for, over what the inputs name (e.g. 3.10)");
        app.add_option("-o,--output", o->output, "where to write the manifest")->capture_default_str();
        app.add_flag("--force", o->force, "replace an existing manifest");
        app.add_flag("--probe", o->probe,
                     "take the fleet's GPUs and driver floor from this machine (NVML, nvidia-smi)");
        return [o](Streams& io) { return run_init(*o, io); };
      }};
}

}  // namespace envpin::cli

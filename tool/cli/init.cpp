// SPDX-License-Identifier: Apache-2.0
// `envpin init`: a commented envpin.yaml from the project's requirements.txt, conda
// environment.yml and pyproject.toml (tool/init), checked like `envpin validate` before it is
// written, and never over a file without --force.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/text.hpp"
#include "init/init.hpp"
#include "io/atomic_file.hpp"
#include "manifest/load.hpp"
#include "manifest/requirement.hpp"
#include "probe/gpu_probe.hpp"
#include "resolve/environment.hpp"
#include "secrets/rules.hpp"
#include "workflow/project.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;
using diag::Error;

struct InitOptions {
  std::vector<std::string> from;
  std::string from_python;
  std::vector<std::string> extras;
  std::vector<std::string> gpus;
  std::string driver;
  std::string name;
  std::string prefer;
  std::string python;
  std::string source = "pypi";
  std::string output = "envpin.yaml";
  bool force = false;
  bool probe = false;
};

// The project directory's name as a manifest name: lowercase letters, digits and ._-.
// The JSON Schema installed beside this envpin: <prefix>/bin/envpin has it at
// <prefix>/share/envpin/envpin.schema.json, as the .deb and `cmake --install` lay it out. "" from
// a build tree, which installs none, or where the path would not read as one line of a comment.
std::string installed_schema() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path schema =
      (exe.parent_path().parent_path() / "share" / "envpin" / "envpin.schema.json").lexically_normal();
  const std::string text = schema.generic_string();
  if (!fs::is_regular_file(schema, ec) || diag::printable(text) != text || text.find(' ') != std::string::npos)
    return "";
  return text;
}

std::string name_from(const fs::path& dir) {
  std::string out;
  // "." is "/work/app/." absolute, "/work/app/" normal: its name is the parent's.
  fs::path normal = fs::absolute(dir).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();
  for (char c : normal.filename().string()) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '.' || l == '_' || l == '-')
      out += l;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && (out.front() == '.' || out.front() == '-' || out.front() == '_')) out.erase(0, 1);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "project" : out.substr(0, 64);
}

// The inputs' refusals, all of them: each but the last printed here, the last thrown (the run
// exits 1 and writes nothing); past init::kMaxRefusals, a count.
void report_refusals(const init::Draft& d, Streams& io) {
  if (d.refusals.empty()) return;
  std::vector<Error> all = d.refusals;
  if (d.refusals_dropped > 0)
    all.emplace_back("and " + std::to_string(d.refusals_dropped) + " more refusal" +
                         (d.refusals_dropped == 1 ? "" : "s") + " in the inputs, not shown (envpin init shows " +
                         std::to_string(init::kMaxRefusals) + ")",
                     std::nullopt, "fix the ones above, then run envpin init again");
  for (std::size_t i = 0; i + 1 < all.size(); ++i) io.err << diag::paint_diagnostic(io.err_term, diag::format(all[i]));
  throw all.back();
}

int draft(const InitOptions& o, Streams& io) {
  const fs::path out(o.output);
  const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const workflow::ProjectLock project_lock(dir, &io.err);  // one writer of the project at a time
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out, ec)) && !o.force)
    throw Error(out.generic_string() + " already exists", std::nullopt,
                "pass --force to replace it, or -o to write the draft elsewhere");
  if (fs::exists(fs::symlink_status(out, ec)) && !fs::is_regular_file(fs::symlink_status(out, ec)))
    throw Error(out.generic_string() + " is not a regular file; init replaces only a file", std::nullopt,
                "remove it, or write the draft elsewhere with -o");
  std::vector<fs::path> inputs;
  for (const std::string& f : o.from) {
    if (fs::is_directory(f, ec)) {
      const auto found = init::inputs_in(f);
      if (found.empty())
        throw Error("there is no requirements.txt, environment.yml, pyproject.toml or Dockerfile in " + f, std::nullopt,
                    "name the file with --from FILE");
      inputs.insert(inputs.end(), found.begin(), found.end());
    } else {
      inputs.emplace_back(f);
    }
  }
  if (o.from.empty() && o.from_python.empty()) inputs = init::inputs_in(dir);
  if (inputs.empty() && o.from_python.empty())
    throw Error(
        "there is no requirements.txt, environment.yml, pyproject.toml or Dockerfile in " + dir.generic_string(),
        std::nullopt, "name what the project has with --from FILE (repeatable)");
  init::Draft d;
  d.prefer = o.prefer;
  // The project is the directory the draft is written into: every input stays inside it.
  d.root = fs::weakly_canonical(fs::absolute(dir), ec);
  if (!o.from_python.empty()) init::read_python(o.from_python, d);
  // A Dockerfile gives way to the other inputs, so it is read last.
  std::stable_partition(inputs.begin(), inputs.end(),
                        [](const fs::path& f) { return init::kind_of(f) != "dockerfile"; });
  // Every input is read whatever another refused: the run reports all refusals at once.
  for (const fs::path& f : inputs) {
    const std::string kind = init::kind_of(f);
    init::collecting(d, diag::Location{f.generic_string(), 0, 0}, [&] {
      if (kind == "requirements")
        init::read_requirements(f, d);
      else if (kind == "conda")
        init::read_conda(f, d);
      else if (kind == "pyproject")
        init::read_pyproject(f, d, o.extras);
      else if (kind == "dockerfile")
        init::read_dockerfile(f, d);
      else
        throw Error("envpin init cannot tell what " + f.generic_string() + " is", std::nullopt,
                    "it reads requirements files (*.txt, *.in), conda environments (*.yml, *.yaml), pyproject.toml "
                    "and Dockerfiles");
    });
  }
  // --python wins over the inputs; what it overrides is a note.
  if (!o.python.empty()) {
    if (!manifest::is_python_version(o.python))
      throw Error("--python " + diag::printable(o.python) + " is not a Python version", std::nullopt,
                  "give one like 3.10 or 3.10.14");
    if (d.python && d.python->value != o.python)
      d.notes.push_back(secrets::redact(diag::printable(d.python->from + " names Python " + d.python->value +
                                                        ": --python " + o.python + " is used instead")));
    d.python = init::Value{o.python, "--python"};
  }
  if (o.source == "system") {
    // Debian's python3-* packages have no CUDA builds (python3-torch is CPU-only), and the table
    // is Debian 12's.
    if (d.cuda || !o.gpus.empty() || o.probe)
      throw Error(
          "--source system takes Debian 12's python3-* packages, which have no CUDA builds "
          "(python3-torch is CPU-only), but the inputs or --gpu ask for CUDA",
          std::nullopt, "drop --source system for a CUDA image (its packages come from PyPI)");
    if (d.os && d.os->value != "debian12")
      throw Error("--source system maps packages to Debian 12's python3-* packages, but " + d.os->from + " names os " +
                      diag::printable(d.os->value),
                  std::nullopt, "drop --source system, or build on Debian 12");
    if (!o.python.empty() && o.python != "3.11" && !o.python.starts_with("3.11."))
      throw Error("--python " + diag::printable(o.python) +
                      " is not Debian 12's python3 (3.11), which --source "
                      "system builds on",
                  std::nullopt, "drop --python, or drop --source system");
    init::to_system_python(d);
  }
  // --probe: this machine's GPUs and driver are the fleet's (each product once).
  std::vector<std::string> gpus = o.gpus;
  std::string driver = o.driver;
  if (o.probe) {
    const probe::GpuProbe machine = probe::probe_machine(probe::options_from_environment());
    if (machine.gpus.empty()) {
      std::string why;
      for (const std::string& n : machine.notes) why += (why.empty() ? "" : "; ") + n;
      throw Error("--probe found no NVIDIA GPU on this machine" + (why.empty() ? std::string() : " (" + why + ")"),
                  std::nullopt, "name the fleet's GPUs with --gpu instead, e.g. --gpu A100");
    }
    for (const probe::ProbedGpu& g : machine.gpus)
      if (std::find(gpus.begin(), gpus.end(), g.name) == gpus.end()) gpus.push_back(g.name);
    if (driver.empty()) driver = machine.driver;
  }
  // GPUs named, no CUDA version in the inputs: envpin chooses the toolkit for the fleet.
  if (!d.cuda && !gpus.empty())
    d.cuda = init::Value{"auto", o.probe ? "--probe: envpin chooses the toolkit" : "--gpu: envpin chooses the toolkit"};
  // After the fleet is known: a CUDA environment's OS and base are nvidia/cuda's (settle's notes).
  init::settle(d);
  // An --extra no pyproject offers is a mistake (a typo would otherwise leave its group out).
  for (const std::string& e : o.extras)
    if (!d.groups.count(e)) {
      std::string offered;
      for (const std::string& g : d.groups) offered += (offered.empty() ? "" : ", ") + diag::printable(g);
      init::refuse(
          d, Error("--extra " + diag::printable(e) + " names no optional dependencies, extra or group of the inputs",
                   std::nullopt, offered.empty() ? "the inputs have none: drop --extra" : "they offer: " + offered));
    }
  if (d.cuda && gpus.empty())
    init::refuse(d, Error("the environment uses CUDA" + (d.cuda->value == "auto" ? "" : " " + d.cuda->value) + " (" +
                              d.cuda->from + "): envpin needs the fleet's GPUs to choose the toolkit and arch list",
                          init::origin_location(d, d.cuda->from),
                          "name them with --gpu (repeat for a mixed fleet), e.g. --gpu A100"));
  // torch from a CUDA wheel index (".../whl/cu121") without --gpu: the draft would have no cuda
  // section, and envpin would build a CPU-only image from a project that runs on GPUs.
  if (gpus.empty() && !d.cuda) {
    std::vector<const init::Value*> indexes;
    if (d.index) indexes.push_back(&*d.index);
    for (const init::Value& v : d.extra_index) indexes.push_back(&v);
    for (const init::Value* v : indexes) {
      const std::string& url = v->value;
      const auto at = url.find("download.pytorch.org/whl/cu");
      if (at == std::string::npos) continue;
      init::refuse(d, Error("the inputs install torch from a CUDA wheel index (" + v->from + ": " +
                                diag::printable(url.substr(at)) +
                                "): envpin needs the fleet's GPUs to choose the toolkit, the arch list and the "
                                "torch variant",
                            init::origin_location(d, v->from),
                            "name them with --gpu (repeat for a mixed fleet), e.g. --gpu A100"));
      break;
    }
  }
  report_refusals(d, io);
  init::Options opt{o.name.empty() ? name_from(dir) : o.name,
                    gpus,
                    driver.empty() ? std::nullopt : std::optional<std::string>(driver),
                    o.probe ? "--probe: this machine's" : "",
                    o.source == "system",
                    installed_schema()};
  const std::string text = init::write_manifest(d, opt);
  // Checked as `envpin validate` would before anything is written; a refusal names the inputs'
  // value, not a line of a file that does not exist.
  std::optional<manifest::Manifest> parsed;
  std::optional<resolve::Environment> resolved;
  try {
    parsed = manifest::parse(text, out.generic_string(), dir);
    resolved = resolve::resolve(*parsed);
  } catch (const Error& e) {
    // The draft's line says where its value came from (its comment): the refusal names that, and
    // so does each "(python.packages at line 39)" in its message, never a line of the unwritten draft.
    std::vector<std::string> draft_lines;
    {
      std::istringstream lines(text);
      for (std::string line; std::getline(lines, line);) draft_lines.push_back(line);
    }
    const auto origin_of = [&](int n) -> std::string {
      if (n < 1 || n > static_cast<int>(draft_lines.size())) return "";
      const std::string& line = draft_lines[static_cast<std::size_t>(n - 1)];
      const auto hash = line.find("  # ");
      return hash == std::string::npos ? "" : line.substr(hash + 4);
    };
    std::string message = e.message();
    for (std::size_t at = message.find(" at line "); at != std::string::npos; at = message.find(" at line ", at + 1)) {
      std::size_t end = at + 9;
      while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
      const std::size_t open = message.rfind('(', at);
      if (end == at + 9 || open == std::string::npos || end >= message.size() || message[end] != ')') continue;
      const std::string origin = origin_of(std::stoi(message.substr(at + 9, end - at - 9)));
      if (origin.empty()) continue;
      message.replace(open + 1, end - open - 1, origin);
      at = open;
    }
    std::string origin;
    std::optional<diag::Location> at;
    if (e.where() && e.where()->line > 0) {
      if (const std::string cited = origin_of(e.where()->line); !cited.empty()) {
        origin = " (" + cited + ")";
        at = init::origin_location(d, cited);
      }
    }
    throw Error("the inputs give a manifest envpin refuses: " + message + origin, at, e.hint());
  }
  const manifest::Manifest& m = *parsed;
  const resolve::Environment& env = *resolved;
  io::write_atomic(out, text, false);
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

int run_init(const InitOptions& o, Streams& io) {
  try {
    return draft(o, io);
  } catch (const Error& e) {
    // The inputs are hostile: a credential in them reaches no error line either.
    std::optional<diag::Location> where = e.where();
    if (where) where->file = secrets::redact(where->file);
    throw Error(secrets::redact(e.message()), where, secrets::redact(e.hint()));
  }
}

}  // namespace

Command init_command() {
  return {
      "init", "write an envpin.yaml from requirements.txt, environment.yml, pyproject.toml or a Dockerfile",
      [](CLI::App& app) -> std::function<int(Streams&)> {
        auto o = std::make_shared<InitOptions>();
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

// SPDX-License-Identifier: Apache-2.0
#include "workflow/init.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "manifest/load.hpp"
#include "manifest/requirement.hpp"
#include "probe/gpu_probe.hpp"
#include "secrets/rules.hpp"
#include "workflow/project.hpp"

namespace envpin::workflow {
namespace {

namespace fs = std::filesystem;
using diag::Error;

// The project directory's name as a manifest name: lowercase letters, digits and ._-.
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

Initialized draft(const InitRequest& o, std::ostream& waiting) {
  const fs::path out(o.output);
  const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const ProjectLock project_lock(dir, &waiting);  // one writer of the project at a time
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
  Initialized result;
  init::Draft& d = result.draft;
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
  if (!d.refusals.empty()) {
    result.refusals = d.refusals;
    result.refusals_dropped = d.refusals_dropped;
    return result;
  }
  init::Options opt{o.name.empty() ? name_from(dir) : o.name,
                    gpus,
                    driver.empty() ? std::nullopt : std::optional<std::string>(driver),
                    o.probe ? "--probe: this machine's" : "",
                    o.source == "system",
                    manifest::Outputs{}.schema.value};
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
  io::write_atomic(out, text, false);
  result.written = out;
  result.manifest = std::move(parsed);
  result.env = std::move(resolved);
  return result;
}

}  // namespace

Initialized init(const InitRequest& o, std::ostream& waiting) {
  try {
    return draft(o, waiting);
  } catch (const Error& e) {
    // The inputs are hostile: a credential in them reaches no error line either.
    std::optional<diag::Location> where = e.where();
    if (where) where->file = secrets::redact(where->file);
    throw Error(secrets::redact(e.message()), where, secrets::redact(e.hint()));
  }
}

}  // namespace envpin::workflow

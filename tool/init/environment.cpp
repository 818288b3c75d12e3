// SPDX-License-Identifier: Apache-2.0
// envpin init's reader of a working Python environment (--from-python): the interpreter itself is
// asked, through importlib.metadata, for its version and installed distributions; its answer is
// parsed as JSON, never trusted.
#include <nlohmann/json.hpp>

#include <string>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/init.hpp"
#include "init/parts.hpp"
#include "io/process.hpp"
#include "manifest/requirement.hpp"

namespace envpin::init {

using diag::Error;
using namespace detail;

namespace {

// Run by the environment's own interpreter: its version and every installed distribution, with
// how it was installed (direct_url.json: editable, or from a URL).
constexpr const char* kPythonReport = R"(import json, sys
from importlib import metadata
out = {"python": "%d.%d" % sys.version_info[:2], "dists": []}
seen = set()
for d in metadata.distributions():
    name = d.metadata["Name"]
    key = (name or "").lower().replace("_", "-").replace(".", "-")
    if not name or key in seen:
        continue  # the first on sys.path is the one Python imports
    seen.add(key)
    direct = d.read_text("direct_url.json")
    how = ""
    # A venv made with --system-site-packages sees the OS's packages too (python-apt, perf): those
    # are the distribution's, not the project's.
    where = str(d.locate_file(""))
    if sys.prefix != sys.base_prefix and not where.startswith(sys.prefix):
        how = "system"
    if direct and not how:
        try:
            info = json.loads(direct)
            how = "editable" if info.get("dir_info", {}).get("editable") else ("url" if info.get("url", "").split(":")[0] != "file" or "vcs_info" in info else "local")
        except ValueError:
            how = "url"
    out["dists"].append([name, d.version, how])
out["dists"].sort(key=lambda x: x[0].lower())
print(json.dumps(out))
)";

}  // namespace

void read_python(const std::string& python, Draft& d) {
  const io::ProcessResult r = io::run_process({python, "-I", "-c", kPythonReport});
  if (r.exit_code != 0) {
    std::string why = r.err.empty() ? "it could not be started" : r.err.substr(0, r.err.find('\n'));
    throw Error("cannot ask the Python environment " + quote_input(python) + " what it has: " + diag::printable(why),
                std::nullopt, "give the interpreter of the environment, e.g. --from-python .venv/bin/python");
  }
  read_python_report(r.out, python, d);
}

void read_python_report(const std::string& text, const std::string& python, Draft& d) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw Error("the Python environment " + quote_input(python) + " answered something that is not its report",
                std::nullopt, "check that it is a CPython 3 interpreter");
  }
  const std::string from = diag::printable(python);
  d.sources.push_back(python);
  if (j.contains("python") && j["python"].is_string() && manifest::is_python_version(j["python"].get<std::string>()))
    set_once(d.python, {j["python"].get<std::string>(), from + " (the interpreter)"}, "python.version");
  if (!j.contains("dists") || !j["dists"].is_array()) return;
  for (const auto& dist : j["dists"]) {
    if (!dist.is_array() || dist.size() != 3 || !dist[0].is_string() || !dist[1].is_string() || !dist[2].is_string())
      continue;
    const std::string name = dist[0].get<std::string>(), version = dist[1].get<std::string>(),
                      how = dist[2].get<std::string>();
    const std::string normalized = manifest::normalize_name(name);
    if (normalized == "pip" || normalized == "setuptools" || normalized == "wheel" || normalized == "distribute") {
      note(d, from + ": " + quote_input(name) + " is pip's own tooling: left out, as pip freeze does");
      continue;
    }
    if (how == "editable" || how == "local") {
      note(d, from + ": " + quote_input(name) + " is installed from a local directory" +
                  (how == "editable" ? " (editable)" : "") +
                  ": not a package envpin pins (envpin's containers mount the project at its workdir)");
      continue;
    }
    if (how == "system") {
      note(d, from + ": " + quote_input(name + " " + version) +
                  " is the system's (outside the venv, seen through --system-site-packages): left out; list the "
                  "OS packages the project needs under apt:");
      continue;
    }
    if (how == "url") {
      note(d, from + ": " + quote_input(name + " " + version) +
                  " came from a URL or VCS: left out (envpin pins from package indexes)");
      continue;
    }
    if (!manifest::is_pep440_version(version)) {
      note(d, from + ": " + quote_input(name + " " + version) + " has a version pip cannot pin: left out");
      continue;
    }
    add_package(d, name + "==" + version, from);
  }
}

}  // namespace envpin::init

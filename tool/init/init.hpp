// SPDX-License-Identifier: Apache-2.0
// `envpin init`: an envpin.yaml from what a project already has. Each reader translates one
// kind of input into the same draft (every value with where it came from); what cannot be
// mapped is a note, left out, never guessed. The draft is written as a commented manifest that
// `envpin validate` accepts.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace envpin::init {

// One inferred value and where it came from ("environment.yml:7 (pytorch=2.1.0)").
struct Value {
  std::string value;
  std::string from;
};

struct Draft {
  std::optional<Value> python;       // "3.11"
  std::vector<Value> packages;       // PEP 508 text, one per distribution
  std::optional<Value> index;        // --index-url
  std::vector<Value> extra_index;    // --extra-index-url, the torch variant's index
  std::optional<Value> cuda;         // "12.1"
  std::optional<Value> cudnn;        // "true"
  std::optional<Value> flavor;       // "devel"
  std::optional<Value> os;           // "ubuntu22.04"
  std::optional<Value> base;         // an image envpin does not know
  std::vector<Value> apt;            // Debian packages for conda's system packages
  std::vector<std::string> notes;    // what was left out, and why
  std::vector<std::string> sources;  // the files read, for the header
  std::string prefer;                // a file name whose packages win a conflict ("" : none)
};

// Readers. Each throws diag::Error (file:line:col) for input it cannot parse, and adds what it
// found to `d`. The same package asked for differently by two inputs is an error, unless
// `d.prefer` names the file that wins.
void read_requirements(const std::filesystem::path& file, Draft& d);
void read_conda(const std::filesystem::path& file, Draft& d);
// An existing Dockerfile: its final FROM and apt-get/pip installs. Read after the other inputs: a
// value they set differently stays theirs, the Dockerfile's becomes a note.
void read_dockerfile(const std::filesystem::path& file, Draft& d);
void read_pyproject(const std::filesystem::path& file, Draft& d, const std::vector<std::string>& extras);

// A working Python environment: `python` (an interpreter path) is asked, through the real
// interpreter, for its version and installed distributions (importlib.metadata), which become
// exact pins; a torch built for CUDA (2.4.1+cu124) keeps its variant. pip's own tooling, editable
// installs and distributions from URLs are notes, as pip freeze would set them apart.
void read_python(const std::string& python, Draft& d);
// The interpreter's answer (JSON from the probe script) read into `d`; for read_python and tests.
void read_python_report(const std::string& json, const std::string& python, Draft& d);

// Which reader a file is for, by its name: "requirements", "conda", "pyproject", "dockerfile",
// or "".
std::string kind_of(const std::filesystem::path& file);

// Whether `text` is a file `envpin generate` wrote (its header).
bool written_by_envpin(const std::string& text);

// The files to read in a directory: requirements.txt, environment.yml/.yaml, pyproject.toml,
// Dockerfile/Containerfile (not one envpin generated).
std::vector<std::filesystem::path> inputs_in(const std::filesystem::path& dir);

// The Python version written when no input names one.
inline constexpr const char* kDefaultPython = "3.11";

// After every input is read: of a distribution listed with different markers, keeps the
// alternative whose marker holds in the image (CPython d.python on linux/amd64), or the first
// when that cannot be told; each one left out is a note.
void settle(Draft& d);

// Adds one package, refusing a second, different requirement for the same distribution from
// another place unless `d.prefer` names the file that wins. The same distribution under another
// marker is kept beside it, for settle().
void add_package(Draft& d, const std::string& requirement, const std::string& from);

struct Options {
  std::string name;
  std::vector<std::string> gpus;
  std::optional<std::string> driver;
  std::string gpus_from;  // where gpus and driver came from when not --gpu/--driver ("--probe: ...")
};

// The manifest text: every inferred value with its origin as a YAML comment.
std::string write_manifest(const Draft& d, const Options& o);

}  // namespace envpin::init

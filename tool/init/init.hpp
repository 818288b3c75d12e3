// SPDX-License-Identifier: Apache-2.0
// `envpin init`: an envpin.yaml from what a project already has. Each reader translates one
// kind of input into the same draft (every value with where it came from); what cannot be
// mapped is a note, left out, never guessed. The draft is written as a commented manifest that
// `envpin validate` accepts.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "diag/error.hpp"

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
  // The project directory every input, -r and -c target must stay in (canonical); empty: each
  // input's own directory. `envpin init` sets the directory it writes into.
  std::filesystem::path root;

  // The readers' own state: the files read (resolved paths: each read once), the packages by
  // normalized name (indexes into `packages`, the first `indexed` of them) and the notes, so that
  // merging and noting take constant time whatever the inputs' size.
  struct Reading {
    std::set<std::string> read;
    std::unordered_map<std::string, std::vector<std::size_t>> by_name;
    std::size_t indexed = 0;
    std::unordered_set<std::string> noted;
    std::size_t dropped = 0;              // notes past kMaxNotes
    std::size_t bytes = 0;                // of all the inputs read
    std::unordered_set<std::string> apt;  // the names in `apt`
  } reading;
  // The optional groups the pyproject files offer (PEP 621 extras, Poetry extras and groups, PEP
  // 735 dependency groups): an --extra that names none of them is a mistake.
  std::set<std::string> groups;
  // What envpin refuses in the inputs, each located in its input, in reading order: a run reports
  // them all at once and writes nothing. Past kMaxRefusals, counted.
  std::vector<diag::Error> refusals;
  std::size_t refusals_dropped = 0;
};

// What the readers take from hostile inputs at most: packages, apt packages and indexes, and a
// package's text (the manifest's own caps on a list and a value), nested -r files, files and
// bytes of all inputs together, and notes (the rest are counted in one last note).
inline constexpr std::size_t kMaxPackages = 10000;
inline constexpr std::size_t kMaxPackageBytes = 4096;
inline constexpr std::size_t kMaxIncludeDepth = 32;
inline constexpr std::size_t kMaxInputFiles = 1000;
inline constexpr std::size_t kMaxInputBytes = 16 << 20;
inline constexpr std::size_t kMaxNotes = 1000;
inline constexpr std::size_t kMaxRefusals = 20;

// Records a refusal (redacted: it quotes the inputs). One without a location takes `at` (the line
// being read), or else the input line its message cites first as an origin ("requirements.txt:12").
void refuse(Draft& d, const diag::Error& e, const std::optional<diag::Location>& at = std::nullopt);
// Runs `read`, recording what it throws as a refusal: reading goes on with the next line or input.
template <class Read>
void collecting(Draft& d, const std::optional<diag::Location>& at, Read&& read) {
  try {
    read();
  } catch (const diag::Error& e) {
    refuse(d, e, at);
  }
}
// Where an origin ("environment.yml:13 (cudatoolkit=11.1)") is: the input read under that name,
// at that line; nullopt when it names none.
std::optional<diag::Location> origin_location(const Draft& d, const std::string& from);

// Readers. Each records a refusal (file:line:col) for each line it cannot take and goes on, throws
// diag::Error for a file it cannot read or parse at all, and adds what it found to `d`. The same package asked for
// differently by two inputs is an error, unless `d.prefer` names the file that wins. An input (or an -r/-c target) is
// resolved with its links followed before anything is read, and refused when it leads outside the project directory
// (d.root), to a secret file (secrets::is_secret_path, by its name or where it leads) or to
// anything but a regular file of at most 1 MiB; each file is read once; -r nests at most
// kMaxIncludeDepth files deep. A credential in an input reaches no value, note or error:
// index URLs lose theirs (a note says so), the rest is shown as "<credential>".
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

// --source system: each package Debian 12 ships as python3-* at a version its requirement allows
// becomes that apt package (the rest stay pip packages, each with the reason), on Debian 12's own
// Python 3.11 (os debian12). The caller writes python.source: system.
void to_system_python(Draft& d);
// How many of the draft's packages Debian 12 ships as python3-* (for init's suggestion).
std::size_t debian_python_count(const Draft& d);

// The Python version written when no input names one.
inline constexpr const char* kDefaultPython = "3.11";

// After every input is read: of a distribution listed with different markers, keeps the
// alternative whose marker holds in the image (CPython d.python on linux/amd64), or the first
// when that cannot be told; each one left out is a note.
void settle(Draft& d);

// Adds one package, refusing a second, different requirement for the same distribution from
// another place unless `d.prefer` names the file that wins. The same distribution under another
// marker is kept beside it, for settle(). A requirement envpin cannot read (a URL, a marker that
// is not PEP 508's, a credential in it) is a note. Throws diag::Error at `at` for a conflict and
// for the package past kMaxPackages.
void add_package(Draft& d, const std::string& requirement, const std::string& from,
                 const std::optional<diag::Location>& at = std::nullopt);

struct Options {
  std::string name;
  std::vector<std::string> gpus;
  std::optional<std::string> driver;
  std::string gpus_from;       // where gpus and driver came from when not --gpu/--driver ("--probe: ...")
  bool system_python = false;  // --source system: python.source: system
  // envpin.yaml's JSON Schema, relative to the manifest (generate writes it there): a
  // "# yaml-language-server: $schema=" first line, so editors complete and validate the draft.
  // Never an absolute path: the manifest is committed, and another machine has another one.
  // Empty: no such line.
  std::string schema;
};

// The manifest text: every inferred value with its origin as a YAML comment.
std::string write_manifest(const Draft& d, const Options& o);

}  // namespace envpin::init
